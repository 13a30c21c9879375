"""Session lifecycle with a fake clock: expiry, renewal, archive, hooks, ownership, resume."""

from __future__ import annotations

import re
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from hermes_desk.config import SessionSettings
from hermes_desk.errors import BackendUnavailableError, ConflictError, NotFoundError
from hermes_desk.events import MemorySink
from hermes_desk.ids import user_tag
from hermes_desk.sessions import (
    MemorySessionStore,
    Session,
    SessionManager,
    SessionStore,
    SqliteSessionArchive,
    SqliteSessionStore,
    Turn,
    build_session_store,
)
from hermes_desk.storage import SqliteDatabase
from hermes_desk.testing import FakeClock

pytestmark = pytest.mark.anyio

TTL = 15 * 60


@pytest.fixture
def db(tmp_db_path: Path) -> Iterator[SqliteDatabase]:
    database = SqliteDatabase(tmp_db_path)
    yield database
    database.close()


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def store(
    request: pytest.FixtureRequest, fake_clock: FakeClock, tmp_path: Path
) -> AsyncIterator[SessionStore]:
    built: SessionStore
    if request.param == "memory":
        built = MemorySessionStore(clock=fake_clock)
    elif request.param == "sqlite":
        built = SqliteSessionStore.open(tmp_path / "sessions.db", clock=fake_clock)
    else:
        from hermes_desk.sessions import RedisSessionStore

        built = RedisSessionStore(request.getfixturevalue("redis_url"))
    yield built
    await built.aclose()


@pytest.fixture
def sink() -> MemorySink:
    return MemorySink()


@pytest.fixture
def manager(
    store: SessionStore, fake_clock: FakeClock, db: SqliteDatabase, sink: MemorySink
) -> SessionManager:
    return SessionManager(
        store,
        SessionSettings(idle_ttl_s=TTL),
        clock=fake_clock,
        archive=SqliteSessionArchive(db),
        events=sink,
    )


def _recorder(manager: SessionManager) -> list[tuple[str, str, int]]:
    calls: list[tuple[str, str, int]] = []
    manager.on_destroy(lambda s, reason: calls.append((s.id, reason, len(s.short_term))))
    return calls


async def test_get_renews_so_expiry_counts_idle_time_not_age(
    manager: SessionManager, fake_clock: FakeClock
) -> None:
    session = await manager.create("t1", "alice")
    for _ in range(4):  # one hour of activity, never 15 minutes idle
        fake_clock.advance(TTL - 60)
        renewed = await manager.get("t1", "alice", session.id)
        assert renewed.is_open
    fake_clock.advance(TTL)
    with pytest.raises(NotFoundError):
        await manager.get("t1", "alice", session.id)


async def test_a_get_before_a_save_renews_only_once_half_the_idle_time_has_passed(
    manager: SessionManager, store: SessionStore, fake_clock: FakeClock
) -> None:
    session = await manager.create("t1", "alice")
    created = session.last_active
    fake_clock.advance(TTL / 2 - 1)
    early = await manager.get("t1", "alice", session.id, saving=True)
    stored = await store.load(session.id)
    assert stored is not None and stored.last_active == created == early.last_active
    fake_clock.advance(2)  # over half: renewed now, so it cannot expire before the save
    late = await manager.get("t1", "alice", session.id, saving=True)
    stored = await store.load(session.id)
    assert stored is not None and stored.last_active == late.last_active == fake_clock.now()
    fake_clock.advance(TTL - 60)
    await manager.save(late)  # the save renews it: still open a whole idle time later
    fake_clock.advance(TTL - 60)
    assert (await manager.get("t1", "alice", session.id)).is_open


async def test_lazy_expiry_archives_and_runs_hooks_once(
    manager: SessionManager, fake_clock: FakeClock, sink: MemorySink
) -> None:
    calls = _recorder(manager)
    session = await manager.create("t1", "alice")
    await manager.append_turn("t1", "alice", session.id, Turn("user", "物流已经晚了7天"))
    loaded = await manager.get("t1", "alice", session.id)
    loaded.short_term.append({"key": "logistics_delay_days", "value": 7})
    loaded.slots["order_id"] = "123456789012"
    await manager.save(loaded)

    fake_clock.advance(TTL + 1)
    for _ in range(2):
        with pytest.raises(NotFoundError):
            await manager.append_turn("t1", "alice", session.id, Turn("user", "还在吗"))
    assert await manager.sweep() == 0
    assert calls == [(session.id, "expired", 1)]

    assert manager.archive is not None
    record = await manager.archive.get("t1", "alice", session.id)
    assert record is not None
    assert record["reason"] == "expired"
    assert [t["text"] for t in record["transcript"]] == ["物流已经晚了7天"]
    assert record["slots"] == {"order_id": "123456789012"}
    assert record["short_term"] == [{"key": "logistics_delay_days", "value": 7}]
    assert "order_id=123456789012" in record["summary"]
    assert [e.name for e in sink.events(session.id)] == ["session.created", "session.expired"]
    assert "alice" not in str(sink.events(session.id)[0].to_dict())


async def test_sweep_expires_only_idle_sessions(
    manager: SessionManager, fake_clock: FakeClock
) -> None:
    calls = _recorder(manager)
    idle = await manager.create("t1", "alice")
    busy = await manager.create("t1", "bob")
    fake_clock.advance(TTL - 10)
    await manager.get("t1", "bob", busy.id)
    fake_clock.advance(20)
    assert await manager.sweep() == 1
    assert await manager.sweep() == 0
    assert calls == [(idle.id, "expired", 0)]
    assert (await manager.get("t1", "bob", busy.id)).is_open


async def test_close_archives_runs_hooks_and_refuses_appends(
    manager: SessionManager, fake_clock: FakeClock
) -> None:
    calls = _recorder(manager)
    session = await manager.create("t1", "alice")
    await manager.append_turn("t1", "alice", session.id, Turn("user", "我要退货"))
    closed = await manager.close("t1", "alice", session.id)
    assert closed.status == "closed" and closed.closed_at == fake_clock.now()
    assert calls == [(session.id, "closed", 0)]

    with pytest.raises(ConflictError):
        await manager.append_turn("t1", "alice", session.id, Turn("user", "还有一件事"))
    stone = await manager.get("t1", "alice", session.id)
    assert stone.status == "closed"
    with pytest.raises(NotFoundError):
        await manager.close("t1", "alice", session.id)
    # A save racing the close is refused and brings nothing back.
    with pytest.raises(ConflictError):
        await manager.save(Session(session.id, "t1", "alice", 0.0, 0.0))
    assert await manager.sweep() == 0
    assert calls == [(session.id, "closed", 0)]
    assert manager.archive is not None
    record = await manager.archive.get("t1", "alice", session.id)
    assert record is not None and record["reason"] == "closed" and record["turn_count"] == 1


async def test_another_users_id_looks_unknown_and_changes_nothing(
    manager: SessionManager, fake_clock: FakeClock
) -> None:
    calls = _recorder(manager)
    session = await manager.create("t1", "alice")
    fake_clock.advance(TTL - 5)
    for tenant, user in [("t1", "mallory"), ("t2", "alice")]:
        with pytest.raises(NotFoundError) as foreign:
            await manager.get(tenant, user, session.id)
        with pytest.raises(NotFoundError) as unknown:
            await manager.get(tenant, user, "ses_doesnotexist")
        assert foreign.value.to_dict().keys() == unknown.value.to_dict().keys()
        assert foreign.value.message == unknown.value.message
        with pytest.raises(NotFoundError):
            await manager.append_turn(tenant, user, session.id, Turn("user", "hi"))
        with pytest.raises(NotFoundError):
            await manager.close(tenant, user, session.id)
    assert calls == []
    fake_clock.advance(10)  # the foreign calls did not renew it
    assert await manager.sweep() == 1


async def test_resume_within_the_idle_window(
    manager: SessionManager, fake_clock: FakeClock
) -> None:
    first, resumed = await manager.open_or_resume("t1", "alice")
    assert not resumed
    fake_clock.advance(TTL - 1)
    again, resumed = await manager.open_or_resume("t1", "alice")
    assert resumed and again.id == first.id
    other, resumed = await manager.open_or_resume("t1", "bob")
    assert not resumed and other.id != first.id
    fake_clock.advance(TTL)
    fresh, resumed = await manager.open_or_resume("t1", "alice")
    assert not resumed and fresh.id != first.id
    await manager.close("t1", "alice", fresh.id)
    after_close, resumed = await manager.open_or_resume("t1", "alice")
    assert not resumed and after_close.id != fresh.id


async def _said(manager: SessionManager, session: Session, *facts: dict[str, object]) -> None:
    """The customer says something in English that leaves short-term facts in ``session``."""
    loaded = await manager.get(session.tenant, session.user, session.id)
    loaded.turns.append(Turn("user", "…", meta={"language": "en"}))
    loaded.short_term.extend(dict(f) for f in facts)
    await manager.save(loaded)


async def test_a_new_session_carries_the_key_facts_of_the_customers_open_ones(
    manager: SessionManager, fake_clock: FakeClock
) -> None:
    stale = await manager.create("t1", "alice")
    await _said(manager, stale, {"key": "repeat_contact_count", "value": 2})
    fake_clock.advance(TTL - 60)
    first = await manager.create("t1", "alice")
    no_calls = {"key": "contact_preference_no_calls", "value": True, "is_key_fact": True}
    await _said(manager, first, {**no_calls, "text": "以后别给我打电话"})
    await _said(manager, await manager.create("t1", "bob"), {"key": "bob_fact", "value": 1})
    await _said(manager, await manager.create("t2", "alice"), {"key": "t2_fact", "value": 1})
    fake_clock.advance(120)  # the stale one is past its idle time, the first is not

    second = await manager.create("t1", "alice")
    assert second.open_contacts == [
        {**no_calls, "session_id": first.id, "at": first.last_active, "language": "en"}
    ]
    stored = await manager.store.load(second.id)
    assert stored is not None and stored.open_contacts == second.open_contacts
    assert second.customer_language == "en"  # no turn yet: the open contact's language
    assert second.short_term == []  # never this session's own facts: nothing promoted twice
    # Listing expired nothing: the stale session ends when the sweeper or its owner finds it.
    assert [s.id for s in await manager.open_sessions("t1", "alice")] == [second.id, first.id]
    assert (await manager.store.load(stale.id)) is not None


async def test_resume_reads_the_other_open_sessions_again(
    manager: SessionManager, fake_clock: FakeClock
) -> None:
    first = await manager.create("t1", "alice")
    await _said(manager, first, {"key": "logistics_delay_days", "value": 7})
    second = await manager.create("t1", "alice")
    assert [f["value"] for f in second.open_contacts] == [7]
    fake_clock.advance(5)
    await _said(manager, first, {"key": "repeat_contact_count", "value": 3})

    resumed, was_resumed = await manager.open_or_resume("t1", "alice")
    assert was_resumed and resumed.id == second.id
    assert [(f["key"], f["value"]) for f in resumed.open_contacts] == [
        ("logistics_delay_days", 7),
        ("repeat_contact_count", 3),
    ]
    stored = await manager.store.load(second.id)
    assert stored is not None and stored.open_contacts == resumed.open_contacts

    await manager.close("t1", "alice", first.id)
    again, was_resumed = await manager.open_or_resume("t1", "alice")
    assert was_resumed and again.id == second.id and again.open_contacts == []
    stored = await manager.store.load(second.id)
    assert stored is not None and stored.open_contacts == []


async def test_failing_hook_does_not_stop_the_others(
    manager: SessionManager, sink: MemorySink
) -> None:
    seen: list[str] = []

    def broken(session: Session, reason: str) -> None:
        raise RuntimeError("memory is down")

    async def handover(session: Session, reason: str) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append(reason)

    manager.on_destroy(broken)
    manager.on_destroy(handover)
    session = await manager.create("t1", "alice")
    await manager.close("t1", "alice", session.id)
    assert seen == ["closed"]
    failed = sink.events(session.id, "session.hook_failed")
    assert len(failed) == 1 and "memory is down" in failed[0].data["error"]


async def test_ids_are_random_and_carry_a_keyed_user_tag(
    store: SessionStore, fake_clock: FakeClock
) -> None:
    plain = SessionManager(store, SessionSettings(), clock=fake_clock)
    tagged = SessionManager(store, SessionSettings(user_hash_key="k3y"), clock=fake_clock)
    a = await plain.create("t1", "alice")
    b = await tagged.create("t1", "alice")
    assert re.fullmatch(r"ses_[A-Za-z0-9_-]{22}", a.id)  # 16 random bytes = 128 bits
    assert b.id.startswith(f"ses_{user_tag('alice', b'k3y')}_")
    assert "alice" not in b.id


async def test_ids_unique_under_concurrent_creation(
    manager: SessionManager, store: SessionStore
) -> None:
    ids: list[str] = []

    async def create(n: int) -> None:
        ids.append((await manager.create("t1", f"user{n % 7}")).id)

    async with anyio.create_task_group() as tg:
        for n in range(300):
            tg.start_soon(create, n)
    if isinstance(store, MemorySessionStore):  # threads too: the in-process store is shared
        thread_ids: list[str] = []
        lock = threading.Lock()

        def worker() -> None:
            for _ in range(200):
                sid = anyio.run(manager.create, "t1", "threaded").id
                with lock:
                    thread_ids.append(sid)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        ids += thread_ids
        assert len(store) == len(ids)
    assert len(set(ids)) == len(ids)


async def test_background_sweeper_expires_sessions(
    manager: SessionManager, fake_clock: FakeClock
) -> None:
    expired = anyio.Event()
    manager.on_destroy(lambda s, reason: expired.set())
    await manager.create("t1", "alice")
    fake_clock.advance(TTL + 1)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(manager.run_sweeper, 0.01)
            await expired.wait()
            tg.cancel_scope.cancel()


async def test_factory_builds_the_configured_store(fake_clock: FakeClock, tmp_path: Path) -> None:
    default = build_session_store(SessionSettings(), data_dir=tmp_path, clock=fake_clock)
    try:
        assert isinstance(default, SqliteSessionStore)
        assert Path(default.database.path) == tmp_path / "sessions.db"
    finally:
        await default.aclose()
    memory = build_session_store(SessionSettings(store="memory"), data_dir=tmp_path)
    assert isinstance(memory, MemorySessionStore)


@pytest.mark.redis
async def test_factory_builds_redis_and_sessions_cross_workers(
    redis_url: str, fake_clock: FakeClock
) -> None:
    settings = SessionSettings(store="redis", redis_url=redis_url)
    stores = [build_session_store(settings, data_dir=Path("unused")) for _ in range(2)]
    worker_a = SessionManager(stores[0], settings, clock=fake_clock)
    worker_b = SessionManager(stores[1], settings, clock=fake_clock)
    try:
        session = await worker_a.create("t1", "alice")
        await worker_a.append_turn("t1", "alice", session.id, Turn("user", "你好"))
        continued = await worker_b.append_turn("t1", "alice", session.id, Turn("agent", "您好"))
        assert [t.text for t in continued.turns] == ["你好", "您好"]
        await worker_b.close("t1", "alice", session.id)
        with pytest.raises(ConflictError):
            await worker_a.append_turn("t1", "alice", session.id, Turn("user", "?"))
    finally:
        await worker_a.aclose()
        await worker_b.aclose()


async def test_turn_lock_runs_one_turn_of_a_session_at_a_time(manager: SessionManager) -> None:
    """Turns that hold the lock read what the previous one wrote: no conflict, no shared index."""
    session = await manager.create("t1", "alice")
    other = await manager.create("t1", "bob")
    inside: dict[str, int] = {session.id: 0, other.id: 0}
    most: dict[str, int] = {session.id: 0, other.id: 0}

    async def turn(sid: str, user: str, n: int) -> None:
        async with manager.turn_lock(sid):
            inside[sid] += 1
            most[sid] = max(most[sid], inside[sid])
            current = await manager.get("t1", user, sid)
            index = len(current.turns)
            current.turns.append(Turn("user", f"turn {n}", meta={"index": index}))
            await anyio.lowlevel.checkpoint()
            await manager.save(current)  # would raise ConflictError if two overlapped
            inside[sid] -= 1

    async with anyio.create_task_group() as tg:
        for n in range(20):
            tg.start_soon(turn, session.id, "alice", n)
            tg.start_soon(turn, other.id, "bob", n)
    assert most == {session.id: 1, other.id: 1}
    for sid, user in [(session.id, "alice"), (other.id, "bob")]:
        stored = await manager.get("t1", user, sid)
        assert [t.text for t in stored.turns] == [f"turn {n}" for n in range(20)]  # in order
        assert [t.meta for t in stored.turns] == [{"index": i} for i in range(20)]


async def test_turn_lock_is_released_by_a_failed_or_cancelled_turn(
    manager: SessionManager,
) -> None:
    session = await manager.create("t1", "alice")
    with pytest.raises(RuntimeError):
        async with manager.turn_lock(session.id):
            raise RuntimeError("the turn failed")
    async with manager.turn_lock(session.id), anyio.create_task_group() as tg:
        tg.start_soon(_hold, manager, session.id)
        await anyio.wait_all_tasks_blocked()  # it waits for the lock ...
        tg.cancel_scope.cancel()  # ... and gives up: it must not keep the lock
    with anyio.fail_after(5):
        async with manager.turn_lock(session.id):
            pass


async def _hold(manager: SessionManager, sid: str) -> None:
    async with manager.turn_lock(sid):
        pass


async def test_a_stale_save_raises_conflict_and_keeps_the_other_turn(
    manager: SessionManager,
) -> None:
    session = await manager.create("t1", "alice")
    first = await manager.get("t1", "alice", session.id)
    second = await manager.get("t1", "alice", session.id)
    first.turns.append(Turn("user", "first"))
    await manager.save(first)
    second.turns.append(Turn("user", "second"))
    with pytest.raises(ConflictError) as conflict:
        await manager.save(second)
    assert conflict.value.to_dict() == {
        "code": "conflict",
        "message": "the session changed meanwhile; retry",
        "session_id": session.id,
    }
    assert [t.text for t in (await manager.get("t1", "alice", session.id)).turns] == ["first"]


class _CountingStore(MemorySessionStore):
    """The in-process store, counting the open-session look-ups asked of it."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        self.listed = 0

    async def list_open(self, tenant: str, user: str, limit: int = 20) -> list[Session]:
        self.listed += 1
        return await super().list_open(tenant, user, limit)


async def test_only_opening_a_session_looks_up_the_other_open_ones(fake_clock: FakeClock) -> None:
    store = _CountingStore(fake_clock)
    manager = SessionManager(store, SessionSettings(idle_ttl_s=TTL), clock=fake_clock)
    first = await manager.create("t1", "alice")
    resumed, was_resumed = await manager.open_or_resume("t1", "alice")  # reads them again
    assert was_resumed and resumed.id == first.id and store.listed == 2
    for n in range(5):  # turns: get, append, save — no look-up
        await manager.append_turn("t1", "alice", resumed.id, Turn("user", f"turn {n}"))
        current = await manager.get("t1", "alice", resumed.id)
        await manager.save(current)
    await manager.close("t1", "alice", first.id)
    assert store.listed == 2


class _ArchiveOutage(SqliteSessionArchive):
    """The SQLite archive behind a switch: ``down`` answers as a lost PostgreSQL would."""

    down = False

    async def archive(self, session: Session, reason: str, **kw: Any) -> bool:
        if self.down:
            raise BackendUnavailableError("PostgreSQL session archive: connection refused")
        return await super().archive(session, reason, **kw)


async def test_no_session_ends_without_its_archive(
    store: SessionStore, fake_clock: FakeClock, db: SqliteDatabase
) -> None:
    archive = _ArchiveOutage(db)
    manager = SessionManager(store, SessionSettings(idle_ttl_s=TTL), clock=fake_clock,
                             archive=archive)  # fmt: skip
    calls = _recorder(manager)
    session = await manager.create("t1", "alice")
    await manager.append_turn("t1", "alice", session.id, Turn("user", "我要退货"))
    archive.down = True
    with pytest.raises(BackendUnavailableError):
        await manager.close("t1", "alice", session.id)
    live = await manager.get("t1", "alice", session.id)
    assert live.is_open and [t.text for t in live.turns] == ["我要退货"], "still open, whole"
    fake_clock.advance(TTL + 1)
    with pytest.raises(BackendUnavailableError):
        await manager.sweep()  # the expiry waits for the archive too
    assert calls == [] and (await store.load(session.id)) is not None
    archive.down = False
    assert await manager.sweep() == 1
    assert calls == [(session.id, "expired", 0)]
    record = await archive.get("t1", "alice", session.id)
    assert record is not None and record["turn_count"] == 1
