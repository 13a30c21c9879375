"""The demo business backend beside the service or the demo, and clean stops for both.

:func:`demo_backend_running` looks at the backend's port first: free → the backend is started
as a child and stopped when the block ends (however it ends); the demo backend already there →
reused only when the caller allows it (``serve --reuse-backend``), with its URL reported;
anything else there → :class:`BackendPortError` naming the port. :func:`stop_on_signals` turns
SIGTERM (what systemd and container runtimes send) into the same unwinding as Ctrl-C, so the
child never outlives the command.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, Literal
from urllib.parse import urlparse

import httpx

__all__ = [
    "BackendPortError",
    "StopRequested",
    "demo_backend_running",
    "probe_backend",
    "stop_on_signals",
]

#: the title the demo backend's OpenAPI document carries (how it is told from other servers)
DEMO_BACKEND_TITLE = "Hermes Desk demo backend"
_STARTUP_S = 20.0
_STOP_S = 10.0
_logger = logging.getLogger("hermes_desk.cli")


class BackendPortError(RuntimeError):
    """The backend's port is taken: by something else, or by a demo backend not to be reused."""


class StopRequested(BaseException):  # a signal, like KeyboardInterrupt
    """SIGTERM or SIGINT arrived; raised so ``finally`` blocks run on the way out."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT raise :class:`StopRequested` (main thread only).

    uvicorn handles both itself while it serves (a graceful shutdown) and raises the signal again
    once it has stopped, which lands here too.
    """

    def stop(signum: int, frame: FrameType | None) -> None:
        raise StopRequested(signum)

    with _signals_handled_by(stop):
        yield


@contextmanager
def _signals_handled_by(handler: Callable[[int, FrameType | None], Any] | int) -> Iterator[None]:
    """SIGTERM and SIGINT go to ``handler`` within the block (only the main thread may set
    handlers; elsewhere the block runs unchanged)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler_before in previous.items():
            signal.signal(sig, handler_before)


def _address(url: str) -> tuple[str, int]:
    parsed = urlparse(url)
    return parsed.hostname or "127.0.0.1", parsed.port or (443 if parsed.scheme == "https" else 80)


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def _is_demo_backend(url: str) -> bool:
    try:
        response = httpx.get(f"{url}/openapi.json", timeout=2.0)
        ok = response.status_code == 200
        title = response.json().get("info", {}).get("title") if ok else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return False
    return bool(title == DEMO_BACKEND_TITLE)


def probe_backend(url: str) -> Literal["free", "demo", "other"]:
    """What answers at ``url``: nothing, the demo backend, or something else."""
    host, port = _address(url)
    if not _listening(host, port):
        return "free"
    return "demo" if _is_demo_backend(url.rstrip("/")) else "other"


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    """Linux: the child gets SIGTERM if the command dies without unwinding (kill -9)."""
    import ctypes

    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


@contextmanager
def demo_backend_running(url: str, *, quiet: bool = False, reuse: bool = True) -> Iterator[str]:
    """Yield ``url`` with a demo backend answering there, starting one as a child if needed.

    Args:
        url: where the pack's tools expect the backend.
        quiet: hide the child's output.
        reuse: a demo backend already answering there is used (reported in the log) instead of
            refused; it keeps whatever state it has.

    Raises:
        BackendPortError: the port is taken by something that is not the demo backend, or by a
            demo backend while ``reuse`` is false.
        RuntimeError: the child exited or did not answer in time.
    """
    url = url.rstrip("/")
    host, port = _address(url)
    found = probe_backend(url)
    if found == "other":
        raise BackendPortError(
            f"port {port} ({url}) is taken by something that is not the demo backend; "
            "stop it or point service.backend_url at a free port"
        )
    if found == "demo":
        if not reuse:
            raise BackendPortError(
                f"a demo backend is already answering on {url} (port {port}); stop it, or pass "
                "--reuse-backend to use it with the state it has"
            )
        _logger.info("reusing the demo backend already answering on %s", url)
        yield url
        return
    command = [sys.executable, "-m", "demo_backend", "--host", host, "--port", str(port)]
    output = subprocess.DEVNULL if quiet else None
    child = subprocess.Popen(
        command,
        stdout=output,
        stderr=output,
        env=os.environ.copy(),
        preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
    )
    try:
        deadline = time.monotonic() + _STARTUP_S
        while not _healthy(url):
            if child.poll() is not None:
                raise RuntimeError(f"the demo backend exited with code {child.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the demo backend did not answer on {url}")
            time.sleep(0.1)
        yield url
    finally:
        _stop(child)


def _stop(child: subprocess.Popen[bytes]) -> None:
    """Terminate and reap the child (killed if it takes too long), ignoring further signals
    meanwhile so a second Ctrl-C cannot leave it behind."""
    if child.poll() is not None:
        return
    with _signals_handled_by(signal.SIG_IGN):
        child.terminate()
        try:
            child.wait(timeout=_STOP_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
