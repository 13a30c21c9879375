"""The memory service on a real SQLite file, with a fake clock driving hours."""

from __future__ import annotations

import pytest

from hermes_desk.errors import NotFoundError, ValidationError
from hermes_desk.events import MemorySink
from hermes_desk.memory import (
    CandidateFact,
    FactStatus,
    MemoryService,
    ShortTermMemory,
    TagStatus,
    render_notes,
)
from hermes_desk.testing import FakeClock

pytestmark = pytest.mark.anyio

HOUR = 3600.0
T, U = "acme", "u_12345"


def fact(key: str, value: object, confidence: float = 0.9) -> CandidateFact:
    return CandidateFact(key=key, value=value, confidence=confidence)


async def test_half_life_is_34_7_hours(service: MemoryService, fake_clock: FakeClock) -> None:
    await service.remember(T, U, fact("k", 1, 0.8), "s1")
    fake_clock.advance(34.657 * HOUR)
    [note] = await service.notes(T, U)
    assert note.confidence == pytest.approx(0.4, abs=1e-4)
    assert note.age_s == pytest.approx(34.657 * HOUR)


async def test_below_threshold_leaves_notes_then_is_archived_not_lost(
    service: MemoryService, fake_clock: FakeClock, sink: MemorySink
) -> None:
    done = await service.remember(T, U, fact("logistics_delay_days", 7, 0.9), "s1")
    assert done.fact is not None
    fake_clock.advance(54 * HOUR)  # 0.9·e^(−1.08) = 0.306
    assert [n.value for n in await service.notes(T, U)] == [7]
    fake_clock.advance(2 * HOUR)  # 0.9·e^(−1.12) = 0.294 < 0.3
    assert await service.notes(T, U) == []
    # reading decides nothing: the row is still active until a write transaction archives it
    assert [f.status for f in await service.facts(T, U)] == [FactStatus.ACTIVE]
    archived = await service.sweep_decay()
    assert [f.id for f in archived] == [done.fact.id]
    [kept] = await service.facts(T, U)
    assert kept.status is FactStatus.ARCHIVED and kept.value == 7
    assert kept.history[-1].reason == "archived"
    assert kept.history[-1].confidence == pytest.approx(0.9 * 2.718281828**-1.12, rel=1e-6)
    assert [e.data["fact_id"] for e in sink.events(name="memory.fact.archived")] == [kept.id]
    assert await service.sweep_decay() == []


async def test_archived_preferences_become_tag_candidates_for_review(
    service: MemoryService, fake_clock: FakeClock
) -> None:
    await service.remember(T, U, fact("contact_preference_no_calls", True, 0.95))
    fake_clock.advance(100 * HOUR)
    await service.sweep_decay()
    [tag] = await service.tags(T, U)
    assert tag.status is TagStatus.CANDIDATE
    approved = await service.approve_tag(T, U, "contact_preference_no_calls")
    assert approved.status is TagStatus.APPROVED
    with pytest.raises(NotFoundError):
        await service.approve_tag(T, "someone_else", "contact_preference_no_calls")
    await service.delete_tag(T, U, "contact_preference_no_calls")
    assert await service.tags(T, U) == []


async def test_a_fact_said_again_is_reinforced(
    service: MemoryService, fake_clock: FakeClock
) -> None:
    await service.remember(T, U, fact("logistics_delay_days", 7, 0.9), "s1")
    fake_clock.advance(30 * HOUR)
    [before] = await service.notes(T, U)
    assert before.confidence == pytest.approx(0.9 * 2.718281828**-0.6, rel=1e-6)
    again = await service.remember(T, U, fact("logistics_delay_days", 7, 0.85), "s2")
    assert again.kind == "reinforced"
    [after] = await service.notes(T, U)
    assert after.confidence == pytest.approx(0.9) and after.age_s == 0
    assert after.source_session == "s2"
    fake_clock.advance(50 * HOUR)  # 80 h after first said, 50 h after reinforcement
    assert [n.value for n in await service.notes(T, U)] == [7]


async def test_supersede_versus_conflict_then_review(
    service: MemoryService, fake_clock: FakeClock
) -> None:
    await service.remember(T, U, fact("logistics_delay_days", 7, 0.9), "s1")
    fake_clock.advance(20 * HOUR)  # old one is now 0.9·e^(−0.4) = 0.603
    stronger = await service.remember(T, U, fact("logistics_delay_days", 9, 0.7), "s2")
    assert stronger.kind == "superseded"
    weaker = await service.remember(T, U, fact("logistics_delay_days", 10, 0.5), "s3")
    assert weaker.kind == "conflict"
    assert [n.value for n in await service.notes(T, U)] == [9]
    assert weaker.fact is not None
    approved = await service.approve(T, U, weaker.fact.id)
    assert approved.fact is not None and approved.fact.value == 10
    [active] = await service.facts(T, U, [FactStatus.ACTIVE])
    assert [h.value for h in active.history] == [7, 9]
    assert len(await service.facts(T, U)) == 1


async def test_review_edit_reject_delete(service: MemoryService, fake_clock: FakeClock) -> None:
    done = await service.remember(T, U, fact("refund_amount_expected", 100, 0.6))
    assert done.fact is not None
    edited = await service.edit(T, U, done.fact.id, 120)
    assert edited.fact is not None
    assert (edited.fact.value, edited.fact.confidence, edited.fact.origin.value) == (
        120,
        1.0,
        "agent",
    )
    assert edited.fact.history[-1].reason == "edited" and edited.fact.history[-1].value == 100
    rejected = await service.reject(T, U, done.fact.id)
    assert rejected.fact is not None and rejected.fact.status is FactStatus.REJECTED
    assert await service.notes(T, U) == []
    with pytest.raises(NotFoundError):
        await service.delete(T, "another_user", done.fact.id)
    await service.delete(T, U, done.fact.id)
    assert await service.facts(T, U) == []


async def test_promotion_at_session_end(
    service: MemoryService, fake_clock: FakeClock, sink: MemorySink
) -> None:
    short = ShortTermMemory()
    short.extend(service.extract("我的快递已经超过7天了还没到，太气人了", intent="logistics"))
    short.extend(service.extract("还有，不要给我打电话"))
    short.extend(service.extract("已经等了3天", intent="logistics"))  # one signal: not key
    short.extend(service.extract("物流都超过7天了还没动静", intent="logistics"))
    assert [c.key for c in short.items()] == ["contact_preference_no_calls", "logistics_delay_days"]
    # the session store keeps it as JSON; the destroy hook hands it back
    stored = ShortTermMemory.from_list(short.to_list())
    assert await service.notes(T, U) == []
    promoted = await service.promote_short_term(T, U, "ses_1", stored)
    assert sorted(o.fact.key for o in promoted if o.fact) == [
        "contact_preference_no_calls",
        "logistics_delay_days",
    ]
    notes = await service.notes(T, U)
    assert [n.text for n in notes] == ["不希望接到电话", "物流已超过 7 天"]
    assert all(n.source_session == "ses_1" for n in notes)
    assert "(confidence 0.95, 0.0h ago, session ses_1)" in render_notes(notes)
    assert await service.notes(T, "someone_else") == []
    [event] = sink.events(name="memory.promoted")
    assert event.data["promoted"] == 2


async def test_notes_rank_by_current_confidence_with_floor_and_limit(
    service: MemoryService, fake_clock: FakeClock
) -> None:
    await service.remember(T, U, fact("old_strong", 1, 1.0))
    fake_clock.advance(30 * HOUR)  # 1.0 → 0.549
    await service.remember(T, U, fact("new_weaker", 2, 0.6))
    await service.remember(T, U, fact("below_floor", 3, 0.25))
    notes = await service.notes(T, U)
    assert [n.key for n in notes] == ["new_weaker", "old_strong"]
    assert [n.key for n in await service.notes(T, U, limit=1)] == ["new_weaker"]


async def test_events_carry_no_raw_values(service: MemoryService, sink: MemorySink) -> None:
    await service.remember(T, U, fact("phone_number", "13812345678"), "ses_9")
    [event] = sink.events(name="memory.fact.stored")
    assert event.request_id == "ses_9"
    assert "13812345678" not in repr(event.to_dict())


async def test_bad_candidates_are_refused(service: MemoryService) -> None:
    with pytest.raises(ValidationError):
        await service.remember(T, U, fact("", 1))
    with pytest.raises(ValidationError):
        await service.propose(T, U, "supports_x", True, 1.5)


async def test_observe_writes_key_facts_immediately(service: MemoryService) -> None:
    done = await service.observe(
        T, U, "Please don't call me, I'm fed up", intent="complaint", source_session="s"
    )
    assert [o.fact.key for o in done if o.fact] == ["contact_preference_no_calls"]
    assert await service.observe(T, U, "hello") == []


def _open(key: str, value: object, session: str, at: float, **extra: object) -> dict[str, object]:
    """A short-term fact of another open session, as ``Session.open_contacts`` holds it."""
    return {"key": key, "value": value, "confidence": 0.95, "is_key_fact": True,
            "session_id": session, "at": at, **extra}  # fmt: skip


async def test_notes_show_other_open_contacts_marked_in_the_customers_language(
    service: MemoryService, fake_clock: FakeClock
) -> None:
    await service.remember(T, U, fact("logistics_delay_days", 7, 0.9), "ses_old")
    said_at = fake_clock.now()
    fake_clock.advance(60)
    contacts = [
        _open("contact_preference_channel", "sms", "ses_a", said_at),
        _open("contact_preference_channel", "email", "ses_b", said_at - 30),  # older: loses
        _open("logistics_delay_days", 7, "ses_a", said_at),  # memory has it: shown once
        _open("repeat_contact_count", 3, "ses_a", said_at, is_key_fact=False),  # not a key fact
        _open("refund_amount_expected", 20, "ses_a", said_at, confidence=0.1),  # below the floor
        {"value": "no key"},  # not a fact: skipped
    ]
    notes = await service.notes(T, U, lang="en", open_contacts=contacts)
    assert [(n.key, n.value, n.origin) for n in notes] == [
        ("contact_preference_channel", "sms", "open_contact"),
        ("logistics_delay_days", 7, "memory"),
    ]
    channel = notes[0]
    assert channel.fact_id is None and channel.source_session == "ses_a"
    assert channel.confidence == 0.95 and channel.age_s == 60
    assert (
        channel.text
        == "(said in another open contact, not verified) Prefers contact by text message"
    )
    assert channel.to_dict()["origin"] == "open_contact"
    [zh] = [n for n in await service.notes(T, U, lang="zh", open_contacts=contacts[:1])
            if n.origin == "open_contact"]  # fmt: skip
    assert zh.text == "（另一进行中的会话所述，未核实）希望通过短信联系"
    # The most recent contact's value stands for its key, even when memory shows it already:
    # an older contact's other value is not brought back.
    recent_first = [
        _open("logistics_delay_days", 7, "ses_a", said_at),
        _open("logistics_delay_days", 5, "ses_b", said_at - 30),
    ]
    assert [(n.value, n.origin) for n in await service.notes(T, U, open_contacts=recent_first)] == [
        (7, "memory")
    ]
    # Without open contacts the notes are memory's alone.
    assert [n.origin for n in await service.notes(T, U)] == ["memory"]


async def test_an_open_contacts_fact_that_reached_memory_is_shown_from_memory_only(
    service: MemoryService, fake_clock: FakeClock
) -> None:
    contacts = [_open("logistics_delay_days", 10, "ses_a", fake_clock.now())]
    assert [n.origin for n in await service.notes(T, U, open_contacts=contacts)] == ["open_contact"]
    # ses_a ended saying 10, then another contact corrected it to 12: memory holds 12 from
    # elsewhere, written over ses_a's — the snapshot's 10 is not the customer's current word.
    await service.promote_short_term(T, U, "ses_a", [fact("logistics_delay_days", 10)])
    await service.remember(T, U, fact("logistics_delay_days", 12), "ses_c")
    notes = await service.notes(T, U, open_contacts=contacts)
    assert [(n.value, n.origin) for n in notes] == [(12, "memory")]
    # Another customer's memory never hides (or shows) this customer's open contacts.
    other = await service.notes(T, "someone_else", open_contacts=contacts)
    assert [(n.value, n.origin) for n in other] == [(10, "open_contact")]
