"""Session benchmarks: ``get`` and turn-append latency per store, memory, trim time.

``run_sessions_bench()`` measures, through :class:`SessionManager` (ownership check, idle check,
renewal — what a request pays):

- ``get`` latency in-process, on SQLite and on Redis (p50/p95 in microseconds), over
  ``sessions`` open sessions picked at random;
- durable turn append (``append_turn``: read, append, compare-and-set write, acknowledged only
  once stored — committed on SQLite) on the same stores, to sessions of 10 turns or more;
- the memory that ``memory_sessions`` open sessions of ``memory_turns`` turns each add to the
  process (Python allocations traced by ``tracemalloc``, and resident set size);
- the time to trim a 30-turn history (p50/p95 in milliseconds), warm (turn analyses cached, as
  in a running conversation) and cold (every turn and word analysed for the first time), with
  the cold trims' thread CPU time beside their wall-clock time.
"""

from __future__ import annotations

import gc
import os
import random
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from hermes_desk.config import SessionSettings
from hermes_desk.sessions import (
    ContextTrimmer,
    MemorySessionStore,
    SessionManager,
    SessionStore,
    SqliteSessionStore,
    Turn,
    build_token_counter,
)

__all__ = ["run_sessions_bench"]

_USER_LINES = [
    "我的订单{n}还没有发货，已经等了{k}天了",
    "物流信息显示包裹在{k}号就到了转运中心，之后一直没有更新",
    "我不要换货了，直接帮我退款到原来的支付方式",
    "昨天客服说会在{k}个工作日内处理，现在还没有消息",
    "手机号是尾号{k}{k}的那个，收货地址没有变",
]
_AGENT_LINES = [
    "好的，我这边帮您查询一下订单{n}的物流状态，请稍等",
    "您的包裹目前在配送中，预计{k}天内送达，给您带来不便非常抱歉",
    "已经为您提交退款申请，款项会在{k}个工作日内原路退回",
    "请问还有其他可以帮您的吗？",
]


def _turns(rng: random.Random, count: int, seq: int) -> list[Turn]:
    turns = []
    for i in range(count):
        lines = _USER_LINES if i % 2 == 0 else _AGENT_LINES
        text = rng.choice(lines).format(n=100000000000 + seq * 10 + i, k=rng.randint(1, 9))
        turns.append(Turn("user" if i % 2 == 0 else "agent", text, ts=1_780_000_000.0 + i))
    return turns


def _percentiles(samples: list[float]) -> dict[str, float]:
    samples.sort()
    q = statistics.quantiles(samples, n=100, method="inclusive")
    return {"p50": round(q[49], 3), "p95": round(q[94], 3), "n": len(samples)}


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _get_latency(
    store: SessionStore, *, sessions: int, iterations: int, seed: int
) -> dict[str, float]:
    manager = SessionManager(store, SessionSettings())
    rng = random.Random(seed)
    owners = []
    for n in range(sessions):
        user = f"user{n}"
        session = await manager.create("bench", user)
        session.turns = _turns(rng, 10, n)
        await manager.save(session)
        owners.append((user, session.id))
    samples: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(iterations):
        user, sid = owners[rng.randrange(sessions)]
        start = clock()
        await manager.get("bench", user, sid)
        samples.append((clock() - start) / 1000)
    return _percentiles(samples)


async def _append_latency(
    store: SessionStore, *, sessions: int, iterations: int, seed: int
) -> dict[str, float]:
    manager = SessionManager(store, SessionSettings())
    rng = random.Random(seed)
    owners = []
    for n in range(sessions):
        user = f"user{n}"
        session = await manager.create("bench", user)
        session.turns = _turns(rng, 10, n)
        await manager.save(session)
        owners.append((user, session.id))
    lines = _turns(rng, 50, sessions)
    samples: list[float] = []
    clock = time.perf_counter_ns
    for i in range(iterations):
        user, sid = owners[rng.randrange(sessions)]
        line = lines[i % len(lines)]
        turn = Turn(line.role, line.text)
        start = clock()
        await manager.append_turn("bench", user, sid, turn)
        samples.append((clock() - start) / 1000)
    return _percentiles(samples)


async def _sqlite_figures(sessions: int, iterations: int, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as folder:
        store = SqliteSessionStore.open(Path(folder) / "sessions.db")
        try:
            return {
                "get_us": await _get_latency(
                    store, sessions=sessions, iterations=iterations, seed=seed
                ),
                "append_us": await _append_latency(
                    store, sessions=sessions, iterations=iterations, seed=seed
                ),
            }
        finally:
            await store.aclose()


async def _fill(sessions: int, turns: int, seed: int) -> MemorySessionStore:
    rng = random.Random(seed)
    store = MemorySessionStore()
    manager = SessionManager(store, SessionSettings())
    for n in range(sessions):
        session = await manager.create("bench", f"user{n}")
        for turn in _turns(rng, turns, n):
            await manager.append_turn("bench", session.user, session.id, turn)
    return store


def _memory(sessions: int, turns: int, seed: int) -> dict[str, float]:
    # Resident memory first, without tracing (tracemalloc itself costs memory) ...
    gc.collect()
    rss_before = _rss_bytes()
    store = anyio.run(_fill, sessions, turns, seed)
    gc.collect()
    rss = _rss_bytes() - rss_before
    assert len(store) == sessions
    del store
    gc.collect()
    # ... then the Python allocations, traced.
    tracemalloc.start()
    traced_before = tracemalloc.get_traced_memory()[0]
    store = anyio.run(_fill, sessions, turns, seed)
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0] - traced_before
    tracemalloc.stop()
    del store
    return {
        "sessions": sessions,
        "turns_each": turns,
        "traced_mb": round(traced / 2**20, 1),
        "rss_mb": round(rss / 2**20, 1),
        "bytes_per_session": round(traced / sessions),
    }


def _trim_times(trimmer: ContextTrimmer, rounds: int, seed: int) -> Any:
    rng = random.Random(seed)
    warm: list[float] = []
    cold: list[float] = []
    cold_cpu: list[float] = []
    for r in range(rounds):
        history = _turns(rng, 30, r)
        budget = trimmer.count_tokens(history) * 53 // 100
        trimmer.clear_cache()  # cold: every turn segmented and counted now
        start = time.perf_counter()
        start_cpu = time.thread_time()
        trimmer.trim(history, "那个退款到账了吗", budget)
        cold.append((time.perf_counter() - start) * 1000)
        cold_cpu.append((time.thread_time() - start_cpu) * 1000)
        start = time.perf_counter()  # warm: analyses cached, as in a running conversation
        trimmer.trim(history, "那个退款到账了吗", budget)
        warm.append((time.perf_counter() - start) * 1000)
    # On a loaded machine the wall-clock tail is the scheduler's (a preempted trim waits a
    # 4 ms tick); the thread's CPU time shows what the trim itself costs.
    return {
        "warm_ms": _percentiles(warm),
        "cold_ms": _percentiles(cold),
        "cold_cpu_ms": _percentiles(cold_cpu),
    }


def run_sessions_bench(
    *,
    sessions: int = 1_000,
    iterations: int = 20_000,
    redis_url: str | None = "redis://127.0.0.1:6379/15",
    redis_iterations: int = 5_000,
    sqlite_iterations: int = 5_000,
    memory_sessions: int = 10_000,
    memory_turns: int = 10,
    trim_rounds: int = 200,
    tokenizer_model: str = "gpt-4o-mini",
    seed: int = 7,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the session benchmarks and return their figures (see the module docstring).

    ``redis_url=None`` skips Redis. The Redis keys go under a scratch prefix, removed at the end.
    """
    figures: dict[str, Any] = {}
    progress(f"get latency, in-process ({sessions} sessions, {iterations} gets)")
    figures["get_us_memory"] = anyio.run(
        lambda: _get_latency(
            MemorySessionStore(), sessions=sessions, iterations=iterations, seed=seed
        )
    )
    progress(f"turn append, in-process ({sessions} sessions, {iterations} appends)")
    figures["append_us_memory"] = anyio.run(
        lambda: _append_latency(
            MemorySessionStore(), sessions=sessions, iterations=iterations, seed=seed
        )
    )
    progress(f"get and durable turn append, SQLite ({sessions} sessions, {sqlite_iterations} each)")
    sqlite = anyio.run(_sqlite_figures, sessions, sqlite_iterations, seed)
    figures["get_us_sqlite"] = sqlite["get_us"]
    figures["append_us_sqlite"] = sqlite["append_us"]
    if redis_url is not None:
        progress(f"get and turn append, Redis ({sessions} sessions, {redis_iterations} each)")
        redis = anyio.run(lambda: _redis_latency(redis_url, sessions, redis_iterations, seed))
        figures["get_us_redis"] = redis["get_us"]
        figures["append_us_redis"] = redis["append_us"]
    progress(f"memory of {memory_sessions} sessions × {memory_turns} turns")
    figures["memory"] = _memory(memory_sessions, memory_turns, seed)
    progress(f"trim time, 30-turn history ({trim_rounds} rounds)")
    counter = build_token_counter(tokenizer_model)
    trimmer = ContextTrimmer(counter)
    trimmer.trim(
        _turns(random.Random(0), 4, 0), "预热", 1
    )  # load the segmenter and its IDF table once
    load = os.getloadavg()[0]
    figures["trim_30_turns"] = _trim_times(trimmer, trim_rounds, seed)
    figures["trim_30_turns"]["load_avg_1m"] = round(max(load, os.getloadavg()[0]), 2)
    figures["tokenizer"] = counter.name
    return figures


async def _redis_latency(url: str, sessions: int, iterations: int, seed: int) -> dict[str, Any]:
    from hermes_desk.sessions.redis_store import RedisSessionStore

    prefix = f"hd:bench:{os.getpid()}:"
    store = RedisSessionStore(url, prefix=prefix)
    try:
        return {
            "get_us": await _get_latency(
                store, sessions=sessions, iterations=iterations, seed=seed
            ),
            "append_us": await _append_latency(
                store, sessions=sessions, iterations=iterations, seed=seed
            ),
        }
    finally:
        await store.clear()
        await store.aclose()
