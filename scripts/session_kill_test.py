"""Kill test for sessions (spec D1): conversations in flight, SIGKILL at random points, restart.

    .venv/bin/python scripts/session_kill_test.py -n 40 [--kill-min 3 --kill-max 8] [--json]

It starts the demo backend (``python -m demo_backend``, latency on every step) and the service
(``python -m hermes_desk serve`` on the embedded defaults: SQLite sessions, snapshots and
memory in ``<workdir>/data``; ``--service-cmd`` as in ``scripts/kill_test.py``). N simulated
customers hold conversations at once — order look-ups, logistics, complaints, password resets
that wait for the SMS code (read from the backend's outbox), and turns carrying key facts (a
delay, a contact preference, how often they called) — while a simulated agent approves every
proposed write. The service is SIGKILLed every ``--kill-min``..``--kill-max`` seconds and
started again on the same data. A turn whose answer was lost in a kill is looked up in the
transcript before it is sent again, as a client reconnecting would. Every conversation ends with
a close (``DELETE``), which hands the session's short-term key facts to memory.

Pass (one table; exit 1 on any failure):

- every turn answered 200 is in the transcript exactly once, at the index it was answered with;
- each transcript's customer turns are exactly the turns sent, in order (none lost, none extra);
- every key fact extracted from an answered turn is in the customer's memory after the close;
- every password reset is finished by the code the customer sends next (the same workflow, also
  when a restart came in between) and completes once the agent approves;
- no write executed twice for one idempotency key (the backend's request log).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from kill_harness import (
    DATA,
    DEFAULT_SERVICE_CMD,
    LATENCY_MS,
    TERMINAL,
    Backend,
    Service,
    call,
    free_port,
    killer,
    writes_executed,
)

KINDS = ("order", "logistics", "complaint", "password_reset")
CODE = "<sms code>"
NO_CALLS = "请不要给我打电话，有事发短信"
#: how long memory may take to show a closed session's facts (an interrupted close is finished
#: by the service's sweeper when it starts again)
MEMORY_WAIT_S = 30.0


@dataclass
class Customer:
    user: str
    phone: str
    order: str
    delay_days: int
    times_called: int

    def script(self, kind: str) -> list[str]:
        """The customer's side of one conversation; ``CODE`` is the SMS code they received."""
        if kind == "order":
            return [f"帮我查一下订单{self.order}", "那什么时候能到？", NO_CALLS]
        if kind == "logistics":
            return [
                f"订单{self.order}的快递已经超过{self.delay_days}天了还没到，我很着急",
                "请不要再给我发短信了",
            ]
        if kind == "complaint":
            return [
                f"我要投诉订单{self.order}，客服打了{self.times_called}次电话都没人解决，太差劲了",
                NO_CALLS,
            ]
        return [f"我忘记密码了，手机号{self.phone}", CODE, NO_CALLS]


def customers() -> list[Customer]:
    out = []
    for i, user in enumerate(DATA["users"]):
        orders = [o["order_id"] for o in DATA["orders"] if o["user_id"] == user["user_id"]]
        out.append(Customer(user["user_id"], user["phone"], orders[0], 3 + i % 5, 2 + i % 3))
    return out


@dataclass
class Conversation:
    kind: str
    customer: Customer
    session_id: str = ""
    sent: list[str] = field(default_factory=list)  # customer turns stored, in order
    acked: list[tuple[int, str]] = field(default_factory=list)  # (turn_index, text) answered 200
    unacked: int = 0  # stored, but the answer was lost in a kill
    key_facts: list[tuple[str, Any]] = field(default_factory=list)
    reset: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


class Run:
    def __init__(self, service: Service, backend: Backend, client: httpx.AsyncClient) -> None:
        self.service = service
        self.backend = backend
        self.client = client
        self.phone_locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.approved: set[str] = set()

    async def get(self, path: str, **params: Any) -> dict[str, Any]:
        return await call(self.service, self.client, "GET", path, params=params)

    async def turn(self, conv: Conversation, text: str) -> dict[str, Any] | None:
        """Send one customer turn until it is stored; its answer, or None if the answer was lost
        (a kill after the turn was stored: the transcript shows it)."""
        path = f"/v1/sessions/{conv.session_id}/turns"
        body = {"user_id": conv.customer.user, "text": text}
        while True:
            await self.service.up.wait()
            try:
                response = await self.client.post(self.service.url + path, json=body, timeout=60)
            except httpx.HTTPError:
                response = None
            if response is not None and response.status_code == 200:
                answer: dict[str, Any] = response.json()
                conv.sent.append(text)
                conv.acked.append((answer["turn_index"], text))
                self.service.advanced()
                conv.key_facts += [
                    (f["key"], f["value"]) for f in answer["key_facts"] if f["is_key_fact"]
                ]
                return answer
            if response is not None and response.status_code < 500 and response.status_code != 409:
                raise RuntimeError(f"turn answered {response.status_code}: {response.text[:300]}")
            view = await self.get(f"/v1/sessions/{conv.session_id}", user_id=conv.customer.user)
            said = [t["text"] for t in view["turns"] if t["role"] == "user"]
            if len(said) > len(conv.sent) and said[len(conv.sent)] == text:
                conv.sent.append(text)
                conv.unacked += 1
                return None
            await asyncio.sleep(0.2)

    async def approve(self, proposal: dict[str, Any], user: str) -> None:
        if proposal.get("status") != "proposed" or proposal["id"] in self.approved:
            return
        await call(
            self.service, self.client, "POST", f"/v1/proposals/{proposal['id']}/approve",
            json={"user_id": user, "agent_id": "session-kill-test"}, allow={404, 409},
        )  # fmt: skip
        self.approved.add(proposal["id"])

    async def finish_workflow(self, workflow_id: str, user: str) -> dict[str, Any]:
        """Approve what the workflow waits on until it ends (or a minute passes)."""
        deadline = time.monotonic() + 60
        while True:
            view = await self.get(f"/v1/workflows/{workflow_id}", user_id=user)
            waiting = view.get("waiting_for") or ""
            if view["status"] in TERMINAL or time.monotonic() > deadline:
                return view
            if view["status"] == "waiting_input" and waiting.startswith("approval:"):
                proposal = await call(
                    self.service, self.client, "GET", f"/v1/workflows/{workflow_id}/approval",
                    params={"user_id": user}, allow={404, 409},
                )  # fmt: skip
                await self.approve(proposal, user)
            elif view["status"] == "waiting_input":
                return view  # waits for the customer: the code went elsewhere
            await asyncio.sleep(0.2)

    async def converse(self, conv: Conversation, rng: random.Random) -> None:
        user = conv.customer.user
        opened = await call(
            self.service, self.client, "POST", "/v1/sessions",
            json={"user_id": user, "resume": False},
        )  # fmt: skip
        conv.session_id = opened["session_id"]
        lock = self.phone_locks[conv.customer.phone if conv.kind == "password_reset" else ""]
        if conv.kind != "password_reset":
            lock = asyncio.Lock()
        async with lock:  # the outbox keeps a phone's latest code only: one reset per phone
            for text in conv.customer.script(conv.kind):
                await asyncio.sleep(rng.uniform(0.5, 4.0))  # the customer types
                await self._say(conv, text)
        for proposal in (await self.get(f"/v1/sessions/{conv.session_id}/proposals", user_id=user))[
            "proposals"
        ]:
            await self.approve(proposal, user)
        await self._check_transcript(conv)
        await self._close(conv)

    async def _say(self, conv: Conversation, text: str) -> None:
        user = conv.customer.user
        if text == CODE:
            outbox = await self.client.get(f"{self.backend.url}/sms/outbox/{conv.customer.phone}")
            text = f"验证码是{outbox.json()['code']}"
            conv.reset["restarts_while_waiting"] = self.service.starts - conv.reset["starts"]
        starts = self.service.starts
        answer = await self.turn(conv, text)
        workflow = (answer or {}).get("workflow") or {}
        for proposal in (answer or {}).get("proposals", []):
            if not proposal.get("workflow_id"):
                await self.approve(proposal, user)
        if conv.kind != "password_reset":
            return
        if "started" not in conv.reset:
            if answer is None:  # the answer was lost: the session names its workflow
                view = await self.get(f"/v1/sessions/{conv.session_id}", user_id=user)
                workflow = next(w for w in view["workflows"] if w["name"] == "password_reset")
            conv.reset.update(started=workflow["id"], starts=starts)
        elif "fed" not in conv.reset:
            conv.reset["fed"] = workflow.get("id") if answer is not None else None
            final = await self.finish_workflow(conv.reset["started"], user)
            conv.reset["status"] = final["status"]

    async def _check_transcript(self, conv: Conversation) -> None:
        view = await self.get(f"/v1/sessions/{conv.session_id}", user_id=conv.customer.user)
        turns = view["turns"]
        said = [t["text"] for t in turns if t["role"] == "user"]
        if said != conv.sent:
            conv.failures.append(f"customer turns {said} != sent {conv.sent}")
        indices = [i for i, _ in conv.acked]
        if len(set(indices)) != len(indices) or indices != sorted(indices):
            conv.failures.append(f"turn indices not unique and increasing: {indices}")
        for index, text in conv.acked:
            at = turns[index] if index < len(turns) else None
            if at is None or at["role"] != "user" or at["text"] != text or said.count(text) != 1:
                conv.failures.append(f"answered turn {index} ({text!r}) not there exactly once")

    async def _close(self, conv: Conversation) -> None:
        closed = await call(
            self.service, self.client, "DELETE", f"/v1/sessions/{conv.session_id}",
            params={"user_id": conv.customer.user}, allow={404},
        )  # fmt: skip
        if closed.get("status_code") == 404:  # closed by a request whose answer a kill lost
            view = await call(
                self.service, self.client, "GET", f"/v1/sessions/{conv.session_id}",
                params={"user_id": conv.customer.user}, allow={404},
            )  # fmt: skip
            if view.get("status") not in ("closed", None):
                conv.failures.append("close answered 404 but the session is open")


async def memory_misses(run: Run, convs: list[Conversation]) -> tuple[int, list[str]]:
    """Key facts of answered turns not (yet) in their customer's memory, waiting a while."""
    expected: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for conv in convs:
        for key, value in conv.key_facts:
            expected[conv.customer.user][key].add(json.dumps(value))
    total = sum(len(keys) for keys in expected.values())
    deadline = time.monotonic() + MEMORY_WAIT_S
    while True:
        misses = []
        for user, keys in expected.items():
            facts = (await run.get(f"/v1/users/{user}/memories", status="active"))["facts"]
            held = {f["key"]: json.dumps(f["value"]) for f in facts}
            misses += [
                f"{user}:{key}={sorted(values)} (memory: {held.get(key)})"
                for key, values in keys.items()
                if held.get(key) not in values
            ]
        if not misses or time.monotonic() > deadline:
            return total, misses
        await asyncio.sleep(1)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir or tempfile.mkdtemp(prefix="hermes-session-kill-"))
    work.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240
    backend = Backend(work)
    service = Service(args.service_cmd, free_port(), work, backend.url, work / "service.log")
    os.environ["HERMES_SERVICE__BACKEND_URL"] = backend.url
    os.environ["HERMES_SERVICE__DATA_DIR"] = str(work / "data")
    rng = random.Random(args.seed)
    people = customers()
    convs = [Conversation(KINDS[i % len(KINDS)], people[i % len(people)]) for i in range(args.n)]
    try:
        async with httpx.AsyncClient() as client:
            await backend.start(client, LATENCY_MS)
            await service.start()
            run = Run(service, backend, client)
            stop = asyncio.Event()
            kill_task = asyncio.create_task(
                killer(service, stop, random.Random(args.seed), args.kill_min, args.kill_max)
            )
            started = time.monotonic()
            outcomes = await asyncio.gather(
                *(run.converse(c, random.Random(rng.random())) for c in convs),
                return_exceptions=True,
            )
            elapsed = time.monotonic() - started
            stop.set()
            kills = await kill_task
            for conv, outcome in zip(convs, outcomes, strict=True):
                if isinstance(outcome, BaseException):
                    conv.failures.append(f"conversation failed: {outcome!r}")
            facts_total, facts_missing = await memory_misses(run, convs)
            log = await backend.log(client)
    finally:
        service.kill()
        backend.stop()
    return report(
        args, convs, kills, service.starts, elapsed, facts_total, facts_missing, log, work
    )


def report(
    args: argparse.Namespace, convs: list[Conversation], kills: list[float], starts: int,
    elapsed: float, facts_total: int, facts_missing: list[str], log: list[dict[str, Any]],
    work: Path,
) -> dict[str, Any]:  # fmt: skip
    executed = writes_executed(log)
    twice = {f"{k[0]}:{k[1]}": n for k, n in executed.items() if n > 1}
    resets = [c for c in convs if c.kind == "password_reset"]
    orphaned = [
        f"{c.session_id}: {c.reset}"
        for c in resets
        if c.reset.get("status") != "completed"
        or c.reset.get("fed") not in (None, c.reset.get("started"))
    ]
    resumed = [c for c in resets if c.reset.get("restarts_while_waiting", 0) > 0]
    transcript_failures = [f"{c.session_id}: {f}" for c in convs for f in c.failures]
    rows = [
        ("answered turns in the transcript exactly once, at their index",
         sum(len(c.acked) for c in convs), transcript_failures),
        ("key facts of answered turns in memory after close", facts_total, facts_missing),
        (f"password resets finished by the next turn ({len(resumed)} across a restart)",
         len(resets), orphaned),
        ("writes executed once (backend log)", sum(executed.values()), sorted(twice)),
    ]  # fmt: skip
    return {
        "n": args.n,
        "turns_answered": sum(len(c.acked) for c in convs),
        "turns_stored_answer_lost": sum(c.unacked for c in convs),
        "kills": len(kills),
        "service_starts": starts,
        "elapsed_s": round(elapsed, 1),
        "checks": [
            {"check": name, "checked": checked, "failed": len(bad), "examples": bad[:5]}
            for name, checked, bad in rows
        ],
        "writes_executed_twice": twice,
        "passed": all(not bad for _, _, bad in rows),
        "workdir": str(work),
    }


def print_table(report: dict[str, Any]) -> None:
    width = max(len(c["check"]) for c in report["checks"])
    print(f"{'check':<{width}} | checked | failed | result")
    print(f"{'-' * width}-|---------|--------|-------")
    for check in report["checks"]:
        result = "ok" if not check["failed"] else "FAIL"
        name, checked, failed = check["check"], check["checked"], check["failed"]
        print(f"{name:<{width}} | {checked:>7} | {failed:>6} | {result}")
    print(
        f"\n{report['n']} conversations, {report['turns_answered']} turns answered "
        f"({report['turns_stored_answer_lost']} more stored with the answer lost), "
        f"{report['kills']} SIGKILLs, {report['service_starts']} starts, "
        f"{report['elapsed_s']} s; data in {report['workdir']}"
    )
    for check in report["checks"]:
        for example in check["examples"]:
            print(f"  {check['check']}: {example}")
    print("PASSED" if report["passed"] else "FAILED")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=40, help="conversations in flight")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kill-min", type=float, default=2.0)
    parser.add_argument("--kill-max", type=float, default=6.0)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--service-cmd", default=DEFAULT_SERVICE_CMD)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(result, indent=1, ensure_ascii=False))
    else:
        print_table(result)
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
