"""The feedback service over a real session manager: the turn's suggestion is found in the
session, the agent's text is kept beside it (through the redaction hook), bad fields change
nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest

from hermes_desk.errors import NotFoundError, ValidationError
from hermes_desk.feedback import MemoryFeedbackStore, SuggestionFeedback, SuggestionMetrics
from hermes_desk.sessions import SessionManager, Turn
from hermes_desk.sessions.store import MemorySessionStore
from hermes_desk.testing.clock import FakeClock

pytestmark = pytest.mark.anyio

SUGGESTION = "您好，订单 202405201234 当前状态：运输中。"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _mask_phones(tenant: str, text: str) -> str:
    return re.sub(r"1[3-9]\d{9}", lambda m: "*" * 7 + m.group()[-4:], text)


async def _setup() -> tuple[SuggestionFeedback, MemoryFeedbackStore, str, int]:
    clock = FakeClock()
    sessions = SessionManager(MemorySessionStore(clock=clock), clock=clock)
    session = await sessions.create("acme", "u1001")
    turn = Turn("user", "我的订单到哪了", meta={"intent": "order_status", "suggestion": SUGGESTION})
    session.turns.append(turn)
    await sessions.save(session)
    store = MemoryFeedbackStore()
    service = SuggestionFeedback(
        store, sessions, metrics=SuggestionMetrics(), clock=clock, max_text_chars=200,
        redact=_mask_phones,
    )  # fmt: skip
    return service, store, session.id, 0


async def test_the_edited_text_is_kept_redacted_beside_the_suggestion() -> None:
    service, store, sid, turn = await _setup()
    edited = f"{SUGGESTION} 有问题请拨打 13912345678。"
    answer = await service.record("acme", "u1001", sid, turn, event="copied", agent_id="a1",
                                  text=edited)  # fmt: skip
    assert [r["event"] for r in answer["recorded"]] == ["edited", "copied"]
    kept = {e.event: e for e in await store.for_session("acme", sid)}
    assert kept["edited"].text == f"{SUGGESTION} 有问题请拨打 *******5678。"
    assert kept["edited"].suggestion == SUGGESTION and kept["copied"].intent == "order_status"
    assert service.metrics.count("acme", "order_status", "edited") == 1
    report = await service.report("acme")
    assert report["copied"] == 1 and report["by_intent"]["order_status"]["edited"] == 1


@pytest.mark.parametrize(
    "fields",
    [
        {"event": "rated"},
        {"event": "copied", "useful": True},
        {"event": "inserted", "reason": "x"},
        {"event": "edited"},
        {"event": "edited", "text": SUGGESTION},
        {"event": "shown"},
        {"event": "rated", "useful": False, "reason": "r" * 501},
        {"event": "inserted", "text": "x" * 201},
        {"event": "inserted", "text": "a\x07b"},
    ],
)
async def test_bad_fields_are_refused_and_record_nothing(fields: dict[str, Any]) -> None:
    service, store, sid, turn = await _setup()
    event = fields.pop("event")
    with pytest.raises(ValidationError):
        await service.record("acme", "u1001", sid, turn, event=event, agent_id="a1", **fields)
    assert await store.for_session("acme", sid) == []


async def test_another_tenant_customer_or_turn_is_not_found() -> None:
    service, store, sid, _ = await _setup()
    for tenant, user, turn in (("globex", "u1001", 0), ("acme", "u1002", 0), ("acme", "u1001", 1)):
        with pytest.raises(NotFoundError):
            await service.record(tenant, user, sid, turn, event="copied", agent_id="a1")
    assert await store.for_session("acme", sid) == []


async def test_a_shown_suggestion_is_counted_once_and_a_broken_store_does_not_fail_the_turn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    service, store, sid, turn = await _setup()
    outcome = {"session_id": sid, "turn_index": turn, "intent": {"name": "order_status"},
               "suggestion": {"text": SUGGESTION}}  # fmt: skip
    await service.shown("acme", outcome)
    await service.shown("acme", outcome)
    await service.flush()
    assert service.metrics.count("acme", "order_status", "shown") == 1
    await service.shown("acme", {**outcome, "suggestion": None})  # an agent line: nothing

    async def broken(events: object) -> list[bool]:
        raise OSError("disk gone")

    store.put_many = broken  # type: ignore[method-assign]
    await service.shown("acme", {**outcome, "turn_index": 5})
    await service.flush()
    assert "could not count 1 shown suggestion(s)" in caplog.text


async def test_shown_suggestions_wait_and_are_written_together_before_a_read() -> None:
    service, store, sid, _ = await _setup()
    batches: list[int] = []
    put_many = store.put_many

    async def counted(events: Any) -> list[bool]:
        batches.append(len(events))
        return await put_many(events)

    store.put_many = counted  # type: ignore[method-assign]
    for index in range(3):
        outcome = {"session_id": sid, "turn_index": index, "intent": {"name": "order_status"},
                   "suggestion": {"text": SUGGESTION}}  # fmt: skip
        await service.shown("acme", outcome)
    assert await store.for_session("acme", sid) == [], "nothing written one by one"
    assert service.metrics.count("acme", "order_status", "shown") == 0
    report = await service.report("acme")
    assert batches == [3], "one write for the three"
    assert report["shown"] == 3
    assert service.metrics.count("acme", "order_status", "shown") == 3
    assert [e["turn_index"] for e in await service.for_session("acme", "u1001", sid)] == [0, 1, 2]


async def test_a_shown_suggestion_is_written_within_the_wait_without_a_read() -> None:
    import asyncio

    service, store, sid, turn = await _setup()
    service.flush_after_s = 0.01
    outcome = {"session_id": sid, "turn_index": turn, "intent": {"name": "order_status"},
               "suggestion": {"text": SUGGESTION}}  # fmt: skip
    await service.shown("acme", outcome)
    for _ in range(200):
        if await store.for_session("acme", sid):
            break
        await asyncio.sleep(0.01)
    assert [e.event for e in await store.for_session("acme", sid)] == ["shown"]


async def test_closing_the_store_writes_the_shown_suggestions_waiting() -> None:
    service, store, sid, turn = await _setup()
    outcome = {"session_id": sid, "turn_index": turn, "intent": {"name": "order_status"},
               "suggestion": {"text": SUGGESTION}}  # fmt: skip
    await service.shown("acme", outcome)
    await service.store.aclose()
    assert [e.event for e in await store.for_session("acme", sid)] == ["shown"]
