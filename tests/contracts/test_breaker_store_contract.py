"""BreakerStateStore contract, run against every backend (in-process and Redis)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest

from hermes_desk.config import BreakerSettings
from hermes_desk.tools import (
    BreakerRecord,
    BreakerState,
    BreakerStateStore,
    MemoryBreakerStore,
    build_breaker_store,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["memory", "redis"])
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[Callable[[], BreakerStateStore]]:
    """A factory of stores that share state (two 'workers' for Redis, one object in memory)."""
    made: list[BreakerStateStore] = []
    if request.param == "memory":
        shared = MemoryBreakerStore()

        def factory() -> BreakerStateStore:
            return shared

    else:
        url = request.getfixturevalue("redis_url")

        def factory() -> BreakerStateStore:
            store = build_breaker_store(BreakerSettings(store="redis", redis_url=url))
            made.append(store)
            return store

    yield factory
    for store in made:
        await store.aclose()


def _bump(record: BreakerRecord) -> tuple[BreakerRecord, int]:
    new = BreakerRecord(failures=record.failures + 1)
    return new, new.failures


async def test_unknown_tool_is_closed(stores: Callable[[], BreakerStateStore]) -> None:
    store = stores()
    assert await store.get("get_order") == BreakerRecord()
    assert await store.all() == {}


async def test_update_stores_and_returns(stores: Callable[[], BreakerStateStore]) -> None:
    store = stores()
    opened = BreakerRecord(state=BreakerState.OPEN, failures=5, opened_at=10.0, reason="5 failures")
    out = await store.update("get_order", lambda r: (opened, "done"))
    assert out == "done"
    assert await stores().get("get_order") == opened
    assert await store.all() == {"get_order": opened}
    # Back to closed: the record disappears from the listing.
    await store.update("get_order", lambda r: (BreakerRecord(), None))
    assert await store.all() == {}


async def test_concurrent_updates_from_two_workers_lose_nothing(
    stores: Callable[[], BreakerStateStore],
) -> None:
    first, second = stores(), stores()
    results: list[Any] = []

    async def hammer(store: BreakerStateStore) -> None:
        for _ in range(20):
            results.append(await store.update("get_order", _bump))

    async with anyio.create_task_group() as tg:
        tg.start_soon(hammer, first)
        tg.start_soon(hammer, second)
    assert (await first.get("get_order")).failures == 40
    assert sorted(results) == list(range(1, 41))  # every update saw a distinct state


async def test_reset_one_and_all(stores: Callable[[], BreakerStateStore]) -> None:
    store = stores()
    await store.update("a", _bump)
    await store.update("b", _bump)
    await store.reset("a")
    assert set(await store.all()) == {"b"}
    await store.reset()
    assert await store.all() == {}


async def test_ping_answers_and_aclose_is_idempotent(
    stores: Callable[[], BreakerStateStore],
) -> None:
    store = stores()
    await store.ping()
    await store.update("get_order", _bump)
    await store.aclose()
    await store.aclose()  # a second close does nothing (and neither does the fixture's)
