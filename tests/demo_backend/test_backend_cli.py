"""``python -m demo_backend`` serves the app and prints its URL."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from hermes_desk.testing.servers import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_module_entry_point_serves_health() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "demo_backend", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = f"http://127.0.0.1:{port}"
        assert url in line
        with httpx.Client(base_url=url, timeout=5) as http:
            for _ in range(500):
                try:
                    response = http.get("/health")
                    break
                except httpx.ConnectError:
                    if proc.poll() is not None:
                        pytest.fail(f"backend exited: {proc.stderr.read() if proc.stderr else ''}")
                    time.sleep(0.02)
            else:
                pytest.fail("backend never answered")
            assert response.json() == {"status": "ok"}
            assert http.get("/orders/202405201234").json()["user_id"] == "u1001"
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_help_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "demo_backend", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--port" in out.stdout
