"""Every FeedbackStore backend honours the same contract: in-process, SQLite, real Redis.

One record per suggestion and event (the latest wins), counts by tenant, intent and kind.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_desk.feedback import MemoryFeedbackStore, SuggestionEvent
from hermes_desk.feedback.sqlite_store import SqliteFeedbackStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    built: Any
    if request.param == "memory":
        built = MemoryFeedbackStore()
    elif request.param == "sqlite":
        built = SqliteFeedbackStore(tmp_path / "feedback.db")
    else:
        from hermes_desk.feedback.redis_store import RedisFeedbackStore

        built = RedisFeedbackStore(request.getfixturevalue("redis_url"), prefix="test:")
    yield built
    await built.aclose()


def _event(event: str, turn: int = 0, *, tenant: str = "acme", session: str = "s1",
           intent: str = "order_status", **extra: Any) -> SuggestionEvent:  # fmt: skip
    return SuggestionEvent(
        tenant=tenant,
        session_id=session,
        turn_index=turn,
        event=event,  # type: ignore[arg-type]
        intent=intent,
        at=1.0 + turn,
        suggestion="您的订单已发货，预计 5 月 23 日送达。",
        **extra,
    )


async def test_events_round_trip_per_session(store: Any) -> None:
    assert await store.put(_event("shown"))
    edited = "您好，订单已发货，预计 5 月 23 日送达，请留意快递电话。"
    assert await store.put(_event("edited", agent_id="agent-1", text=edited))
    assert await store.put(_event("shown", 2))
    assert await store.put(_event("shown", 0, session="s2"))
    found = await store.for_session("acme", "s1")
    assert [(e.turn_index, e.event) for e in found] == [(0, "edited"), (0, "shown"), (2, "shown")]
    assert found[0].text == edited and found[0].agent_id == "agent-1"
    assert found[0].suggestion.startswith("您的订单已发货")
    assert await store.for_session("acme", "nope") == []
    assert await store.for_session("globex", "s1") == [], "tenants are apart"


async def test_the_latest_event_of_a_kind_wins_and_counts_once(store: Any) -> None:
    assert await store.put(_event("rated", useful=True))
    assert not await store.put(_event("rated", useful=False, reason="语气太生硬"))
    [rating] = await store.for_session("acme", "s1")
    assert rating.useful is False and rating.reason == "语气太生硬"
    assert await store.counts("acme") == [("order_status", "not_useful", 1)]


async def test_counts_by_intent_and_kind_per_tenant(store: Any) -> None:
    for turn in range(3):
        await store.put(_event("shown", turn))
    await store.put(_event("inserted", 0))
    await store.put(_event("inserted", 0))  # twice on one suggestion: one inserted suggestion
    await store.put(_event("copied", 1))
    await store.put(_event("rated", 1, useful=True))
    await store.put(_event("shown", 3, intent="logistics"))
    await store.put(_event("rated", 3, intent="logistics", useful=False, reason="答非所问"))
    await store.put(_event("shown", 0, tenant="globex"))
    assert sorted(await store.counts("acme")) == [
        ("logistics", "not_useful", 1),
        ("logistics", "shown", 1),
        ("order_status", "copied", 1),
        ("order_status", "inserted", 1),
        ("order_status", "shown", 3),
        ("order_status", "useful", 1),
    ]
    assert await store.counts("globex") == [("order_status", "shown", 1)]
    assert await store.counts("initech") == []


async def test_concurrent_ratings_of_one_suggestion_leave_one(store: Any) -> None:
    firsts: list[bool] = []

    async def rate(i: int) -> None:
        firsts.append(await store.put(_event("rated", useful=i % 2 == 0, reason=f"r{i}")))

    async with anyio.create_task_group() as group:
        for i in range(8):
            group.start_soon(rate, i)
    assert firsts.count(True) == 1
    counts = await store.counts("acme")
    assert sum(n for _, _, n in counts) == 1, counts
    [kept] = await store.for_session("acme", "s1")
    assert counts[0][1] == ("useful" if kept.useful else "not_useful")


async def test_ping_answers(store: Any) -> None:
    await store.ping()


async def test_put_many_answers_what_put_would_have_for_each(store: Any) -> None:
    assert await store.put(_event("shown", 0))
    firsts = await store.put_many([_event("shown", 0), _event("shown", 1), _event("shown", 1)])
    assert firsts == [False, True, False]
    assert [e.turn_index for e in await store.for_session("acme", "s1")] == [0, 1]
    assert ("order_status", "shown", 2) in await store.counts("acme")
    assert await store.put_many([]) == []
