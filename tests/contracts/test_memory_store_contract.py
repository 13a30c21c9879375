"""One contract for every MemoryStore backend: SQLite always, PostgreSQL when it runs (both
built by ``build_memory_store``, as the service builds them)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from hermes_desk.config import MemorySettings
from hermes_desk.errors import NotFoundError
from hermes_desk.memory.decay import DecayPolicy
from hermes_desk.memory.fact import CandidateFact, Fact, FactStatus, TagStatus
from hermes_desk.memory.store import MemoryStore, build_memory_store
from hermes_desk.memory.transitions import Outcome, Planner

pytestmark = pytest.mark.anyio

NOW = 1_780_000_000.0
HOUR = 3600.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryStore]:
    if request.param == "sqlite":
        settings = MemorySettings()
    else:
        dsn = request.getfixturevalue("postgres_dsn")
        settings = MemorySettings(store="postgres", postgres_dsn=dsn)
    backend = build_memory_store(settings, database=tmp_path / "memory.db", pool_size=4)
    yield backend
    await backend.aclose()


@pytest.fixture
def planner() -> Planner:
    counter = itertools.count(1)
    return Planner(
        DecayPolicy(0.02, 0.3),
        is_long_term=lambda key: key.startswith("contact_preference_"),
        make_id=lambda: f"fact_{next(counter):04d}",
    )


async def remember(
    store: MemoryStore, planner: Planner, user: str, key: str, value: object,
    confidence: float = 0.9, *, now: float = NOW, tenant: str = "t1",
) -> Outcome:  # fmt: skip
    candidate = CandidateFact(key, value, confidence)

    def plan(current: Fact | None) -> Outcome:
        return planner.remember(tenant, user, candidate, current, now=now, source_session="s1")

    return await store.write(tenant, user, key, plan)


async def test_write_then_read_back_every_field(store: MemoryStore, planner: Planner) -> None:
    outcome = await remember(store, planner, "u1", "logistics_delay_days", {"days": 7, "中": "文"})
    assert outcome.kind == "stored"
    [fact] = await store.facts("t1", "u1")
    assert fact == outcome.fact
    assert fact.value == {"days": 7, "中": "文"}
    assert fact.status is FactStatus.ACTIVE
    # valid_until is when 0.9·e^(−0.02·h) reaches 0.3: h = ln 3 / 0.02 ≈ 54.9 h
    assert fact.valid_until == pytest.approx(NOW + 54.93 * HOUR, rel=1e-5)


async def test_string_values_round_trip(store: MemoryStore, planner: Planner) -> None:
    await remember(store, planner, "u1", "preferred_name", "小王")
    [fact] = await store.facts("t1", "u1")
    assert fact.value == "小王"


async def test_facts_are_scoped_by_tenant_and_user(store: MemoryStore, planner: Planner) -> None:
    mine = await remember(store, planner, "u1", "k", 1)
    await remember(store, planner, "u1", "k", 2, tenant="t2")
    assert [f.value for f in await store.facts("t1", "u1")] == [1]
    assert [f.value for f in await store.facts("t2", "u1")] == [2]
    assert await store.facts("t1", "u2") == []
    assert mine.fact is not None
    for tenant, user in (("t1", "u2"), ("t2", "u1")):
        with pytest.raises(NotFoundError):
            await store.change(tenant, user, mine.fact.id, lambda f, c: planner.delete(f))
    assert len(await store.facts("t1", "u1")) == 1


async def test_reinforce_supersede_and_conflict(store: MemoryStore, planner: Planner) -> None:
    await remember(store, planner, "u1", "k", 7, 0.8)
    again = await remember(store, planner, "u1", "k", 7, 0.6, now=NOW + HOUR)
    assert again.kind == "reinforced"
    assert again.fact is not None and again.fact.confirmations == 2
    assert again.fact.confidence == 0.8 and again.fact.last_confirmed_at == NOW + HOUR
    weak = await remember(store, planner, "u1", "k", 9, 0.5, now=NOW + HOUR)
    assert weak.kind == "conflict"
    strong = await remember(store, planner, "u1", "k", 10, 0.9, now=NOW + 2 * HOUR)
    assert strong.kind == "superseded"
    active = await store.facts("t1", "u1", [FactStatus.ACTIVE])
    assert [(f.value, [h.value for h in f.history]) for f in active] == [(10, [7])]
    [conflict] = await store.facts("t1", "u1", [FactStatus.CONFLICT])
    assert conflict.value == 9 and conflict.conflicts_with == active[0].id


async def test_accept_folds_the_old_active_row(store: MemoryStore, planner: Planner) -> None:
    await remember(store, planner, "u1", "k", 7, 0.9)
    weak = await remember(store, planner, "u1", "k", 8, 0.2)
    assert weak.fact is not None
    done = await store.change(
        "t1", "u1", weak.fact.id, lambda f, c: planner.accept(f, c, now=NOW + 1, kind="approved")
    )
    assert done.fact is not None and done.fact.id == weak.fact.id
    facts = await store.facts("t1", "u1")
    assert [(f.value, f.status) for f in facts] == [(8, FactStatus.ACTIVE)]
    assert [h.value for h in facts[0].history] == [7]


async def test_sweep_archives_atomically_and_keeps_rows(
    store: MemoryStore, planner: Planner
) -> None:
    await remember(store, planner, "u1", "contact_preference_no_calls", True, 0.95)
    await remember(store, planner, "u1", "logistics_delay_days", 7, 0.9)
    await remember(store, planner, "u2", "k", 1, 1.0, now=NOW + 40 * HOUR)
    later = NOW + 60 * HOUR  # 0.95·e^(−1.2) = 0.286 and 0.9·e^(−1.2) = 0.271 < 0.3
    done = await store.sweep(later, lambda f: planner.sweep_one(f, later))
    assert sorted(o.fact.key for o in done if o.fact) == [
        "contact_preference_no_calls",
        "logistics_delay_days",
    ]
    facts = await store.facts("t1", "u1")
    assert {f.status for f in facts} == {FactStatus.ARCHIVED}
    assert all(f.history[-1].reason == "archived" for f in facts)
    [tag] = await store.tags("t1", "u1")
    assert (tag.tag, tag.status, tag.value) == (
        "contact_preference_no_calls",
        TagStatus.CANDIDATE,
        True,
    )
    assert [f.status for f in await store.facts("t1", "u2")] == [FactStatus.ACTIVE]
    assert await store.sweep(later, lambda f: planner.sweep_one(f, later)) == []


async def test_pending_lists_every_tenant_oldest_first(
    store: MemoryStore, planner: Planner
) -> None:
    candidate = CandidateFact("supports_apple_pay", False, 0.7)
    for i, (tenant, user) in enumerate([("t1", "u1"), ("t2", "u9")]):

        def plan(_current: Fact | None, t: str = tenant, u: str = user, n: int = i) -> Outcome:
            return planner.propose(t, u, candidate, now=NOW + n, source_session=None)

        await store.write(tenant, user, candidate.key, plan)
    pending = await store.pending()
    assert [(f.tenant, f.user_id) for f in pending] == [("t1", "u1"), ("t2", "u9")]
    assert await store.facts("t1", "u1", [FactStatus.ACTIVE]) == []


async def test_tags_review(store: MemoryStore, planner: Planner) -> None:
    await remember(store, planner, "u1", "contact_preference_no_sms", True, 0.31)
    later = NOW + 2 * HOUR
    await store.sweep(later, lambda f: planner.sweep_one(f, later))
    with pytest.raises(NotFoundError):
        await store.review_tag("t1", "u2", "contact_preference_no_sms", approve=True, now=later)
    tag = await store.review_tag("t1", "u1", "contact_preference_no_sms", approve=True, now=later)
    assert tag is not None and tag.status is TagStatus.APPROVED and tag.reviewed_at == later
    await store.review_tag("t1", "u1", "contact_preference_no_sms", approve=False, now=later)
    assert await store.tags("t1", "u1") == []
    with pytest.raises(NotFoundError):
        await store.review_tag("t1", "u1", "contact_preference_no_sms", approve=False, now=later)


async def test_delete_removes_the_fact(store: MemoryStore, planner: Planner) -> None:
    done = await remember(store, planner, "u1", "k", 1)
    assert done.fact is not None
    await store.change("t1", "u1", done.fact.id, lambda f, c: planner.delete(f))
    assert await store.facts("t1", "u1") == []
    with pytest.raises(NotFoundError):
        await store.change("t1", "u1", done.fact.id, lambda f, c: planner.delete(f))


async def test_concurrent_writes_leave_one_active_fact(
    store: MemoryStore, planner: Planner
) -> None:
    async def say(value: int) -> None:
        await remember(store, planner, "u1", "k", value, 0.9)

    async with anyio.create_task_group() as tg:
        for value in range(8):
            tg.start_soon(say, value % 2)
    active = await store.facts("t1", "u1", [FactStatus.ACTIVE])
    assert len(active) == 1
    assert len(await store.facts("t1", "u1")) == 1  # equal confidence: supersede, no conflicts
    # every write landed: it either refreshed the value or pushed one into history
    assert 1 <= active[0].confirmations <= 8 - len(active[0].history)


async def test_concurrent_confirmations_are_never_lost(
    store: MemoryStore, planner: Planner
) -> None:
    async def say_often(times: int) -> None:
        for _ in range(times):
            await remember(store, planner, "u1", "k", "same", 0.9)

    async with anyio.create_task_group() as tg:
        for _ in range(6):
            tg.start_soon(say_often, 5)
    [fact] = await store.facts("t1", "u1")
    assert fact.status is FactStatus.ACTIVE and fact.confirmations == 30


async def test_ping_answers_and_aclose_is_idempotent(store: MemoryStore, planner: Planner) -> None:
    await store.ping()
    await remember(store, planner, "u1", "logistics_delay_days", 7)
    await store.aclose()
    await store.aclose()  # a second close does nothing (and neither does the fixture's)
