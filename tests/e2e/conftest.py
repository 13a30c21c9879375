"""The whole service over real HTTP: the demo backend and Hermes Desk, each on a loopback port."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from demo_backend import BackendState, business_today
from demo_backend import create_app as create_backend
from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import free_port, serve_in_thread


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
    with serve_in_thread(create_backend(BackendState(today=business_today()))) as url:
        yield url


def make_settings(data_dir: Path, backend_url: str, **service: Any) -> Settings:
    return Settings(
        service={"data_dir": data_dir, "backend_url": backend_url, **service},
        workflows={"watchdog_interval_s": 3600},
    )


@contextlib.contextmanager
def serve_service(data_dir: Path, backend_url: str) -> Iterator[Service]:
    """Hermes Desk on a loopback port over ``backend_url``, with a client for it."""
    settings = make_settings(data_dir, backend_url)
    with (
        serve_in_thread(create_app(settings)) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        yield Service(url, backend_url, client, settings)


@pytest.fixture
def service(tmp_path: Path, backend_url: str) -> Iterator[Service]:
    httpx.delete(f"{backend_url}/_faults")
    with serve_service(tmp_path, backend_url) as served:
        yield served
    httpx.delete(f"{backend_url}/_faults")


class ServeProcess:
    """``python -m hermes_desk serve`` as a child process on a data folder: start, SIGKILL, start
    again on the same data (the embedded defaults: SQLite sessions, snapshots and memory)."""

    def __init__(self, data_dir: Path, backend_url: str, model_dir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = data_dir.parent / f"serve-{self.port}.log"
        self.env = {
            **os.environ,
            "HERMES_SERVICE__DATA_DIR": str(data_dir),
            "HERMES_SERVICE__BACKEND_URL": backend_url,
            "HERMES_NLU__MODEL_DIR": str(model_dir),
            "HERMES_WORKFLOWS__WATCHDOG_INTERVAL_S": "3600",
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start ``serve`` and wait while it lives (a busy machine is no broken service; the
        test's own time limit bounds a start-up that hangs)."""
        argv = [sys.executable, "-m", "hermes_desk", "serve", "--port", str(self.port)]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=out, env=self.env)
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited: {self.log.read_text(errors='replace')[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            time.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: no shutdown handler runs, nothing is flushed on the way out."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)


@pytest.fixture
def serve_process(tmp_path: Path, backend_url: str, pack_model_dir: Path) -> Iterator[ServeProcess]:
    """A ``serve`` child process on ``tmp_path / "data"`` (not started yet); killed at the end."""
    httpx.delete(f"{backend_url}/_faults")
    served = ServeProcess(tmp_path / "data", backend_url, pack_model_dir)
    try:
        yield served
    finally:
        served.kill()
