"""Fixtures for the tools tests: the demo backend on loopback, cleared between tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from hermes_desk.tools import BackendHttp


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def backend_url() -> Iterator[str]:
    """The demo business backend served on a free loopback port."""
    from demo_backend.app import create_app

    from hermes_desk.testing.servers import serve_in_thread

    with serve_in_thread(create_app()) as url:
        yield url


@pytest.fixture
def backend(backend_url: str) -> Iterator[httpx.Client]:
    """A client for the backend's admin routes; faults and the log are cleared around a test."""
    with httpx.Client(base_url=backend_url, timeout=10) as client:
        client.delete("/_faults")
        client.delete("/_log")
        yield client
        client.delete("/_faults")


@pytest.fixture(params=["aiohttp", "httpx"])
async def client(request: pytest.FixtureRequest) -> AsyncIterator[BackendHttp | httpx.AsyncClient]:
    """The HTTP tools' client: the service's (aiohttp), and a caller's httpx client."""
    if request.param == "aiohttp":
        backend = BackendHttp()
        yield backend
        await backend.aclose()
    else:
        async with httpx.AsyncClient() as http:
            yield http
