"""A suggestion event as a dict: what the stores keep (every field, in order)."""

from __future__ import annotations

from dataclasses import asdict

from hermes_desk.feedback import SuggestionEvent


def test_an_event_as_a_dict_holds_every_field_in_order_and_comes_back_the_same() -> None:
    event = SuggestionEvent(
        tenant="acme", session_id="ses_1", turn_index=2, event="rated", intent="logistics",
        at=1.5, suggestion="您好", agent_id="agent-7", useful=False, reason="太长", text=None,
    )  # fmt: skip
    assert list(event.to_dict().items()) == list(asdict(event).items())
    assert SuggestionEvent.from_dict(event.to_dict()) == event
