"""One thing an agent did with a suggested reply, and the counts the report is made of.

A suggestion is the reply the console showed for one customer turn: ``(tenant, session_id,
turn_index)``. Per suggestion the store keeps at most one record of each kind of event (the
latest wins), so counts say *how many suggestions* were inserted, copied, edited or rated, and a
rating the agent changes counts once, as its last value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args

__all__ = [
    "AGENT_EVENTS",
    "COUNT_KINDS",
    "MAX_REASON_CHARS",
    "FeedbackEvent",
    "SuggestionEvent",
    "SuggestionTally",
    "report",
]

FeedbackEvent = Literal["shown", "inserted", "copied", "edited", "rated"]

#: The events the agent sends (``shown`` is recorded by the service when a turn answers).
AGENT_EVENTS: tuple[str, ...] = tuple(e for e in get_args(FeedbackEvent) if e != "shown")

#: The longest reason a rating may give.
MAX_REASON_CHARS = 500

#: What is counted: every event but ``rated``, which counts as ``useful`` or ``not_useful``.
COUNT_KINDS = ("shown", "inserted", "copied", "edited", "useful", "not_useful")


@dataclass(frozen=True, slots=True)
class SuggestionEvent:
    """One event on one suggestion.

    Attributes:
        suggestion: the reply as the console showed it.
        text: the agent's own version (``edited``, and any event sent with the edited text).
        useful / reason: the rating (``rated`` only).
    """

    tenant: str
    session_id: str
    turn_index: int
    event: FeedbackEvent
    intent: str
    at: float
    suggestion: str = ""
    agent_id: str | None = None
    useful: bool | None = None
    reason: str | None = None
    text: str | None = None

    @property
    def kind(self) -> str:
        """The count this event adds to (``useful`` / ``not_useful`` for a rating)."""
        if self.event == "rated":
            return "useful" if self.useful else "not_useful"
        return self.event

    @property
    def field(self) -> str:
        """Its slot among the session's events: one per turn and event."""
        return f"{self.turn_index}:{self.event}"

    def to_dict(self) -> dict[str, Any]:
        # Every field holds a plain value: no deep copy (``asdict``) is needed.
        return {name: getattr(self, name) for name in _EVENT_FIELDS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SuggestionEvent:
        return cls(**dict(data))


_EVENT_FIELDS = tuple(f.name for f in fields(SuggestionEvent))


@dataclass(slots=True)
class SuggestionTally:
    """Counts by kind (:data:`COUNT_KINDS`)."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNT_KINDS, 0))

    def add(self, kind: str, n: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + n

    def to_dict(self) -> dict[str, Any]:
        c = self.counts
        useful, not_useful = c.get("useful", 0), c.get("not_useful", 0)
        return {
            "shown": c.get("shown", 0),
            "inserted": c.get("inserted", 0),
            "copied": c.get("copied", 0),
            "edited": c.get("edited", 0),
            "rated": {"total": useful + not_useful, "useful": useful, "not_useful": not_useful},
        }


def report(tenant: str, counts: Iterable[tuple[str, str, int]]) -> dict[str, Any]:
    """The metrics body from ``(intent, kind, n)`` rows: totals and the same by intent."""
    total = SuggestionTally()
    by_intent: dict[str, SuggestionTally] = {}
    for intent, kind, n in counts:
        if n <= 0:
            continue
        total.add(kind, n)
        by_intent.setdefault(intent, SuggestionTally()).add(kind, n)
    return {
        "tenant": tenant,
        **total.to_dict(),
        "by_intent": {name: by_intent[name].to_dict() for name in sorted(by_intent)},
    }
