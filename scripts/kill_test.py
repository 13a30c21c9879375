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

A kill waits until the service has done some work since it started, so a slow machine slows
the run down but cannot stop it; a run that sees no work done for ``--stall-s`` seconds stops
and reports the workflows left, with their steps, instead of hanging.

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
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from kill_harness import (
    DEFAULT_SERVICE_CMD,
    LATENCY_MS,
    ORDERS,
    OWNERS,
    PHONES,
    TERMINAL,
    Backend,
    Service,
    call,
    free_port,
    killer,
    stalled,
    writes_executed,
)

#: the steps that wait for the customer, and the slot each asks for
ASKS = {"verify_code": "sms_code"}
APPROVAL = "approval:"
#: step statuses that end a step
STEP_ENDED = {"succeeded", "failed", "timeout", "cancelled", "rejected", "skipped"}


class Progress:
    """The newest view of each workflow, and how far each has come: the service advanced when a
    workflow ends more steps than it ever had (a restart may show a step in flight again, never
    a finished step undone)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.views: dict[str, dict[str, Any]] = {}
        self.best: dict[str, int] = {}

    def saw(self, view: dict[str, Any]) -> dict[str, Any]:
        self.views[view["id"]] = view
        done = sum(s["status"] in STEP_ENDED for s in view["steps"]) + (view["status"] in TERMINAL)
        if done > self.best.get(view["id"], -1):
            self.best[view["id"]] = done
            self.service.advanced()
        return view


def _took_input(view: dict[str, Any], after_seq: int) -> bool:
    """Whether ``view`` shows an input saved after snapshot ``after_seq``."""
    return any(h["reason"] == "input" and h["seq"] > after_seq for h in view["snapshots"])


async def run_one(
    kind: str, key: str, service: Service, backend: str, client: httpx.AsyncClient,
    phone_locks: dict[str, asyncio.Lock], results: dict[str, dict[str, Any]], seen: Progress,
) -> None:  # fmt: skip
    lock = phone_locks[key] if kind == "password_reset" else asyncio.Lock()
    async with lock:  # one reset per phone at a time: the outbox keeps the latest code only
        inputs = {"phone": key} if kind == "password_reset" else {"order_id": key}
        user = OWNERS[key]
        start = {"name": kind, "inputs": inputs, "user_id": user, "wait_s": 0}
        view = seen.saw(await call(service, client, "POST", "/v1/workflows", json=start))
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
                view = seen.saw(await call(service, client, "GET", f"/v1/workflows/{workflow_id}",
                                           params={"user_id": user}))  # fmt: skip
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
                    looked_at = view["seq"]
                    view = seen.saw(await call(
                        service, client, "POST", f"/v1/workflows/{workflow_id}/input",
                        json={"user_id": user, "slots": {slot: value}, "wait_s": 0},
                    ))  # fmt: skip
                    # Fed once taken (saved as an "input" snapshot). A workflow not at its wait
                    # yet (a restarted worker still resuming it) answers with its view and takes
                    # nothing: it is fed again when it waits. A round taken and then waited for
                    # again would be an acknowledged input lost: it is not fed twice, and the
                    # run stalls and says so.
                    if _took_input(view, looked_at):
                        fed = (step["name"], step["input_round"])
                    continue
            await asyncio.sleep(0.2)
            view = seen.saw(await call(service, client, "GET", f"/v1/workflows/{workflow_id}",
                                       params={"user_id": user}))  # fmt: skip
        results[workflow_id] = view


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir or tempfile.mkdtemp(prefix="hermes-kill-"))
    work.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240
    backend = Backend(work)
    backend_url = backend.url
    service = Service(args.service_cmd, free_port(), work, backend_url, work / "service.log")
    os.environ["HERMES_SERVICE__BACKEND_URL"] = backend_url
    os.environ["HERMES_SERVICE__DATA_DIR"] = str(work / "data")
    try:
        async with httpx.AsyncClient() as client:
            await backend.start(client, LATENCY_MS)
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
            kill_task = asyncio.create_task(
                killer(service, stop, random.Random(args.seed), args.kill_min, args.kill_max)
            )
            started = time.monotonic()
            seen = Progress(service)
            everything = asyncio.ensure_future(asyncio.gather(*(
                run_one(k, key, service, backend_url, client, locks, results, seen)
                for k, key in jobs
            )))  # fmt: skip
            watch = asyncio.create_task(stalled(service, args.stall_s))
            racing: set[asyncio.Future[Any]] = {everything, watch}
            await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
            stalled_out = watch.done()
            for task in (everything, watch):
                task.cancel()
            await asyncio.gather(everything, watch, return_exceptions=True)
            elapsed = time.monotonic() - started
            stop.set()
            kills = await kill_task
            log = await backend.log(client)
    finally:
        service.kill()
        backend.stop()

    executed = writes_executed(log)
    twice = {f"{k[0]}:{k[1]}": n for k, n in executed.items() if n > 1}
    outcomes = collections.Counter(e["outcome"] for e in log)
    statuses = collections.Counter((v["name"], v["status"]) for v in results.values())
    stuck = [i for i, v in results.items() if v["status"] not in TERMINAL]
    left = {
        i: {"name": v["name"], "status": v["status"], "waiting_for": v.get("waiting_for"),
            "steps": {s["name"]: s["status"] for s in v["steps"]}}
        for i, v in seen.views.items() if i not in results
    }  # fmt: skip
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
        "stalled": stalled_out,
        "left_unfinished": left,
        "passed": not twice and not stuck and not stalled_out and len(results) == args.n,
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
        "--stall-s", type=float, default=240.0,
        help="stop and report when no work is seen done for this long",
    )  # fmt: skip
    parser.add_argument(
        "--service-cmd",
        default=DEFAULT_SERVICE_CMD,
    )
    args = parser.parse_args()
    report = asyncio.run(main_async(args))
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
