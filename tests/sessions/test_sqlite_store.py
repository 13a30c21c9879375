"""The durable default store: sessions outlive the process, even a kill -9 (spec D1)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from hermes_desk.config import SessionSettings
from hermes_desk.errors import ConflictError
from hermes_desk.sessions import (
    SaveResult,
    Session,
    SessionManager,
    SqliteSessionStore,
    Turn,
    build_session_store,
    turn_key,
)
from hermes_desk.storage import SqliteDatabase, SqliteWorker
from hermes_desk.testing import FakeClock

pytestmark = pytest.mark.anyio

TTL = 15 * 60


@pytest.fixture
async def path(tmp_path: Path) -> Path:
    return tmp_path / "sessions.db"


@pytest.fixture
async def first(path: Path, fake_clock: FakeClock) -> AsyncIterator[SqliteSessionStore]:
    store = SqliteSessionStore.open(path, clock=fake_clock)
    yield store
    await store.aclose()


def _manager(store: SqliteSessionStore, clock: FakeClock) -> SessionManager:
    return SessionManager(store, SessionSettings(idle_ttl_s=TTL), clock=clock)


async def test_a_new_instance_on_the_same_file_finds_every_session(
    first: SqliteSessionStore, path: Path, fake_clock: FakeClock
) -> None:
    before = _manager(first, fake_clock)
    alice, resumed = await before.open_or_resume("t1", "alice")
    assert not resumed
    await before.append_turn("t1", "alice", alice.id, Turn("user", "我的订单还没到"))
    await before.append_turn("t1", "alice", alice.id, Turn("agent", "帮您查询"))
    bob = await before.create("t1", "bob")
    await before.append_turn("t1", "bob", bob.id, Turn("user", "退款"))
    carol = await before.create("t1", "carol")
    await before.close("t1", "carol", carol.id)
    await first.aclose()  # a clean stop; the kill -9 case is below

    fake_clock.advance(60)
    restarted = SqliteSessionStore.open(path, clock=fake_clock)
    try:
        after = _manager(restarted, fake_clock)
        again, resumed = await after.open_or_resume("t1", "alice")  # find_open after restart
        assert resumed and again.id == alice.id
        assert [t.text for t in again.turns] == ["我的订单还没到", "帮您查询"]
        assert again.version == 3
        assert await restarted.find_open("t1", "bob") == bob.id
        assert [t.text for t in (await after.get("t1", "bob", bob.id)).turns] == ["退款"]
        assert await restarted.find_open("t1", "carol") is None
        assert (await after.get("t1", "carol", carol.id)).status == "closed"
        # Idle expiry keeps counting across the restart: the sweeper finds what went idle.
        fake_clock.advance(TTL)
        assert await after.sweep() == 2
    finally:
        await restarted.aclose()


_WRITER = textwrap.dedent(
    """
    import sys

    import anyio

    from hermes_desk.config import SessionSettings
    from hermes_desk.sessions import SessionManager, SqliteSessionStore, Turn


    async def main(path: str) -> None:
        manager = SessionManager(SqliteSessionStore.open(path), SessionSettings())
        session = await manager.create("t1", "alice")
        print("session", session.id, flush=True)
        n = 0
        while True:
            await manager.append_turn("t1", "alice", session.id, Turn("user", f"turn {n}"))
            print("ack", n, flush=True)  # acknowledged: append_turn returned
            n += 1


    anyio.run(main, sys.argv[1])
    """
)


def _kill_after_acks(path: Path, acks: int) -> tuple[str, list[str]]:
    """Run a writer, SIGKILL it once it has acknowledged ``acks`` turns; its output lines."""
    lines: list[str] = []
    with subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                lines.append(line.split(maxsplit=1)[1].strip())
                if len(lines) > acks:
                    os.kill(proc.pid, signal.SIGKILL)
                    break
            lines += [line.split(maxsplit=1)[1].strip() for line in proc.stdout]  # printed
        finally:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    return lines[0], [f"turn {n}" for n in lines[1:]]


async def test_every_acknowledged_turn_survives_kill_9(path: Path) -> None:
    sid, acknowledged = await anyio.to_thread.run_sync(_kill_after_acks, path, 200)
    assert len(acknowledged) >= 200

    store = SqliteSessionStore.open(path)
    try:
        found = await store.load(sid)
        assert found is not None and found.is_open
        texts = [t.text for t in found.turns]
        assert texts[: len(acknowledged)] == acknowledged
        assert len(texts) <= len(acknowledged) + 1  # at most the one in flight at the kill
        assert found.version == 1 + len(texts)
        assert await store.find_open("t1", "alice") == sid
    finally:
        await store.aclose()


async def test_two_processes_on_one_file_refuse_the_stale_writer(
    first: SqliteSessionStore, path: Path, fake_clock: FakeClock
) -> None:
    other = SqliteSessionStore.open(path, clock=fake_clock)  # another worker's connection
    try:
        await first.save(Session("ses_a", "t1", "alice", 1.0, 1.0), create=True)
        mine, theirs = await first.load("ses_a"), await other.load("ses_a")
        assert mine is not None and theirs is not None
        theirs.turns.append(Turn("user", "theirs"))
        assert await other.save(theirs) is SaveResult.WRITTEN
        mine.turns.append(Turn("user", "mine"))
        assert await first.save(mine) is SaveResult.STALE
        stored = await first.load("ses_a")
        assert stored is not None and [t.text for t in stored.turns] == ["theirs"]
    finally:
        await other.aclose()


async def test_the_default_store_lives_in_the_data_folder(
    tmp_path: Path, fake_clock: FakeClock
) -> None:
    settings = SessionSettings()
    assert settings.store == "sqlite"
    store = build_session_store(settings, data_dir=tmp_path / "data", clock=fake_clock)
    manager = SessionManager(store, settings, clock=fake_clock)
    session = await manager.create("t1", "alice")
    await manager.aclose()
    assert (tmp_path / "data" / "sessions.db").exists()
    reopened = build_session_store(settings, data_dir=tmp_path / "data", clock=fake_clock)
    try:
        assert await reopened.find_open("t1", "alice") == session.id
    finally:
        await reopened.aclose()
    await manager.aclose()  # closing twice is harmless


async def test_a_closed_store_refuses_calls(first: SqliteSessionStore) -> None:
    await first.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await first.load("ses_a")


# -- versions, old records and turn keys ----------------------------------------------------------


def test_a_record_written_before_versions_loads_at_version_0() -> None:
    old = {"id": "ses_a", "tenant": "t1", "user": "u1", "created_at": 1.0, "last_active": 2.0}
    session = Session.from_dict(old)
    assert session.version == 0
    assert Session.from_dict(session.to_dict()).version == 0
    session.version = 7
    assert Session.from_dict(session.to_dict()).version == 7


@pytest.mark.redis
async def test_a_redis_session_written_before_versions_can_still_be_written(
    redis_url: str,
) -> None:
    import json

    import redis.asyncio as redis_asyncio

    from hermes_desk.sessions import RedisSessionStore

    client = redis_asyncio.Redis.from_url(redis_url, decode_responses=True)
    old = {"id": "ses_old", "tenant": "t1", "user": "u1", "created_at": 1.0, "last_active": 2.0}
    await client.set("hd:sess:s:ses_old", json.dumps(old))  # no version anywhere
    await client.zadd("hd:sess:idle", {"ses_old": 2.0})
    store = RedisSessionStore(client=client)
    try:
        loaded = await store.load("ses_old")
        assert loaded is not None and loaded.version == 0
        stale = Session.from_dict(loaded.to_dict())
        loaded.turns.append(Turn("user", "hi"))
        assert await store.save(loaded) is SaveResult.WRITTEN and loaded.version == 1
        assert await store.save(stale) is SaveResult.STALE
    finally:
        await client.aclose()


def test_turn_keys_name_one_turn_of_one_session() -> None:
    assert turn_key("ses_a", 4) == "ses_a:4"
    assert turn_key("ses_a", 4, "order_status") == "ses_a:4:order_status"
    keys = {turn_key(sid, i, "lookup") for sid in ("ses_a", "ses_b") for i in range(3)}
    assert len(keys) == 6
    with pytest.raises(ValueError):
        turn_key("ses_a", -1)


async def test_conflicts_name_the_session(first: SqliteSessionStore, fake_clock: FakeClock) -> None:
    manager = _manager(first, fake_clock)
    session = await manager.create("t1", "alice")
    stale = await manager.get("t1", "alice", session.id)
    await manager.append_turn("t1", "alice", session.id, Turn("user", "first"))
    with pytest.raises(ConflictError) as conflict:
        await manager.save(stale)
    assert conflict.value.details == {"session_id": session.id}


# -- the worker thread the store runs on -------------------------------------------------------


async def test_worker_runs_calls_in_order_and_reports_their_errors(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "w.db")
    worker = SqliteWorker(db)
    try:
        await worker.run(lambda c: c.execute("CREATE TABLE t (n INTEGER)"))
        async with anyio.create_task_group() as tg:
            for n in range(50):
                tg.start_soon(
                    worker.run, lambda c, n=n: c.execute("INSERT INTO t VALUES (?)", (n,))
                )
        rows = await worker.run(lambda c: c.execute("SELECT n FROM t ORDER BY rowid").fetchall())
        assert [r[0] for r in rows] == list(range(50))

        def fails(conn: object) -> None:
            raise LookupError("no such thing")

        with pytest.raises(LookupError, match="no such thing"):
            await worker.run(fails, transaction=True)
        assert await worker.run(lambda c: c.execute("SELECT count(*) FROM t").fetchone()[0]) == 50
    finally:
        await worker.aclose()
        await worker.aclose()
        db.close()


async def test_worker_skips_a_call_whose_caller_gave_up(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "w.db")
    worker = SqliteWorker(db)
    await worker.run(lambda c: c.execute("CREATE TABLE t (n INTEGER)"))
    loop = asyncio.get_running_loop()
    busy = asyncio.Event()
    gate = threading.Event()

    def blocker(conn: object) -> None:
        loop.call_soon_threadsafe(busy.set)
        gate.wait()

    async def insert(scope: anyio.CancelScope) -> None:
        with scope:
            await worker.run(lambda c: c.execute("INSERT INTO t VALUES (1)"))

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker.run, blocker)
            await busy.wait()  # the worker is busy: the insert waits in its queue ...
            gave_up = anyio.CancelScope()
            tg.start_soon(insert, gave_up)
            await anyio.wait_all_tasks_blocked()
            gave_up.cancel()  # ... and its caller gives up before its turn
            await anyio.wait_all_tasks_blocked()
            gate.set()
        assert await worker.run(lambda c: c.execute("SELECT count(*) FROM t").fetchone()[0]) == 0
    finally:
        gate.set()
        await worker.aclose()
        db.close()


async def test_open_sessions_of_an_owner_come_from_an_index_not_a_scan(
    first: SqliteSessionStore,
) -> None:
    for n in range(3):
        await first.save(Session(f"ses_{n}", "t1", "alice", 100.0 + n, 100.0 + n), create=True)
    await first.save(Session("ses_bob", "t1", "bob", 100.0, 100.0), create=True)

    def plan(conn: object) -> str:
        rows = conn.execute(  # type: ignore[attr-defined]
            "EXPLAIN QUERY PLAN SELECT version, last_active, data FROM live_sessions"
            " WHERE tenant = ? AND user_id = ? AND retired_until IS NULL"
            " ORDER BY last_active DESC, id LIMIT ?",
            ("t1", "alice", 20),
        ).fetchall()
        return " ".join(str(row[-1]) for row in rows)

    assert "live_sessions_owner" in first.database.call(plan)
    assert [s.id for s in await first.list_open("t1", "alice")] == ["ses_2", "ses_1", "ses_0"]
