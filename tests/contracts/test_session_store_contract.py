"""One contract for every SessionStore backend: the in-process store and Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from hermes_desk.sessions import MemorySessionStore, Session, SessionStore, Turn
from hermes_desk.testing import FakeClock

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def store(
    request: pytest.FixtureRequest, fake_clock: FakeClock
) -> AsyncIterator[SessionStore]:
    if request.param == "memory":
        yield MemorySessionStore(clock=fake_clock)
        return
    from hermes_desk.sessions import RedisSessionStore

    url = request.getfixturevalue("redis_url")
    redis_store = RedisSessionStore(url, retention_s=3600)
    yield redis_store
    await redis_store.aclose()


def _session(sid: str, user: str = "u1", at: float = 1000.0, tenant: str = "t1") -> Session:
    return Session(id=sid, tenant=tenant, user=user, created_at=at, last_active=at)


async def test_create_then_load_round_trips_everything(store: SessionStore) -> None:
    session = _session("ses_a")
    session.turns.append(Turn("user", "我的订单 123456789012 还没到", ts=1000.5))
    session.turns.append(Turn("agent", "查询中", tool_call_id="call_1", name="order_status"))
    session.turns.append(Turn("tool", '{"status":"shipped"}', tool_call_id="call_1"))
    session.slots["order_id"] = "123456789012"
    session.short_term.append({"key": "logistics_delay_days", "value": 7})
    assert await store.save(session, create=True)

    loaded = await store.load("ses_a")
    assert loaded is not None
    assert loaded.to_dict() == session.to_dict()


async def test_create_refuses_an_existing_id(store: SessionStore) -> None:
    assert await store.save(_session("ses_a", user="u1"), create=True)
    assert not await store.save(_session("ses_a", user="intruder"), create=True)
    loaded = await store.load("ses_a")
    assert loaded is not None and loaded.user == "u1"


async def test_plain_save_needs_a_live_session(store: SessionStore) -> None:
    assert not await store.save(_session("ses_missing"))
    assert await store.load("ses_missing") is None


async def test_save_updates_and_touch_renews(store: SessionStore) -> None:
    session = _session("ses_a")
    await store.save(session, create=True)
    session.slots["intent"] = "order_status"
    session.last_active = 1500.0
    assert await store.save(session)
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
    # A retired session never comes back: not by save, not by touch, not by create.
    session.status = "open"
    assert not await store.save(session)
    assert not await store.touch(session)
    assert not await store.save(session, create=True)
    assert await store.find_open("t1", "u1") is None


async def test_retire_without_tombstone_forgets_the_id(store: SessionStore) -> None:
    session = _session("ses_a")
    await store.save(session, create=True)
    assert await store.retire(session, tombstone_s=0)
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
