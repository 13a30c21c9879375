"""One contract for every SessionStore backend: in-process, SQLite and Redis (spec S4, D1).

Besides the lifecycle questions (create, load, touch, retire, find_open, idle_before), every
backend must keep every acknowledged turn: writes are compare-and-set on ``Session.version``, so
concurrent read-modify-write turns through the manager, retried on ``ConflictError``, lose
nothing and get unique indices; and the durable backends give every acknowledged session and turn
back to a new instance on the same data (a restart).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from hermes_desk.config import SessionSettings
from hermes_desk.errors import ConflictError
from hermes_desk.sessions import (
    MemorySessionStore,
    SaveResult,
    Session,
    SessionManager,
    SessionStore,
    SqliteSessionStore,
    Turn,
)
from hermes_desk.testing import FakeClock

pytestmark = pytest.mark.anyio

#: Opens another instance of the backend on the same data: another worker, or the same worker
#: after a restart. (In-process there is nothing else to open: it is the same store.)
Opener = Callable[[], Awaitable[SessionStore]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _opener(
    kind: str, request: pytest.FixtureRequest, clock: FakeClock, tmp_path: Path
) -> AsyncIterator[Opener]:
    opened: list[SessionStore] = []
    shared = MemorySessionStore(clock=clock)

    async def open_store() -> SessionStore:
        store: SessionStore
        if kind == "memory":
            return shared
        if kind == "sqlite":
            store = SqliteSessionStore.open(tmp_path / "sessions.db", clock=clock)
        else:
            from hermes_desk.sessions import RedisSessionStore

            store = RedisSessionStore(request.getfixturevalue("redis_url"), retention_s=3600)
        opened.append(store)
        return store

    yield open_store
    for store in opened:
        await store.aclose()


_ALL = ["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)]
_DURABLE = ["sqlite", pytest.param("redis", marks=pytest.mark.redis)]


@pytest.fixture(params=_ALL)
async def opener(
    request: pytest.FixtureRequest, fake_clock: FakeClock, tmp_path: Path
) -> AsyncIterator[Opener]:
    async for value in _opener(request.param, request, fake_clock, tmp_path):
        yield value


@pytest.fixture(params=_DURABLE)
async def durable(
    request: pytest.FixtureRequest, fake_clock: FakeClock, tmp_path: Path
) -> AsyncIterator[Opener]:
    async for value in _opener(request.param, request, fake_clock, tmp_path):
        yield value


@pytest.fixture
async def store(opener: Opener) -> SessionStore:
    return await opener()


def _session(sid: str, user: str = "u1", at: float = 1000.0, tenant: str = "t1") -> Session:
    return Session(id=sid, tenant=tenant, user=user, created_at=at, last_active=at)


def _texts(session: Session | None) -> list[str]:
    assert session is not None
    return [t.text for t in session.turns]


# -- lifecycle ------------------------------------------------------------------------------------


async def test_create_then_load_round_trips_everything(store: SessionStore) -> None:
    session = _session("ses_a")
    session.turns.append(Turn("user", "我的订单 123456789012 还没到", ts=1000.5))
    session.turns.append(Turn("agent", "查询中", tool_call_id="call_1", name="order_status"))
    session.turns.append(Turn("tool", '{"status":"shipped"}', tool_call_id="call_1"))
    session.slots["order_id"] = "123456789012"
    session.short_term.append({"key": "logistics_delay_days", "value": 7})
    assert await store.save(session, create=True) is SaveResult.WRITTEN
    assert session.version == 1

    loaded = await store.load("ses_a")
    assert loaded is not None
    assert loaded.to_dict() == session.to_dict()


async def test_create_refuses_an_existing_id(store: SessionStore) -> None:
    assert await store.save(_session("ses_a", user="u1"), create=True) is SaveResult.WRITTEN
    intruder = _session("ses_a", user="intruder")
    assert await store.save(intruder, create=True) is SaveResult.TAKEN
    assert intruder.version == 0
    loaded = await store.load("ses_a")
    assert loaded is not None and loaded.user == "u1"


async def test_plain_save_needs_a_live_session(store: SessionStore) -> None:
    assert await store.save(_session("ses_missing")) is SaveResult.RETIRED
    assert await store.load("ses_missing") is None


async def test_save_updates_and_touch_renews(store: SessionStore) -> None:
    session = _session("ses_a")
    await store.save(session, create=True)
    session.slots["intent"] = "order_status"
    session.last_active = 1500.0
    assert await store.save(session) is SaveResult.WRITTEN
    session.last_active = 1800.0
    assert await store.touch(session)
    loaded = await store.load("ses_a")
    assert loaded is not None
    assert loaded.slots == {"intent": "order_status"}
    assert loaded.last_active == 1800.0


async def test_retire_wins_once_and_leaves_a_tombstone(store: SessionStore) -> None:
    session = _session("ses_a")
    session.turns.append(Turn("user", "hello"))
    await store.save(session, create=True)
    session.status = "closed"
    results = [
        await store.retire(session, tombstone_s=60),
        await store.retire(session, tombstone_s=60),
    ]
    assert results == [True, False]
    stone = await store.load("ses_a")
    assert stone is not None
    assert stone.status == "closed" and stone.turns == [] and stone.user == "u1"
    # A retired session never comes back: not by save (even at the right version), not by
    # touch, not by create.
    session.status = "open"
    assert await store.save(session) is SaveResult.RETIRED
    assert not await store.touch(session)
    assert await store.save(session, create=True) is SaveResult.TAKEN
    assert await store.find_open("t1", "u1") is None
    assert await store.idle_before(10_000.0) == []
    stone = await store.load("ses_a")
    assert stone is not None and stone.status == "closed" and stone.turns == []


async def test_retire_without_tombstone_forgets_the_id(store: SessionStore) -> None:
    session = _session("ses_a")
    await store.save(session, create=True)
    assert await store.retire(session, tombstone_s=0)
    assert await store.load("ses_a") is None
    assert await store.save(session) is SaveResult.RETIRED
    assert await store.load("ses_a") is None


async def test_concurrent_retire_has_exactly_one_winner(store: SessionStore) -> None:
    session = _session("ses_a")
    await store.save(session, create=True)
    wins: list[bool] = []

    async def retire() -> None:
        wins.append(await store.retire(_session("ses_a"), tombstone_s=0))

    async with anyio.create_task_group() as tg:
        for _ in range(20):
            tg.start_soon(retire)
    assert wins.count(True) == 1


async def test_find_open_tracks_the_latest_session_per_owner(store: SessionStore) -> None:
    first, second = _session("ses_1"), _session("ses_2")
    await store.save(first, create=True)
    await store.save(second, create=True)
    await store.save(_session("ses_other", user="u2"), create=True)
    await store.save(_session("ses_t2", tenant="t2"), create=True)
    assert await store.find_open("t1", "u1") == "ses_2"
    assert await store.find_open("t1", "u2") == "ses_other"
    assert await store.find_open("t2", "u1") == "ses_t2"
    assert await store.find_open("t1", "nobody") is None
    await store.retire(first, tombstone_s=0)  # an older session leaving keeps the newer one
    assert await store.find_open("t1", "u1") == "ses_2"


async def test_list_open_gives_every_live_session_of_one_owner_latest_first(
    opener: Opener,
) -> None:
    store, other_worker = await opener(), await opener()
    for sid, at in [("ses_old", 100.0), ("ses_new", 300.0), ("ses_mid", 200.0)]:
        session = _session(sid, at=at)
        session.short_term.append({"key": "logistics_delay_days", "value": int(at)})
        await store.save(session, create=True)
    await store.save(_session("ses_u2", user="u2", at=400.0), create=True)
    await store.save(_session("ses_t2", tenant="t2", at=500.0), create=True)

    listed = await other_worker.list_open("t1", "u1")
    assert [s.id for s in listed] == ["ses_new", "ses_mid", "ses_old"]
    assert [s.short_term for s in listed] == [
        [{"key": "logistics_delay_days", "value": v}] for v in (300, 200, 100)
    ]
    assert all(s.version == 1 and s.is_open for s in listed)
    assert [s.id for s in await store.list_open("t2", "u1")] == ["ses_t2"]  # tenants apart
    assert [s.id for s in await store.list_open("t1", "u2")] == ["ses_u2"]
    assert await store.list_open("t1", "nobody") == []
    assert [s.id for s in await store.list_open("t1", "u1", limit=2)] == ["ses_new", "ses_mid"]

    renewed = _session("ses_old", at=100.0)
    renewed.last_active = 900.0
    assert await store.touch(renewed)  # renewing an old one makes it the most recent
    assert [s.id for s in await other_worker.list_open("t1", "u1")] == [
        "ses_old",
        "ses_new",
        "ses_mid",
    ]
    await store.retire(_session("ses_mid"), tombstone_s=60)  # a tombstone is not open
    await store.retire(_session("ses_new"), tombstone_s=0)
    listed = await other_worker.list_open("t1", "u1")
    assert [s.id for s in listed] == ["ses_old"] and listed[0].last_active == 900.0
    # A copy changes nothing stored.
    listed[0].short_term.clear()
    again = await store.list_open("t1", "u1")
    assert again[0].short_term == [{"key": "logistics_delay_days", "value": 100}]


async def test_open_contacts_round_trip_and_leave_with_the_tombstone(store: SessionStore) -> None:
    session = _session("ses_b")
    session.open_contacts.append(
        {"key": "contact_preference_no_calls", "value": True, "session_id": "ses_a", "at": 900.0}
    )
    await store.save(session, create=True)
    loaded = await store.load("ses_b")
    assert loaded is not None and loaded.open_contacts == session.open_contacts
    session.status = "closed"
    assert await store.retire(session, tombstone_s=60)
    stone = await store.load("ses_b")
    assert stone is not None and stone.status == "closed" and stone.open_contacts == []


async def test_idle_before_lists_oldest_first_and_respects_limit(store: SessionStore) -> None:
    for sid, at in [("ses_c", 300.0), ("ses_a", 100.0), ("ses_b", 200.0), ("ses_new", 900.0)]:
        await store.save(_session(sid, at=at), create=True)
    assert await store.idle_before(250.0) == ["ses_a", "ses_b"]
    assert await store.idle_before(300.0, limit=2) == ["ses_a", "ses_b"]
    renewed = _session("ses_a", at=100.0)
    renewed.last_active = 950.0
    await store.touch(renewed)
    assert await store.idle_before(300.0) == ["ses_b", "ses_c"]
    await store.retire(_session("ses_b"), tombstone_s=60)
    assert await store.idle_before(300.0) == ["ses_c"]


# -- versions: no write overwrites another --------------------------------------------------------


async def test_every_write_raises_the_version_by_one(store: SessionStore) -> None:
    session = _session("ses_a")
    await store.save(session, create=True)
    for expected in (2, 3, 4):
        session.turns.append(Turn("user", f"turn {expected}"))
        assert await store.save(session) is SaveResult.WRITTEN
        assert session.version == expected
        loaded = await store.load("ses_a")
        assert loaded is not None and loaded.version == expected


async def test_a_stale_save_is_refused_and_changes_nothing(opener: Opener) -> None:
    worker_a, worker_b = await opener(), await opener()
    await worker_a.save(_session("ses_a"), create=True)
    first = await worker_a.load("ses_a")
    second = await worker_b.load("ses_a")
    assert first is not None and second is not None and first.version == second.version == 1

    first.turns.append(Turn("user", "我要退货"))
    assert await worker_a.save(first) is SaveResult.WRITTEN
    second.turns.append(Turn("user", "查一下物流"))
    second.slots["intent"] = "logistics"
    assert await worker_b.save(second) is SaveResult.STALE
    assert second.version == 1  # the loser's copy is left as it was

    for worker in (worker_a, worker_b):
        stored = await worker.load("ses_a")
        assert _texts(stored) == ["我要退货"]
        assert stored is not None and stored.slots == {} and stored.version == 2
    # Read again, redo, write: now it lands after the other turn.
    again = await worker_b.load("ses_a")
    assert again is not None
    again.turns.append(Turn("user", "查一下物流"))
    assert await worker_b.save(again) is SaveResult.WRITTEN
    assert _texts(await worker_a.load("ses_a")) == ["我要退货", "查一下物流"]


async def test_touch_neither_bumps_the_version_nor_drops_turns(store: SessionStore) -> None:
    await store.save(_session("ses_a"), create=True)
    old_copy = await store.load("ses_a")  # a copy from before the next turn
    writer = await store.load("ses_a")
    assert old_copy is not None and writer is not None
    writer.turns.append(Turn("user", "第一句"))
    await store.save(writer)

    old_copy.last_active = 1600.0  # renewing from a copy that lacks the turn
    assert await store.touch(old_copy)
    stored = await store.load("ses_a")
    assert stored is not None
    assert _texts(stored) == ["第一句"]
    assert stored.version == 2 and stored.last_active == 1600.0
    # A copy read before the touch is still current: touching is not writing.
    writer.turns.append(Turn("agent", "好的"))
    assert await store.save(writer) is SaveResult.WRITTEN
    assert _texts(await store.load("ses_a")) == ["第一句", "好的"]


async def test_a_loaded_copy_changes_nothing_until_saved(store: SessionStore) -> None:
    await store.save(_session("ses_a"), create=True)
    copy = await store.load("ses_a")
    assert copy is not None
    copy.turns.append(Turn("user", "unsaved"))
    copy.slots["intent"] = "unsaved"
    copy.short_term.append({"key": "unsaved"})
    stored = await store.load("ses_a")
    assert stored is not None
    assert stored.turns == [] and stored.slots == {} and stored.short_term == []


async def test_concurrent_turns_through_the_manager_lose_nothing(
    opener: Opener, fake_clock: FakeClock
) -> None:
    """The bug this guards: 20 concurrent turns on one session, each `get` → append → `save`,
    all answered but the transcript kept 2 and 18 shared a turn index."""
    settings = SessionSettings()
    workers = [
        SessionManager(await opener(), settings, clock=fake_clock),
        SessionManager(await opener(), settings, clock=fake_clock),
    ]
    session = await workers[0].create("t1", "alice")
    turns = 20
    read_first = anyio.Event()
    readers = 0
    conflicts = 0
    indices: dict[str, int] = {}

    async def turn(n: int) -> None:
        nonlocal readers, conflicts
        manager = workers[n % 2]
        first_try = True
        while True:
            current = await manager.get("t1", "alice", session.id)
            if first_try:  # everyone reads the same version before anyone writes
                first_try = False
                readers += 1
                if readers == turns:
                    read_first.set()
                await read_first.wait()
            index = len(current.turns)
            current.turns.append(Turn("user", f"turn {n}", meta={"index": index}))
            await anyio.lowlevel.checkpoint()
            try:
                await manager.save(current)
            except ConflictError as exc:
                assert exc.message == "the session changed meanwhile; retry"
                assert exc.details == {"session_id": session.id}
                conflicts += 1
                continue
            indices[f"turn {n}"] = index
            return

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            for n in range(turns):
                tg.start_soon(turn, n)

    assert conflicts >= turns - 1  # all read one version: one write won, the others were told
    for manager in workers:
        stored = await manager.get("t1", "alice", session.id)
        assert sorted(_texts(stored)) == sorted(f"turn {n}" for n in range(turns))
        assert [t.meta for t in stored.turns] == [{"index": i} for i in range(turns)]
        assert {indices[t.text] for t in stored.turns} == set(range(turns))
        assert stored.version == 1 + turns


# -- durability ---------------------------------------------------------------------------------


async def test_a_reopened_store_returns_every_acknowledged_session_and_turn(
    durable: Opener, fake_clock: FakeClock
) -> None:
    settings = SessionSettings()
    before = SessionManager(await durable(), settings, clock=fake_clock)
    sessions = [await before.create("t1", f"user{n}") for n in range(5)]
    for n, session in enumerate(sessions):
        for k in range(n + 1):
            await before.append_turn("t1", session.user, session.id, Turn("user", f"{n}.{k}"))
    fake_clock.advance(30)
    renewed = await before.get("t1", "user4", sessions[4].id)
    renewed.slots["order_id"] = "123456789012"
    renewed.short_term.append({"key": "logistics_delay_days", "value": 7})
    await before.save(renewed)
    closed = await before.close("t1", "user0", sessions[0].id)
    stale = await before.get("t1", "user1", sessions[1].id)  # read before the restart

    after = SessionManager(await durable(), settings, clock=fake_clock)  # the restart
    for n, session in enumerate(sessions[1:], start=1):
        found = await after.get("t1", session.user, session.id)
        assert found.is_open
        assert _texts(found) == [f"{n}.{k}" for k in range(n + 1)]
        assert found.version == 1 + (n + 1) + (1 if n == 4 else 0)
        assert await after.store.find_open("t1", session.user) == session.id
        assert [s.id for s in await after.store.list_open("t1", session.user)] == [session.id]
    found = await after.get("t1", "user4", sessions[4].id)
    assert found.slots == {"order_id": "123456789012"}
    assert found.short_term == [{"key": "logistics_delay_days", "value": 7}]
    assert found.last_active == renewed.last_active
    assert sorted(await after.store.idle_before(fake_clock.now())) == sorted(
        s.id for s in sessions[1:]
    )
    # What was retired before the restart stays retired after it.
    stone = await after.get("t1", "user0", closed.id)
    assert stone.status == "closed" and stone.turns == []
    assert await after.store.find_open("t1", "user0") is None
    assert await after.store.list_open("t1", "user0") == []
    with pytest.raises(ConflictError):
        await after.append_turn("t1", "user0", closed.id, Turn("user", "还在吗"))
    # Versions carry over: a copy read before the restart and written since is stale.
    await after.append_turn("t1", "user1", sessions[1].id, Turn("agent", "after"))
    stale.turns.append(Turn("user", "lost?"))
    with pytest.raises(ConflictError, match="changed meanwhile"):
        await before.save(stale)
    assert _texts(await after.get("t1", "user1", sessions[1].id)) == ["1.0", "1.1", "after"]


async def test_ping_answers_and_aclose_is_idempotent(opener: Opener) -> None:
    store = await opener()
    await store.ping()
    assert await store.save(_session("sess_ping"), create=True) is SaveResult.WRITTEN
    await store.aclose()
    await store.aclose()  # a second close does nothing (and neither does the fixture's)
