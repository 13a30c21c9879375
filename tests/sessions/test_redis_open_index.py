"""The Redis store's index of open sessions per owner: sessions from before it, expired keys."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hermes_desk.sessions import RedisSessionStore, Session

pytestmark = [pytest.mark.anyio, pytest.mark.redis]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[RedisSessionStore]:
    built = RedisSessionStore(redis_url, retention_s=3600, prefix="test:open:")
    yield built
    await built.clear()
    await built.aclose()


async def test_a_session_written_before_the_index_is_listed_and_joins_it(
    store: RedisSessionStore,
) -> None:
    older = Session("ses_old", "t1", "alice", 100.0, 100.0)
    await store.save(older, create=True)
    owner = store._open_key("t1", "alice")
    await store._client.delete(owner)  # as a store without the index left it: only u:<owner>
    assert [s.id for s in await store.list_open("t1", "alice")] == ["ses_old"]
    older.last_active = 150.0
    assert await store.touch(older)  # its next touch (or write) puts it in the index
    assert await store._client.smembers(owner) == {"ses_old"}
    newer = Session("ses_new", "t1", "alice", 200.0, 200.0)
    await store.save(newer, create=True)  # u:<owner> names the new one from now on
    assert [s.id for s in await store.list_open("t1", "alice")] == ["ses_new", "ses_old"]


async def test_ids_whose_session_redis_dropped_leave_the_index(store: RedisSessionStore) -> None:
    for sid, at in [("ses_a", 100.0), ("ses_b", 200.0)]:
        await store.save(Session(sid, "t1", "alice", at, at), create=True)
    await store._client.delete("test:open:s:ses_a")  # its safety TTL ran out
    assert [s.id for s in await store.list_open("t1", "alice")] == ["ses_b"]
    assert await store._client.smembers(store._open_key("t1", "alice")) == {"ses_b"}
    ttl = await store._client.pttl(store._open_key("t1", "alice"))
    assert 0 < ttl <= 3_600_000  # the index expires with the owner's sessions
