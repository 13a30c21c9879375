from __future__ import annotations

import sys
from collections.abc import AsyncIterator

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
async def _close_litellm_clients(anyio_backend: str) -> AsyncIterator[None]:
    """LiteLLM caches HTTP clients per event loop; each test has its own loop: close them."""
    yield
    if "litellm" in sys.modules:
        from hermes_desk.llm.litellm_model import aclose_litellm_clients

        await aclose_litellm_clients()
