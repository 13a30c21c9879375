"""Run a real ASGI app on 127.0.0.1 in a background thread, for tests and benchmarks."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["free_port", "serve_in_thread"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve_in_thread(
    app: Any, *, port: int | None = None, startup_timeout_s: float | None = None
) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port; yields its base URL.

    By default it waits for the start-up as long as the server's thread lives (a failed
    start-up ends it), so a busy machine is never mistaken for a broken server; the test
    runner's own time limit bounds a start-up that hangs. ``startup_timeout_s`` sets a limit.
    """
    import uvicorn

    chosen = port or free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=chosen, log_level="warning", lifespan="on", access_log=False
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{chosen}", daemon=True)
    thread.start()
    deadline = None if startup_timeout_s is None else time.monotonic() + startup_timeout_s
    while not server.started:
        if not thread.is_alive() or (deadline is not None and time.monotonic() > deadline):
            raise RuntimeError(f"server on port {chosen} did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{chosen}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
