"""Kill test for workflows (W3): SIGKILL the service at random points, restart it, finish.

    .venv/bin/python scripts/kill_test.py -n 100 [--service-cmd "hermes-desk serve --port {port}"]

It starts the demo backend (``python -m demo_backend``) with latency on every step so kills land
mid-step, and the Hermes Desk service itself (``python -m hermes_desk serve``, data directory —
SQLite snapshots included — in the work folder; ``--service-cmd`` switches to another command,
``{port}``, ``{workdir}`` and ``{backend}`` are filled in). It begins N workflows (half password
reset, half return/refund), plays the customer (reads the SMS code from the backend's outbox and
sends it back) and the agent (approves each write the workflow proposes: the return, the refund,
the temporary password), and kills the service with SIGKILL every ``--kill-min``..``--kill-max``
seconds, restarting it each time.

Pass: every workflow ends completed, failed or escalated (none left running), and the backend's
request log shows no write executed twice for one idempotency key.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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
LATENCY_MS = {
    "check_phone": 150, "send_sms": 250, "verify_sms": 150, "reset_password": 250,
    "get_order": 150, "create_return": 300, "issue_refund": 300, "create_ticket": 200,
}  # fmt: skip
WRITES = {"send_sms", "reset_password", "update_password", "create_return", "issue_refund",
          "create_ticket", "add_ticket_note"}  # fmt: skip
TERMINAL = {"completed", "failed", "escalated"}
#: the steps that wait for the customer, and the slot each asks for
ASKS = {"verify_code": "sms_code"}
APPROVAL = "approval:"
_DATA = json.loads((ROOT / "demo_backend" / "data.json").read_text(encoding="utf-8"))
OWNERS = {u["phone"]: u["user_id"] for u in _DATA["users"]} | {
    o["order_id"]: o["user_id"] for o in _DATA["orders"]
}


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_up(
    url: str, proc: subprocess.Popen[bytes], path: str = "/healthz", timeout_s: float = 60
) -> None:
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
            try:
                if (await client.get(url + path, timeout=1)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


class Service:
    def __init__(self, cmd: str, port: int, workdir: Path, backend: str, log: Path) -> None:
        self.argv = shlex.split(cmd.format(port=port, workdir=workdir, backend=backend))
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.up = asyncio.Event()

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


async def run_one(
    kind: str, key: str, service: Service, backend: str, client: httpx.AsyncClient,
    phone_locks: dict[str, asyncio.Lock], results: dict[str, dict[str, Any]],
) -> None:  # fmt: skip
    lock = phone_locks[key] if kind == "password_reset" else asyncio.Lock()
    async with lock:  # one reset per phone at a time: the outbox keeps the latest code only
        inputs = {"phone": key} if kind == "password_reset" else {"order_id": key}
        user = OWNERS[key]
        start = {"name": kind, "inputs": inputs, "user_id": user, "wait_s": 0}
        view = await call(service, client, "POST", "/v1/workflows", json=start)
        workflow_id = view["id"]
        fed: tuple[str, int] | None = None
        while view["status"] not in TERMINAL:
            if view["status"] == "waiting_input" and (view["waiting_for"] or "").startswith(
                APPROVAL
            ):
                # The agent approves the write the workflow waits on (proposed once per wait).
                proposal = await call(
                    service, client, "GET", f"/v1/workflows/{workflow_id}/approval",
                    params={"user_id": user}, allow={404, 409},
                )  # fmt: skip
                if proposal.get("status") == "proposed":
                    await call(
                        service, client, "POST", f"/v1/proposals/{proposal['id']}/approve",
                        json={"user_id": user, "agent_id": "kill-test"}, allow={404, 409},
                    )  # fmt: skip
                view = await call(service, client, "GET", f"/v1/workflows/{workflow_id}",
                                  params={"user_id": user})  # fmt: skip
                await asyncio.sleep(0.05)
                continue
            asking = [
                s for s in view["steps"] if s["name"] in ASKS and s["status"] == "waiting_input"
            ]
            if view["status"] == "waiting_input" and asking:
                step = asking[0]
                if (step["name"], step["input_round"]) != fed:
                    slot = ASKS[step["name"]]
                    value = (await client.get(f"{backend}/sms/outbox/{key}")).json()["code"]
                    view = await call(
                        service, client, "POST", f"/v1/workflows/{workflow_id}/input",
                        json={"user_id": user, "slots": {slot: value}, "wait_s": 0},
                    )  # fmt: skip
                    fed = (step["name"], step["input_round"])
                    continue
            await asyncio.sleep(0.2)
            view = await call(service, client, "GET", f"/v1/workflows/{workflow_id}",
                              params={"user_id": user})  # fmt: skip
        results[workflow_id] = view


async def killer(
    service: Service, stop: asyncio.Event, args: argparse.Namespace, client: httpx.AsyncClient,
    backend: str,
) -> list[float]:  # fmt: skip
    rng = random.Random(args.seed)
    kills: list[float] = []
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), rng.uniform(args.kill_min, args.kill_max))
            break
        except TimeoutError:
            pass
        service.kill()
        kills.append(time.monotonic())
        await service.start()
    return kills


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir or tempfile.mkdtemp(prefix="hermes-kill-"))
    work.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240
    backend_port, service_port = free_port(), free_port()
    backend_url = f"http://127.0.0.1:{backend_port}"
    backend_log = (work / "backend.log").open("ab")
    backend = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, "-m", "demo_backend", "--port", str(backend_port), "--seed", "7"],
        stdout=backend_log, stderr=backend_log, cwd=ROOT,
    )  # fmt: skip
    service = Service(args.service_cmd, service_port, work, backend_url,
                      work / "service.log")  # fmt: skip
    os.environ["HERMES_SERVICE__BACKEND_URL"] = backend_url
    os.environ["HERMES_SERVICE__DATA_DIR"] = str(work / "data")
    try:
        await wait_up(backend_url, backend, "/health")
        async with httpx.AsyncClient() as client:
            for name, ms in LATENCY_MS.items():
                await client.put(f"{backend_url}/_faults/{name}", json={"latency_ms": ms})
            await service.start()
            rng = random.Random(args.seed)
            jobs = [
                ("password_reset", PHONES[i % len(PHONES)]) if i % 2 == 0
                else ("return_refund", rng.choice(ORDERS))
                for i in range(args.n)
            ]  # fmt: skip
            locks = {p: asyncio.Lock() for p in PHONES}
            results: dict[str, dict[str, Any]] = {}
            stop = asyncio.Event()
            kill_task = asyncio.create_task(killer(service, stop, args, client, backend_url))
            started = time.monotonic()
            await asyncio.gather(
                *(run_one(k, key, service, backend_url, client, locks, results) for k, key in jobs)
            )
            elapsed = time.monotonic() - started
            stop.set()
            kills = await kill_task
            log = (await client.get(f"{backend_url}/_log")).json()["entries"]
    finally:
        service.kill()
        backend.send_signal(signal.SIGTERM)
        backend.wait()
        backend_log.close()

    executed = collections.Counter(
        (e["endpoint"], e["idempotency_key"])
        for e in log
        if e["outcome"] == "executed" and e["idempotency_key"] and e["endpoint"] in WRITES
    )
    twice = {f"{k[0]}:{k[1]}": n for k, n in executed.items() if n > 1}
    outcomes = collections.Counter(e["outcome"] for e in log)
    statuses = collections.Counter((v["name"], v["status"]) for v in results.values())
    stuck = [i for i, v in results.items() if v["status"] not in TERMINAL]
    step_statuses = collections.Counter(s["status"] for v in results.values() for s in v["steps"])
    verified_by = collections.Counter(
        s["name"] for v in results.values() for s in v["steps"]
        if s["name"] in ASKS and s["status"] == "succeeded"
    )  # fmt: skip
    report = {
        "n": args.n,
        "workflows_finished": len(results),
        "statuses": {f"{k[0]}:{k[1]}": n for k, n in sorted(statuses.items())},
        "step_statuses": dict(step_statuses),
        "password_resets_verified_by": dict(verified_by),
        "kills": len(kills),
        "service_starts": service.starts,
        "elapsed_s": round(elapsed, 1),
        "backend_log": dict(outcomes),
        "writes_executed": sum(executed.values()),
        "writes_executed_twice": twice,
        "stuck": stuck,
        "passed": not twice and not stuck and len(results) == args.n,
        "workdir": str(work),
    }
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kill-min", type=float, default=0.5)
    parser.add_argument("--kill-max", type=float, default=2.5)
    parser.add_argument("--workdir", default=None)
    parser.add_argument(
        "--service-cmd",
        default=f"{sys.executable} -m hermes_desk serve --port {{port}}",
    )
    args = parser.parse_args()
    report = asyncio.run(main_async(args))
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
