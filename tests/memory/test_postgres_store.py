"""PostgreSQL-only paths of the memory store: a lost optimistic race, the locking fallback."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from hermes_desk.memory.decay import DecayPolicy
from hermes_desk.memory.fact import CandidateFact, Fact, FactStatus
from hermes_desk.memory.transitions import Outcome, Planner

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

NOW = 1_780_000_000.0


@pytest.fixture
async def store(postgres_dsn: str) -> AsyncIterator[Any]:
    from hermes_desk.memory.postgres_store import PostgresMemoryStore

    backend = await PostgresMemoryStore.open(postgres_dsn, max_size=4)
    yield backend
    await backend.aclose()


@pytest.fixture
def planner() -> Planner:
    counter = itertools.count(1)
    return Planner(DecayPolicy(0.02, 0.3), make_id=lambda: f"fact_{next(counter):04d}")


def confirm(planner: Planner, calls: list[Fact | None] | None = None) -> Any:
    candidate = CandidateFact("k", 7, 0.9)

    def plan(current: Fact | None) -> Outcome:
        if calls is not None:
            calls.append(current)
        return planner.remember("t1", "u1", candidate, current, now=NOW, source_session="s1")

    return plan


async def test_a_new_key_is_planned_once(store: Any, planner: Planner) -> None:
    calls: list[Fact | None] = []
    outcome = await store.write("t1", "u1", "k", confirm(planner, calls))
    assert calls == [None] and outcome.kind == "stored"
    assert [f.id for f in await store.facts("t1", "u1")] == [outcome.fact.id]


async def test_an_existing_key_is_planned_again_with_its_fact(store: Any, planner: Planner) -> None:
    first = await store.write("t1", "u1", "k", confirm(planner))
    calls: list[Fact | None] = []
    outcome = await store.write("t1", "u1", "k", confirm(planner, calls))
    assert calls == [None, first.fact]  # the guess, then the fact the server handed back
    assert outcome.kind == "reinforced"
    [fact] = await store.facts("t1", "u1")
    assert fact == outcome.fact and fact.confirmations == 2


async def test_a_write_that_lost_a_race_is_planned_again(
    store: Any, planner: Planner, postgres_dsn: str
) -> None:
    import psycopg

    await store.write("t1", "u1", "k", confirm(planner))
    calls: list[Fact | None] = []
    plan = confirm(planner, calls)

    def racing_plan(current: Fact | None) -> Outcome:
        if current is not None and current.confirmations == 1:
            # another worker confirms the fact between our look and our write
            with psycopg.connect(postgres_dsn, autocommit=True) as other:
                other.execute("UPDATE memory_facts SET confirmations = 40 WHERE key = 'k'")
        return plan(current)  # type: ignore[no-any-return]

    outcome = await store.write("t1", "u1", "k", racing_plan)
    assert [c.confirmations if c else None for c in calls] == [None, 1, 40]
    assert outcome.kind == "reinforced"
    [fact] = await store.facts("t1", "u1")
    assert fact.confirmations == 41


async def test_an_insert_that_lost_a_race_is_planned_again(
    store: Any, planner: Planner, postgres_dsn: str
) -> None:
    import psycopg

    other = Planner(DecayPolicy(0.02, 0.3), make_id=lambda: "fact_other").remember(
        "t1", "u1", CandidateFact("k", 7, 0.9), None, now=NOW, source_session="s0"
    )
    assert other.fact is not None
    with psycopg.connect(postgres_dsn) as conn:  # an uncommitted insert of the same key
        conn.execute(
            "SELECT memory_apply(%s::jsonb)", (f'[{{"op": "save", "row": {_json(other.fact)}}}]',)
        )
        calls: list[Fact | None] = []
        result: list[Outcome] = []

        async def write() -> None:
            result.append(await store.write("t1", "u1", "k", confirm(planner, calls)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(write)
            await _wait_for_lock_waiter(postgres_dsn)  # our insert waits on the unique index
            conn.commit()
    assert calls[0] is None and calls[1] is not None and calls[1].id == "fact_other"
    assert result[0].kind == "reinforced"
    facts = await store.facts("t1", "u1")
    assert [(f.id, f.confirmations) for f in facts] == [("fact_other", 2)]


async def test_the_locking_path_keeps_every_confirmation(
    store: Any, planner: Planner, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_desk.memory import postgres_store

    monkeypatch.setattr(postgres_store, "_OPTIMISTIC_TRIES", 0)

    async def say_often(times: int) -> None:
        for _ in range(times):
            await store.write("t1", "u1", "k", confirm(planner))

    async with anyio.create_task_group() as tg:
        for _ in range(4):
            tg.start_soon(say_often, 5)
    [fact] = await store.facts("t1", "u1")
    assert fact.status is FactStatus.ACTIVE and fact.confirmations == 20


async def test_archive_and_tag_are_applied_in_one_write(store: Any) -> None:
    planner = Planner(DecayPolicy(0.02, 0.3), is_long_term=lambda key: True)
    candidate = CandidateFact("contact_preference_no_calls", True, 0.95)

    def plan_at(now: float) -> Any:
        def plan(current: Fact | None) -> Outcome:
            return planner.remember("t1", "u1", candidate, current, now=now, source_session="s")

        return plan

    await store.write("t1", "u1", candidate.key, plan_at(NOW))
    later = await store.write("t1", "u1", candidate.key, plan_at(NOW + 100 * 3600))
    assert later.kind == "stored" and len(later.archived) == 1
    statuses = sorted(f.status.value for f in await store.facts("t1", "u1"))
    assert statuses == ["active", "archived"]
    [tag] = await store.tags("t1", "u1")
    assert tag.tag == candidate.key and tag.value is True


def _json(fact: Fact) -> str:
    import json

    return json.dumps(fact.to_dict())


async def _wait_for_lock_waiter(dsn: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for _ in range(2000):
            cur = await conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND query LIKE '%%memory_write%%'"
            )
            row = await cur.fetchone()
            if row and row[0]:
                return
            await anyio.sleep(0.005)
    raise AssertionError("the write never waited on the uncommitted insert")


async def test_a_lost_server_is_unavailable_not_a_crash(store: Any, postgres_dsn: str) -> None:
    """Connections the server drops (a restart, a failover) answer BackendUnavailableError —
    the API's retryable 503 — and the pool recovers once the server answers again."""
    import psycopg

    from hermes_desk.errors import BackendUnavailableError

    assert await store.facts("t1", "u1") == []
    async with store._connection() as conn:  # the pool's connection, to end it from outside
        row = await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone()
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        # The way a server restart or a failover ends it.
        admin.execute("SELECT pg_terminate_backend(%s)", (row["pid"],))
    failures = 0
    for _ in range(5):
        try:
            assert await store.facts("t1", "u1") == []
            break
        except BackendUnavailableError:
            failures += 1
    else:
        pytest.fail("the store did not recover after its connections were dropped")
    assert failures <= 4, failures


async def test_an_unreachable_server_is_unavailable() -> None:
    from hermes_desk.errors import BackendUnavailableError
    from hermes_desk.memory.postgres_store import PostgresMemoryStore

    store = PostgresMemoryStore("postgresql://127.0.0.1:1/test", timeout_s=0.5)
    with pytest.raises(BackendUnavailableError, match="PostgreSQL memory store"):
        await store.facts("t1", "u1")
    await store.aclose()
