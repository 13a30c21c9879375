"""Start the demo business backend beside the service or the demo when it is not running."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlparse

import httpx

__all__ = ["demo_backend_running"]


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def demo_backend_running(url: str, *, quiet: bool = False) -> Iterator[str]:
    """Yield ``url`` with a demo backend answering there, starting one as a child if needed."""
    if _healthy(url):
        yield url
        return
    parsed = urlparse(url)
    host = parsed.hostname or "127.0.0.1"
    port = parsed.port or 8100
    command = [sys.executable, "-m", "demo_backend", "--host", host, "--port", str(port)]
    output = subprocess.DEVNULL if quiet else None
    child = subprocess.Popen(command, stdout=output, stderr=output, env=os.environ.copy())
    try:
        deadline = time.monotonic() + 20
        while not _healthy(url):
            if child.poll() is not None:
                raise RuntimeError(f"the demo backend exited with code {child.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the demo backend did not answer on {url}")
            time.sleep(0.1)
        yield url
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
