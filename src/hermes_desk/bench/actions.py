"""What the approval path costs: proposal → approval → executed, without the agent's think time.

``run_actions_bench()`` proposes a write (a ticket), approves it at once and lets it execute
against an in-process tool that answers immediately, per store (in-process, SQLite in a
temporary folder, Redis when given). Figures: p50/p95 in milliseconds of ``propose`` and of
``approve`` (which includes the compare-and-set, the call through the executor and the final
compare-and-set), and of the whole path minus the bare tool call.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from hermes_desk.actions import ActionService, MemoryProposalStore, ProposalStore
from hermes_desk.clock import SystemClock
from hermes_desk.config import ActionSettings
from hermes_desk.events import MemorySink
from hermes_desk.tools.binding import PythonBinding
from hermes_desk.tools.executor import ToolExecutor
from hermes_desk.tools.registry import ToolRegistry
from hermes_desk.tools.spec import BindingSpec, ToolSpec

__all__ = ["run_actions_bench"]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def _executor() -> ToolExecutor:
    async def create_ticket(user_id: str, summary: str) -> dict[str, Any]:
        return {"ticket_id": "T1", "status": "open"}

    spec = ToolSpec(
        name="create_ticket",
        description="open a ticket",
        parameters={
            "type": "object",
            "properties": {
                "user_id": {"type": "string", "minLength": 1},
                "summary": {"type": "string", "minLength": 1, "maxLength": 2000},
            },
            "required": ["user_id", "summary"],
        },
        binding=BindingSpec(kind="python"),
        effect="write",
        explain={"zh": "为客户创建工单：{summary}", "en": "open a ticket: {summary}"},
    )
    registry = ToolRegistry()
    registry.add(spec, PythonBinding(create_ticket))
    return ToolExecutor(registry, events=MemorySink(maxlen=1000))


async def _run(store: ProposalStore, proposals: int) -> dict[str, Any]:
    service = ActionService(
        store=store,
        tools=_executor(),
        workflows=None,
        settings=ActionSettings(),
        clock=SystemClock(),
        events=MemorySink(maxlen=1000),
    )
    perf = time.perf_counter
    propose_ms: list[float] = []
    approve_ms: list[float] = []
    for i in range(proposals + 50):
        t0 = perf()
        proposal = await service.propose(
            tenant="default", user="u1001", session_id=f"ses_{i % 50}", tool="create_ticket",
            arguments={"user_id": "u1001", "summary": "快递员态度很差"},
            why={"intent": "complaint", "rule": "bench"}, language="zh",
        )  # fmt: skip
        t1 = perf()
        done = await service.approve(proposal.id, tenant="default", user="u1001", agent_id="a")
        t2 = perf()
        if done.status != "executed":  # pragma: no cover - a broken benchmark reports nothing
            raise RuntimeError(f"benchmark approval failed: {done}")
        if i >= 50:
            propose_ms.append((t1 - t0) * 1000)
            approve_ms.append((t2 - t1) * 1000)
    # What a complaint turn reads besides: the customer's writes that ran in earlier contacts
    # (this customer has every one of them: the most a read returns, ``limit``, every time).
    earlier_ms: list[float] = []
    for _ in range(200):
        t0 = perf()
        found = await service.earlier("ses_new", tenant="default", user="u1001")
        earlier_ms.append((perf() - t0) * 1000)
    if not found:  # pragma: no cover - a broken benchmark reports nothing
        raise RuntimeError("benchmark: no earlier writes found")
    await store.aclose()
    total = [p + a for p, a in zip(propose_ms, approve_ms, strict=True)]
    return {
        "proposals": proposals,
        "propose_p50_ms": _pct(propose_ms, 0.5),
        "propose_p95_ms": _pct(propose_ms, 0.95),
        "approve_execute_p50_ms": _pct(approve_ms, 0.5),
        "approve_execute_p95_ms": _pct(approve_ms, 0.95),
        "whole_path_p50_ms": _pct(total, 0.5),
        "whole_path_p95_ms": _pct(total, 0.95),
        "whole_path_mean_ms": round(statistics.fmean(total), 3),
        "earlier_contacts_p50_ms": _pct(earlier_ms, 0.5),
        "earlier_contacts_p95_ms": _pct(earlier_ms, 0.95),
        "earlier_contacts_found": len(found),
    }


def run_actions_bench(proposals: int = 2_000, redis_url: str | None = None) -> dict[str, Any]:
    """The figures per store (``redis`` only with ``redis_url``)."""
    from hermes_desk.actions.sqlite_store import SqliteProposalStore

    figures: dict[str, Any] = {}
    print(f"  actions: in-process store, {proposals} proposals")
    figures["memory"] = anyio.run(_run, MemoryProposalStore(), proposals)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as folder:
        print(f"  actions: SQLite store, {proposals} proposals")
        sqlite = SqliteProposalStore(Path(folder) / "actions.db")
        figures["sqlite"] = anyio.run(_run, sqlite, proposals)
    if redis_url:
        from hermes_desk.actions.redis_store import RedisProposalStore

        print(f"  actions: Redis store, {proposals} proposals")
        figures["redis"] = anyio.run(
            _run, RedisProposalStore(redis_url, prefix="bench:"), proposals
        )
    return figures
