"""What the kill tests share: the demo backend and the service as child processes, requests
retried across kills, the demo data, and the backend's log of executed writes.

Used by ``scripts/kill_test.py`` (workflows) and ``scripts/session_kill_test.py`` (sessions).
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
PHONES = [
    "13800138000", "13912345678", "15012348888", "18611112222", "13688889999", "17700001111",
    "18923456789", "15898765432", "13345678901", "19912340000", "14787654321", "16655556666",
]  # fmt: skip
ORDERS = [
    "202405201234", "202405181001", "202405150456", "202405220318", "202405100789",
    "202405231122", "202405120345", "202405191888", "202405160123", "202405140246",
]  # fmt: skip
#: latency on every backend step, so kills land mid-step
LATENCY_MS = {
    "check_phone": 150, "send_sms": 250, "verify_sms": 150, "reset_password": 250,
    "get_order": 150, "create_return": 300, "issue_refund": 300, "create_ticket": 200,
}  # fmt: skip
WRITES = {"send_sms", "reset_password", "update_password", "create_return", "issue_refund",
          "create_ticket", "add_ticket_note"}  # fmt: skip
DATA: dict[str, Any] = json.loads((ROOT / "demo_backend" / "data.json").read_text(encoding="utf-8"))
OWNERS = {u["phone"]: u["user_id"] for u in DATA["users"]} | {
    o["order_id"]: o["user_id"] for o in DATA["orders"]
}
#: the workflow statuses that end it
TERMINAL = {"completed", "failed", "escalated"}
DEFAULT_SERVICE_CMD = f"{sys.executable} -m hermes_desk serve --port {{port}}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_up(
    url: str, proc: subprocess.Popen[bytes], path: str = "/healthz", timeout_s: float = 120
) -> None:
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
            try:
                if (await client.get(url + path, timeout=1)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


class Service:
    """The service as a child process: started, SIGKILLed and started again on the same data.
    ``up`` is set while it answers; ``starts`` counts its starts; ``progress`` counts the work
    the clients saw done (:meth:`advanced`), and ``last_progress`` is when they last did."""

    def __init__(self, cmd: str, port: int, workdir: Path, backend: str, log: Path) -> None:
        self.argv = shlex.split(cmd.format(port=port, workdir=workdir, backend=backend))
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.up = asyncio.Event()
        self.progress = 0
        self.last_progress = time.monotonic()
        self.moved = asyncio.Event()

    def advanced(self) -> None:
        """A client saw durable work done: a step finished, a turn answered."""
        self.progress += 1
        self.last_progress = time.monotonic()
        self.moved.set()

    async def start(self) -> None:
        with self.log.open("ab") as out:  # the environment carries the backend URL and data dir
            self.proc = subprocess.Popen(self.argv, stdout=out, stderr=out, cwd=ROOT)  # noqa: ASYNC220
        await wait_up(self.url, self.proc)
        self.starts += 1
        self.up.set()

    def kill(self) -> None:
        self.up.clear()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()


class Backend:
    """The demo backend (``python -m demo_backend``) as a child process, with step latency."""

    def __init__(self, workdir: Path, *, seed: int = 7) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log: IO[bytes] = (workdir / "backend.log").open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "demo_backend", "--port", str(self.port), "--seed", str(seed)],
            stdout=self._log, stderr=self._log, cwd=ROOT,
        )  # fmt: skip

    async def start(self, client: httpx.AsyncClient, latency_ms: Mapping[str, int]) -> None:
        await wait_up(self.url, self.proc, "/health")
        for name, ms in latency_ms.items():
            await client.put(f"{self.url}/_faults/{name}", json={"latency_ms": ms})

    async def log(self, client: httpx.AsyncClient) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = (await client.get(f"{self.url}/_log")).json()["entries"]
        return entries

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait()
        self._log.close()


async def call(
    service: Service, client: httpx.AsyncClient, method: str, path: str,
    allow: frozenset[int] | set[int] = frozenset(), **kw: Any,
) -> dict[str, Any]:  # fmt: skip
    """One request to the service, retried across kills and restarts; an ``allow``ed status
    answers its body (a proposal decided meanwhile, say)."""
    while True:
        await service.up.wait()
        try:
            response = await client.request(method, service.url + path, timeout=30, **kw)
        except httpx.HTTPError:
            await asyncio.sleep(0.2)
            continue
        if response.status_code >= 500:
            await asyncio.sleep(0.2)
            continue
        if response.status_code in allow:
            return {"status_code": response.status_code, **response.json()}
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body


async def killer(
    service: Service, stop: asyncio.Event, rng: random.Random, kill_min: float, kill_max: float
) -> list[float]:
    """SIGKILL the service every ``kill_min``..``kill_max`` seconds and start it again, until
    ``stop``; the times of the kills.

    A kill waits until the service has done some work since it started (``progress``): on a
    slow machine a life shorter than a step would otherwise kill every step before its end
    and the run would never finish. The kills still land at random points of the work.
    """
    kills: list[float] = []
    while not stop.is_set():
        service.moved.clear()
        try:
            await asyncio.wait_for(stop.wait(), rng.uniform(kill_min, kill_max))
            break
        except TimeoutError:
            pass
        waits = {asyncio.ensure_future(stop.wait()), asyncio.ensure_future(service.moved.wait())}
        _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for wait in pending:
            wait.cancel()
        if stop.is_set():
            break
        service.kill()
        kills.append(time.monotonic())
        await service.start()
    return kills


async def stalled(service: Service, limit_s: float) -> None:
    """Return once the clients have seen no work done for ``limit_s`` seconds."""
    while time.monotonic() - service.last_progress < limit_s:  # noqa: ASYNC110 - a moving deadline
        await asyncio.sleep(1)


def writes_executed(log: Iterable[Mapping[str, Any]]) -> collections.Counter[tuple[str, str]]:
    """How many times each write (endpoint, idempotency key) executed, from the backend's log."""
    return collections.Counter(
        (e["endpoint"], e["idempotency_key"])
        for e in log
        if e["outcome"] == "executed" and e["idempotency_key"] and e["endpoint"] in WRITES
    )
