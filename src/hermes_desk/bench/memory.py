"""Memory benchmarks: notes look-up latency at scale, single-fact write throughput, WAL vs not.

``run_memory_bench(backend="sqlite")`` loads ``facts`` facts over ``users`` users in bulk
(executemany on SQLite, COPY on PostgreSQL), then measures through :class:`MemoryService`:
notes look-ups (p50/p95/p99 over random users) and single-fact writes per second (each its own
transaction), to new keys and to the loaded keys of random users (``*_existing_keys``: reinforce,
supersede or conflict, which costs a read of the stored fact and an update of a random row of a
big table). On SQLite it measures writes with WAL and with the rollback journal in the same
run; on PostgreSQL sequential and concurrent writers. Both also measure ``processes`` worker
processes writing new keys at once (4 writers each, as several API workers would), timed from a
common start barrier to the last finish. PostgreSQL data goes into a scratch schema that
is dropped at the end. ``evaluate_keyfacts`` measures the key-fact filter on a labelled set.
"""

from __future__ import annotations

import functools
import json
import multiprocessing
import random
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio

from hermes_desk.clock import SystemClock
from hermes_desk.config import MemorySettings
from hermes_desk.memory.decay import DecayPolicy
from hermes_desk.memory.fact import CandidateFact
from hermes_desk.memory.keyfacts import KeyFactFilter, evaluate_filter
from hermes_desk.memory.service import MemoryService
from hermes_desk.memory.sqlite_store import SqliteMemoryStore
from hermes_desk.memory.store import FACT_COLUMNS, MemoryStore

__all__ = ["evaluate_keyfact_sets", "evaluate_keyfacts", "run_memory_bench"]

_TENANT = "bench"
_STATUSES = ("active",) * 17 + ("archived", "archived", "pending")  # 85% / 10% / 5%


def _rows(facts: int, users: int, now: float, seed: int) -> Iterator[tuple[Any, ...]]:
    """Fact rows in column order: ``facts // users`` keys per user, mostly active."""
    rng = random.Random(seed)
    policy = DecayPolicy()
    per_user = max(1, facts // users)
    for i in range(facts):
        user, slot = divmod(i, per_user)
        confidence = round(rng.uniform(0.4, 1.0), 3)
        confirmed = now - rng.uniform(0, 72 * 3600)
        yield (
            f"fact_{i:08d}", _TENANT, f"user_{user:06d}", f"key_{slot:02d}",
            str(rng.randint(1, 30)), confidence, rng.choice(_STATUSES), "rule",
            policy.threshold_time(confidence, confirmed), confirmed - 3600, confirmed, confirmed,
            1, f"ses_{user:06d}", None, "[]",
        )  # fmt: skip


def _percentiles(samples_s: list[float]) -> dict[str, float]:
    ordered = sorted(samples_s)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000

    return {
        "p50_ms": round(pct(0.50), 3),
        "p95_ms": round(pct(0.95), 3),
        "p99_ms": round(pct(0.99), 3),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 3),
    }


async def _lookups(service: MemoryService, users: int, count: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    for _ in range(min(200, count)):  # warm caches and the thread pool
        await service.notes(_TENANT, f"user_{rng.randrange(users):06d}")
    samples: list[float] = []
    found = 0
    for _ in range(count):
        user = f"user_{rng.randrange(users):06d}"
        start = time.perf_counter()
        notes = await service.notes(_TENANT, user)
        samples.append(time.perf_counter() - start)
        found += len(notes)
    return {"lookups": count, "mean_notes": round(found / count, 2), **_percentiles(samples)}


async def _writes(
    service: MemoryService,
    users: int,
    count: int,
    tag: str,
    concurrency: int = 1,
    *,
    existing: int = 0,
) -> dict[str, Any]:
    """``count`` single-fact writes; new keys, or with ``existing`` > 0 the loaded keys
    ``key_00``… of random users (reinforce, supersede or conflict with a stored fact)."""
    rng = random.Random(tag)
    if existing:
        jobs = [
            (
                f"user_{rng.randrange(users):06d}",
                CandidateFact(f"key_{rng.randrange(existing):02d}", rng.randint(1, 30), 0.9),
            )
            for _ in range(count)
        ]
    else:
        jobs = [
            (f"user_{rng.randrange(users):06d}", CandidateFact(f"w_{tag}_{i}", i, 0.9))
            for i in range(count)
        ]
    index = iter(jobs)

    async def worker() -> None:
        for user, candidate in index:
            await service.remember(_TENANT, user, candidate, "ses_bench")

    start, cpu = time.perf_counter(), time.process_time()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    elapsed = time.perf_counter() - start
    report = {
        "writes": count,
        "concurrency": concurrency,
        "writes_per_s": round(count / elapsed),
        # this process's CPU (all its threads) per write: tells client-bound from server-bound
        "client_cpu_us_per_write": round((time.process_time() - cpu) / count * 1e6),
    }
    return {**report, "keys": "existing"} if existing else report


async def _open_store(backend: str, target: str) -> MemoryStore:
    if backend == "postgres":
        from hermes_desk.memory.postgres_store import PostgresMemoryStore

        return await PostgresMemoryStore.open(target, max_size=8, synchronous_commit=False)
    return SqliteMemoryStore.open(target)


async def _child_writes(
    backend: str, target: str, users: int, count: int, concurrency: int, tag: str,
    barrier: Any, results: Any,
) -> None:  # fmt: skip
    service = _service(await _open_store(backend, target))
    try:
        await _writes(service, users, min(200, count), f"{tag}_warm", concurrency)
        await anyio.to_thread.run_sync(barrier.wait)
        start = time.time()
        await _writes(service, users, count, tag, concurrency)
        results.put((start, time.time(), count))
    finally:
        await service.close()


def _write_process(*args: Any) -> None:
    anyio.run(_child_writes, *args)


async def _multi_process_writes(
    backend: str, target: str, users: int, count: int, processes: int, concurrency: int
) -> dict[str, Any]:
    """``processes`` processes × ``concurrency`` writers, ``count`` writes per process."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes)
    results = ctx.Queue()
    common = (backend, target, users, count, concurrency)
    workers = [
        ctx.Process(target=_write_process, args=(*common, f"mp{processes}_{i}", barrier, results))
        for i in range(processes)
    ]
    for worker in workers:
        worker.start()
    try:
        done = [await anyio.to_thread.run_sync(results.get, True, 600) for _ in workers]
    finally:
        for worker in workers:
            await anyio.to_thread.run_sync(worker.join, 60)
        results.close()
    elapsed = max(end for _, end, _ in done) - min(start for start, _, _ in done)
    total = sum(n for _, _, n in done)
    return {
        "writes": total,
        "processes": processes,
        "concurrency": concurrency,
        "writes_per_s": round(total / elapsed),
    }


def _synchronous(conn: sqlite3.Connection, level: str) -> None:
    conn.execute(f"PRAGMA synchronous = {level}")


def _service(store: MemoryStore) -> MemoryService:
    return MemoryService(store, MemorySettings(), clock=SystemClock())


async def _sqlite(
    facts: int, users: int, lookups: int, writes: int, processes: int, path: Path,
    say: Callable[[str], None],
) -> dict[str, Any]:  # fmt: skip
    store = SqliteMemoryStore.open(path)
    db = store.database
    per_user = max(1, facts // users)
    now = time.time()
    placeholders = ", ".join("?" * len(FACT_COLUMNS))
    sql = f"INSERT INTO memory_facts ({', '.join(FACT_COLUMNS)}) VALUES ({placeholders})"
    say(f"sqlite: loading {facts:,} facts over {users:,} users into {path}")
    start = time.perf_counter()
    await db.run(lambda c: c.executemany(sql, _rows(facts, users, now, 7)), transaction=True)
    await db.run(lambda c: c.execute("ANALYZE"))
    load_s = time.perf_counter() - start
    say(f"sqlite: loaded in {load_s:.1f} s; measuring notes look-ups")
    service = _service(store)
    try:
        notes = await _lookups(service, users, lookups, 11)
        say(f"sqlite: notes {notes}; measuring writes")
        slow = max(1, min(writes, 1_000))  # the rollback journal is slow: fewer writes
        runs: dict[str, dict[str, Any]] = {}
        for journal, sync, count, concurrency in (
            ("wal", "normal", writes, 1),
            ("wal", "normal", writes, 4),
            ("wal", "full", slow, 1),
            ("delete", "normal", slow, 1),
            ("delete", "full", slow, 1),
        ):
            await db.set_journal_mode(journal)
            await db.run(functools.partial(_synchronous, level=sync))
            name = f"{journal}_{sync}" + (f"_x{concurrency}" if concurrency > 1 else "")
            runs[name] = await _writes(service, users, count, name, concurrency)
            say(f"sqlite: journal_mode={journal} synchronous={sync} x{concurrency}: {runs[name]}")
        await db.set_journal_mode("wal")
        await db.run(functools.partial(_synchronous, level="normal"))
        for concurrency in (1, 4):
            name = "wal_normal_existing_keys" + (f"_x{concurrency}" if concurrency > 1 else "")
            runs[name] = await _writes(service, users, writes, name, concurrency, existing=per_user)
            say(f"sqlite: writes to existing keys x{concurrency}: {runs[name]}")
    finally:
        await service.close()
    if processes > 1:
        name = f"wal_normal_{processes}proc_x4"
        runs[name] = await _multi_process_writes(
            "sqlite", str(path), users, writes // processes, processes, 4
        )
        say(f"sqlite: {processes} processes x4 writers: {runs[name]}")
    return {
        "backend": "sqlite",
        "facts": facts,
        "users": users,
        "load_s": round(load_s, 1),
        "db_mb": round((await anyio.Path(path).stat()).st_size / 2**20, 1),
        "notes": notes,
        "writes": runs,
        "wal_speedup_same_synchronous": {
            sync: round(
                runs[f"wal_{sync}"]["writes_per_s"] / runs[f"delete_{sync}"]["writes_per_s"], 2
            )
            for sync in ("normal", "full")
        },
    }


async def _postgres(
    facts: int, users: int, lookups: int, writes: int, processes: int, dsn: str,
    say: Callable[[str], None],
) -> dict[str, Any]:  # fmt: skip
    import psycopg

    from hermes_desk.memory.postgres_store import PostgresMemoryStore

    per_user = max(1, facts // users)
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    await admin.execute(f"CREATE SCHEMA {schema}")
    scoped = f"{dsn}{'&' if '?' in dsn else '?'}options=-csearch_path%3D{schema}"
    try:
        store = await PostgresMemoryStore.open(scoped, max_size=8)
        service = _service(store)
        try:
            now = time.time()
            say(f"postgres: loading {facts:,} facts over {users:,} users (COPY, schema {schema})")
            start = time.perf_counter()
            conn = await psycopg.AsyncConnection.connect(scoped)
            try:
                async with conn.cursor() as cur:
                    columns = ", ".join(FACT_COLUMNS)
                    async with cur.copy(f"COPY memory_facts ({columns}) FROM STDIN") as copy:
                        for row in _rows(facts, users, now, 7):
                            await copy.write_row(row)
                await conn.commit()
                await conn.execute("ANALYZE memory_facts")
                await conn.commit()
            finally:
                await conn.close()
            load_s = time.perf_counter() - start
            say(f"postgres: loaded in {load_s:.1f} s; measuring notes look-ups")
            notes = await _lookups(service, users, lookups, 11)
            say(f"postgres: notes {notes}; measuring writes")
        finally:
            await service.close()
        runs: dict[str, dict[str, Any]] = {}
        for sync_commit in (False, True):
            store = await PostgresMemoryStore.open(
                scoped, max_size=8, synchronous_commit=sync_commit
            )
            service = _service(store)
            try:
                for concurrency in (1, 8):
                    name = f"synchronous_commit_{'on' if sync_commit else 'off'}_x{concurrency}"
                    runs[name] = await _writes(service, users, writes, name, concurrency)
                    say(f"postgres: {name}: {runs[name]}")
                for concurrency in (1, 8) if not sync_commit else ():
                    name = f"synchronous_commit_off_x{concurrency}_existing_keys"
                    runs[name] = await _writes(
                        service, users, writes, name, concurrency, existing=per_user
                    )
                    say(f"postgres: {name}: {runs[name]}")
            finally:
                await service.close()
        if processes > 1:
            name = f"synchronous_commit_off_{processes}proc_x4"
            runs[name] = await _multi_process_writes(
                "postgres", scoped, users, writes // processes, processes, 4
            )
            say(f"postgres: {name}: {runs[name]}")
    finally:
        await admin.execute(f"DROP SCHEMA {schema} CASCADE")
        await admin.close()
        say(f"postgres: dropped schema {schema}")
    return {
        "backend": "postgres",
        "facts": facts,
        "users": users,
        "load_s": round(load_s, 1),
        "notes": notes,
        "writes": runs,
    }


def run_memory_bench(
    *,
    backend: str = "sqlite",
    facts: int = 1_000_000,
    users: int = 100_000,
    lookups: int = 5_000,
    writes: int = 5_000,
    processes: int = 2,
    path: str | Path | None = None,
    dsn: str = "postgresql://127.0.0.1:5432/test",
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Measure notes look-ups and writes on ``backend`` ('sqlite' or 'postgres').

    ``processes`` > 1 adds a run of that many worker processes writing at once.
    """
    if backend == "postgres":
        return anyio.run(_postgres, facts, users, lookups, writes, processes, dsn, progress)
    if path is not None:
        return anyio.run(_sqlite, facts, users, lookups, writes, processes, Path(path), progress)
    with tempfile.TemporaryDirectory(prefix="hermes-bench-") as tmp:
        target = Path(tmp) / "memory.db"
        return anyio.run(_sqlite, facts, users, lookups, writes, processes, target, progress)


def evaluate_keyfacts(
    data: str | Path | None = None, *, keyfacts: KeyFactFilter | None = None
) -> dict[str, Any]:
    """Precision/recall of the key-fact filter on ``{text, key_fact, lang[, intent]}`` JSONL.

    Defaults to the bundled pack's ``keyfacts_eval.jsonl`` and filter.
    """
    pack = Path(__file__).resolve().parent.parent / "packs" / "ecommerce"
    source = Path(data) if data else pack / "keyfacts_eval.jsonl"
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line]
    return evaluate_filter(keyfacts or KeyFactFilter.from_pack(pack), rows)


def evaluate_keyfact_sets(pack_dir: str | Path | None = None) -> dict[str, Any]:
    """Every labelled key-fact set of a pack (``keyfacts_eval*.jsonl``, ``keyfacts_heldout*``),
    scored apart, by file name."""
    pack = (
        Path(pack_dir)
        if pack_dir
        else Path(__file__).resolve().parent.parent / "packs" / "ecommerce"
    )
    flt = KeyFactFilter.from_pack(pack)
    files = sorted({*pack.glob("keyfacts_eval*.jsonl"), *pack.glob("keyfacts_heldout*.jsonl")})
    return {path.stem: evaluate_keyfacts(path, keyfacts=flt) for path in files}
