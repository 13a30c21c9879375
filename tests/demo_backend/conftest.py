"""Fixtures: a fresh demo backend per test, served over real HTTP on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from demo_backend import BackendState, create_app
from hermes_desk.testing.servers import serve_in_thread


@pytest.fixture
def state() -> BackendState:
    return BackendState(seed=7)


@pytest.fixture
def base_url(state: BackendState) -> Iterator[str]:
    with serve_in_thread(create_app(state)) as url:
        yield url


@pytest.fixture
def client(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=10.0) as http:
        yield http
