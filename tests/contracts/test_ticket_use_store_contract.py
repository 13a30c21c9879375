"""Every TicketUseStore backend honours the same contract: in-process, SQLite, real Redis.

Two "workers" are two store instances on one backend (two connections to one SQLite file or
one Redis database; in-process, one store is the whole backend): a ticket used on one is
refused on the other, for as long as the ticket lives and no longer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_desk.api.ticket_sqlite_store import SqliteTicketUseStore
from hermes_desk.api.ticket_store import MemoryTicketUseStore, TicketUseStore
from hermes_desk.api.tickets import TICKET_TTL_S, TicketBook

pytestmark = pytest.mark.anyio

KEYS = {"key-acme-0123456789": "acme", "key-globex-0123456789": "globex"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def workers(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[TicketUseStore, TicketUseStore]]:
    """Two workers' stores sharing one backend."""
    pair: tuple[Any, Any]
    if request.param == "memory":
        shared = MemoryTicketUseStore()
        pair = (shared, shared)
    elif request.param == "sqlite":
        path = tmp_path / "tickets.db"
        pair = (SqliteTicketUseStore(path), SqliteTicketUseStore(path))
    else:
        from hermes_desk.api.ticket_redis_store import RedisTicketUseStore

        url = request.getfixturevalue("redis_url")
        pair = (RedisTicketUseStore(url, prefix="test:"), RedisTicketUseStore(url, prefix="test:"))
    yield pair
    for store in pair:
        await store.aclose()


async def test_a_ticket_used_on_one_worker_is_refused_on_the_other(
    workers: tuple[TicketUseStore, TicketUseStore],
) -> None:
    one, two = workers
    assert isinstance(one, TicketUseStore)
    assert await one.use("tk-1", expires_at=1060.0, now=1000.0)
    assert not await two.use("tk-1", expires_at=1060.0, now=1001.0)
    assert not await one.use("tk-1", expires_at=1060.0, now=1059.0), "nor again on the first"
    assert await two.use("tk-2", expires_at=1060.0, now=1001.0), "another ticket is its own"
    assert not await one.use("tk-2", expires_at=1060.0, now=1002.0)


async def test_an_expired_ticket_is_never_recorded(
    workers: tuple[TicketUseStore, TicketUseStore],
) -> None:
    one, two = workers
    assert not await one.use("tk-old", expires_at=1000.0, now=1000.0)
    assert not await two.use("tk-old", expires_at=1000.0, now=1500.0)


async def test_of_two_workers_racing_for_one_ticket_exactly_one_wins(
    workers: tuple[TicketUseStore, TicketUseStore],
) -> None:
    results: list[bool] = []

    async def use(store: TicketUseStore) -> None:
        results.append(await store.use("tk-race", expires_at=1060.0, now=1000.0))

    async with anyio.create_task_group() as group:
        for i in range(12):
            group.start_soon(use, workers[i % 2])
    assert sorted(results) == [False] * 11 + [True]


async def test_a_used_ticket_is_kept_for_its_lifetime_and_no_longer(
    workers: tuple[TicketUseStore, TicketUseStore], request: pytest.FixtureRequest
) -> None:
    one, two = workers
    assert await one.use("tk-life", expires_at=1000.0 + TICKET_TTL_S, now=1000.0)
    if "redis" in request.node.callspec.id:
        # Redis forgets on its own clock: the key lives the ticket's lifetime, no more.
        import redis

        client = redis.Redis.from_url(request.getfixturevalue("redis_url"))
        try:
            ttl_ms = client.pttl("test:ws-ticket:tk-life")
        finally:
            client.close()
        assert 0 < ttl_ms <= TICKET_TTL_S * 1000
        return
    assert not await two.use("tk-life", expires_at=2000.0, now=1000.0 + TICKET_TTL_S - 1)
    # Past its expiry the record is gone: the same id (were it ever signed again) is free.
    assert await two.use("tk-life", expires_at=2000.0, now=1000.0 + TICKET_TTL_S)


async def test_a_ticket_book_on_each_worker_opens_one_socket_in_all(
    workers: tuple[TicketUseStore, TicketUseStore],
) -> None:
    one, two = (TicketBook(KEYS, uses=store) for store in workers)
    ticket, expires_at = one.issue("acme", "s1", "u1001", now=1000.0)
    assert expires_at == 1000.0 + TICKET_TTL_S
    other, _ = one.issue("acme", "s2", "u1001", now=1000.0)
    # Refused for the wrong session or customer, which does not use it up.
    assert await two.redeem(ticket, session_id="s2", user="u1001", now=1001.0) is None
    assert await two.redeem(ticket, session_id="s1", user="u1002", now=1001.0) is None
    grant = await two.redeem(ticket, session_id="s1", user="u1001", now=1001.0)
    assert grant is not None and (grant.tenant, grant.user) == ("acme", "u1001")
    assert await one.redeem(ticket, session_id="s1", user="u1001", now=1002.0) is None
    assert await two.redeem(ticket, session_id="s1", user="", now=1002.0) is None
    assert await one.redeem(other, session_id="s2", user="u1001", now=1002.0) is not None
