"""The Redis breaker store's optimistic write: a record changed by another worker after it was
read is never overwritten; the change is planned again from the record stored then."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from hermes_desk.tools import BreakerRecord, BreakerState
from hermes_desk.tools.breaker_redis_store import RedisBreakerStore

pytestmark = [pytest.mark.anyio, pytest.mark.redis]

_PREFIX = "test:breaker:"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[RedisBreakerStore]:
    built = RedisBreakerStore(redis_url, prefix=_PREFIX)
    yield built
    await built.reset()
    await built.aclose()


def _write_behind(redis_url: str, tool: str, record: BreakerRecord) -> None:
    """Another worker's write, done while ``change`` runs (between the read and the store)."""
    import redis

    with redis.Redis.from_url(redis_url) as other:
        other.set(_PREFIX + tool, json.dumps(record.to_dict()))


async def test_a_record_written_meanwhile_is_planned_again(
    store: RedisBreakerStore, redis_url: str
) -> None:
    seen: list[int] = []

    def bump(record: BreakerRecord) -> tuple[BreakerRecord, int]:
        seen.append(record.failures)
        if len(seen) == 1:
            _write_behind(redis_url, "get_order", BreakerRecord(failures=7))
        return BreakerRecord(failures=record.failures + 1), record.failures + 1

    assert await store.update("get_order", bump) == 8
    assert seen == [0, 7]
    assert (await store.get("get_order")).failures == 8


async def test_closing_a_record_opened_meanwhile_is_planned_again(
    store: RedisBreakerStore, redis_url: str
) -> None:
    opened = BreakerRecord(state=BreakerState.OPEN, failures=5, opened_at=1.0, reason="5 failures")
    await store.update("get_order", lambda r: (BreakerRecord(failures=2), None))
    seen: list[BreakerRecord] = []

    def close_unless_open(record: BreakerRecord) -> tuple[BreakerRecord, str]:
        seen.append(record)
        if len(seen) == 1:
            _write_behind(redis_url, "get_order", opened)
        if record.state is BreakerState.OPEN:
            return record, "kept open"
        return BreakerRecord(), "closed"

    assert await store.update("get_order", close_unless_open) == "kept open"
    assert seen == [BreakerRecord(failures=2), opened]
    assert await store.get("get_order") == opened


async def test_an_unchanged_record_is_not_written(store: RedisBreakerStore) -> None:
    await store.update("get_order", lambda r: (BreakerRecord(failures=3), None))
    out = await store.update("get_order", lambda r: (r, r.failures))
    assert out == 3
    assert await store.all() == {"get_order": BreakerRecord(failures=3)}
