"""A real service on a loopback port, with an API key, for the REST contract tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from demo_backend import BackendState, business_today
from demo_backend import create_app as create_backend
from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread

API_KEY = "contract-test-key-0123456789"
OTHER_TENANT_KEY = "another-tenant-key-0123456789"


def contract_settings(**service: Any) -> Settings:
    """The settings of the service under test: keys of two tenants (``acme``, the tests'
    own, and ``globex``)."""
    return Settings(
        service={"api_keys": {API_KEY: "acme", OTHER_TENANT_KEY: "globex"}, **service},
        workflows={"watchdog_interval_s": 3600},
    )


@dataclass
class Api:
    url: str
    settings: Settings
    client: httpx.Client

    def open_session(self, user: str) -> str:
        response = self.client.post("/v1/sessions", json={"user_id": user, "resume": False})
        assert response.status_code == 201, response.text
        return str(response.json()["session_id"])

    def transcript(self, session_id: str, user: str) -> list[dict[str, object]]:
        response = self.client.get(f"/v1/sessions/{session_id}", params={"user_id": user})
        assert response.status_code == 200, response.text
        return list(response.json()["turns"])


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, pack_model_dir: Path) -> Iterator[Api]:
    """Hermes Desk (pack model trained once per run) and the demo backend, both on 127.0.0.1."""
    data_dir = tmp_path_factory.mktemp("api")
    with serve_in_thread(create_backend(BackendState(today=business_today()))) as backend_url:
        settings = contract_settings(data_dir=data_dir, backend_url=backend_url)
        with (
            serve_in_thread(create_app(settings)) as url,
            httpx.Client(base_url=url, headers={"X-API-Key": API_KEY}, timeout=60) as client,
        ):
            yield Api(url, settings, client)


# The session WebSocket tests' service: no API key, its own data folder per test.


@dataclass
class Service:
    url: str
    backend_url: str
    settings: Settings

    def ws_url(self, session_id: str, **query: str) -> str:
        params = httpx.QueryParams(query)
        return f"{self.url.replace('http://', 'ws://')}/v1/sessions/{session_id}/ws?{params}"


@pytest.fixture(scope="module")
def backend_url() -> Iterator[str]:
    with serve_in_thread(create_backend(BackendState(today=business_today()))) as url:
        yield url


@pytest.fixture(scope="session")
def model_dir(pack_model_dir: Path) -> Path:
    return pack_model_dir  # trained once per run, before any server starts


def ws_settings(data_dir: Path, model_dir: Path, backend_url: str, **service: Any) -> Settings:
    return Settings(
        service={"data_dir": data_dir, "backend_url": backend_url, **service},
        nlu={"model_dir": model_dir},
        workflows={"watchdog_interval_s": 3600},
    )


@pytest.fixture
def service(tmp_path: Path, model_dir: Path, backend_url: str) -> Iterator[Service]:
    settings = ws_settings(tmp_path, model_dir, backend_url)
    with serve_in_thread(create_app(settings)) as url:
        yield Service(url, backend_url, settings)


@pytest.fixture
async def client(service: Service) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as http:
        yield http
