"""The whole service over real HTTP: the demo backend and Hermes Desk, each on a loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from demo_backend import create_app as create_backend
from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread


@dataclass
class Service:
    url: str
    backend_url: str
    client: httpx.Client
    settings: Settings

    def open_session(self, user: str, **extra: Any) -> dict[str, Any]:
        response = self.client.post("/v1/sessions", json={"user_id": user, **extra})
        assert response.status_code in (200, 201), response.text
        return dict(response.json())

    def turn(self, session_id: str, user: str, text: str) -> dict[str, Any]:
        response = self.client.post(
            f"/v1/sessions/{session_id}/turns", json={"user_id": user, "text": text}
        )
        assert response.status_code == 200, response.text
        return dict(response.json())

    def close(self, session_id: str, user: str) -> dict[str, Any]:
        response = self.client.delete(f"/v1/sessions/{session_id}", params={"user_id": user})
        assert response.status_code == 200, response.text
        return dict(response.json())


@pytest.fixture(autouse=True, scope="session")
def _trained_pack_model(pack_model_dir: Path) -> Path:
    """Servers in these tests load the pack's model; it is trained before any of them starts."""
    return pack_model_dir


@pytest.fixture(scope="module")
def backend_url() -> Iterator[str]:
    with serve_in_thread(create_backend()) as url:
        yield url


def make_settings(data_dir: Path, backend_url: str, **service: Any) -> Settings:
    return Settings(
        service={"data_dir": data_dir, "backend_url": backend_url, **service},
        workflows={"watchdog_interval_s": 3600},
    )


@pytest.fixture
def service(tmp_path: Path, backend_url: str) -> Iterator[Service]:
    httpx.delete(f"{backend_url}/_faults")
    settings = make_settings(tmp_path, backend_url)
    with (
        serve_in_thread(create_app(settings), startup_timeout_s=60) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        yield Service(url, backend_url, client, settings)
    httpx.delete(f"{backend_url}/_faults")
