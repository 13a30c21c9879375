"""What counting suggestions costs: the ``shown`` write every customer turn makes, and the report.

``run_feedback_bench()`` writes ``events`` suggestion events (one shown per turn, a third of them
inserted, a sixth rated) into each store (in-process, SQLite in a temporary folder, Redis when
given), then asks the tenant's counts. Figures: p50/p95/p99 in milliseconds of ``put`` and of
``counts`` (the ``GET /v1/metrics/suggestions`` query) over the stored events.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from hermes_desk.feedback import FeedbackStore, MemoryFeedbackStore, SuggestionEvent

__all__ = ["run_feedback_bench"]

_INTENTS = ("order_status", "logistics", "return_exchange", "kb_question", "payment_methods")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def _event(i: int, kind: str) -> SuggestionEvent:
    return SuggestionEvent(
        tenant="bench",
        session_id=f"ses_{i // 10}",
        turn_index=i % 10,
        event=kind,  # type: ignore[arg-type]
        intent=_INTENTS[i % len(_INTENTS)],
        at=float(i),
        suggestion="您好，订单 202405201234 当前状态：运输中，预计 2024-05-30 送达。",
        agent_id="agent-1" if kind != "shown" else None,
        useful=(i % 2 == 0) if kind == "rated" else None,
    )


async def _run(store: FeedbackStore, events: int) -> dict[str, Any]:
    perf = time.perf_counter
    put_ms: list[float] = []
    for i in range(events):
        kinds = ["shown"] + (["inserted"] if i % 3 == 0 else []) + (["rated"] if i % 6 == 0 else [])
        for kind in kinds:
            t0 = perf()
            await store.put(_event(i, kind))
            put_ms.append((perf() - t0) * 1000)
    counts_ms: list[float] = []
    for _ in range(50):
        t0 = perf()
        rows = await store.counts("bench")
        counts_ms.append((perf() - t0) * 1000)
    await store.aclose()
    return {
        "events": len(put_ms),
        "put_ms": {"p50": _pct(put_ms, 0.5), "p95": _pct(put_ms, 0.95), "p99": _pct(put_ms, 0.99)},
        "counts_ms": {"p50": _pct(counts_ms, 0.5), "p95": _pct(counts_ms, 0.95)},
        "shown_counted": sum(n for _, kind, n in rows if kind == "shown"),
    }


def run_feedback_bench(events: int = 5_000, redis_url: str | None = None) -> dict[str, Any]:
    """Figures per store (``redis_url`` adds Redis; its keys use the ``bench:`` prefix)."""
    from hermes_desk.feedback.sqlite_store import SqliteFeedbackStore

    figures: dict[str, Any] = {"memory": anyio.run(_run, MemoryFeedbackStore(), events)}
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteFeedbackStore(Path(folder) / "feedback.db")
        figures["sqlite"] = anyio.run(_run, store, events)
    if redis_url:
        from hermes_desk.feedback.redis_store import RedisFeedbackStore

        figures["redis"] = anyio.run(_run, RedisFeedbackStore(redis_url, prefix="bench:"), events)
    return figures
