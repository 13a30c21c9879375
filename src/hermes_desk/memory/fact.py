"""The records of the memory tiers: facts, their history, long-term tags and notes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Literal

__all__ = [
    "CandidateFact",
    "Fact",
    "FactHistory",
    "FactOrigin",
    "FactStatus",
    "LongTermTag",
    "Note",
    "NoteOrigin",
    "TagStatus",
    "canonical_json",
]


class FactStatus(StrEnum):
    """Where a mid-term fact stands.

    ``active`` facts feed the notes; ``pending`` ones wait for a verifier or a person;
    ``conflict`` ones lost against a stronger value and wait for review; ``archived`` ones left
    mid-term by decay (kept, never lost); ``rejected`` ones were refused.
    """

    ACTIVE = "active"
    PENDING = "pending"
    CONFLICT = "conflict"
    ARCHIVED = "archived"
    REJECTED = "rejected"


class FactOrigin(StrEnum):
    RULE = "rule"  # the deterministic key-fact filter
    MODEL = "model"  # proposed by a model: always enters ``pending`` first
    AGENT = "agent"  # written or edited by a person


class TagStatus(StrEnum):
    CANDIDATE = "candidate"
    APPROVED = "approved"


def canonical_json(value: Any) -> str:
    """The stored form of a value; equal values give equal strings."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class CandidateFact:
    """A fact the filter (or a model, or a person) wants to remember, before any store sees it.

    Attributes:
        key: normalised key, e.g. ``logistics_delay_days``.
        value: any JSON value.
        confidence: 0..1 at the time it was said.
        signals: the key-fact signals found in the utterance (time, quantity, negation, emotion).
        is_key_fact: whether the utterance passed the filter (only those are promoted).
        valid_hours: an optional hard validity, on top of decay.
    """

    key: str
    value: Any
    confidence: float = 0.9
    signals: tuple[str, ...] = ()
    is_key_fact: bool = True
    text: str = ""
    valid_hours: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "value": self.value,
            "confidence": self.confidence,
            "signals": list(self.signals),
            "is_key_fact": self.is_key_fact,
            "text": self.text,
            "valid_hours": self.valid_hours,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CandidateFact:
        return cls(
            key=str(data["key"]),
            value=data.get("value"),
            confidence=float(data.get("confidence", 0.9)),
            signals=tuple(data.get("signals", ())),
            is_key_fact=bool(data.get("is_key_fact", True)),
            text=str(data.get("text", "")),
            valid_hours=data.get("valid_hours"),
        )


@dataclass(frozen=True, slots=True)
class FactHistory:
    """One earlier value of a fact and why it stopped being current."""

    value: Any
    confidence: float
    at: float
    reason: str  # superseded | edited | archived | rejected | approved | verified
    source_session: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "confidence": self.confidence,
            "at": self.at,
            "reason": self.reason,
            "source_session": self.source_session,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FactHistory:
        return cls(
            value=data.get("value"),
            confidence=float(data.get("confidence", 0.0)),
            at=float(data.get("at", 0.0)),
            reason=str(data.get("reason", "")),
            source_session=data.get("source_session"),
        )


@dataclass(frozen=True, slots=True)
class Fact:
    """A mid-term fact about one (tenant, user).

    ``confidence`` is the value when last confirmed; the current value is computed on read
    (:func:`hermes_desk.memory.decay.decayed`). ``valid_until`` is when that decay reaches the
    archive threshold (or an explicit validity, whichever is first); sweeps use it as an index.
    """

    id: str
    tenant: str
    user_id: str
    key: str
    value: Any
    confidence: float
    status: FactStatus
    origin: FactOrigin
    valid_until: float
    created_at: float
    updated_at: float
    last_confirmed_at: float
    confirmations: int = 1
    source_session: str | None = None
    conflicts_with: str | None = None
    history: tuple[FactHistory, ...] = field(default_factory=tuple)

    def evolve(self, **changes: Any) -> Fact:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tenant": self.tenant,
            "user_id": self.user_id,
            "key": self.key,
            "value": self.value,
            "confidence": self.confidence,
            "status": self.status.value,
            "origin": self.origin.value,
            "valid_until": self.valid_until,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "last_confirmed_at": self.last_confirmed_at,
            "confirmations": self.confirmations,
            "source_session": self.source_session,
            "conflicts_with": self.conflicts_with,
            "history": [h.to_dict() for h in self.history],
        }


@dataclass(frozen=True, slots=True)
class LongTermTag:
    """A user preference tag. Only ``approved`` tags count; candidates wait for a person."""

    tenant: str
    user_id: str
    tag: str
    value: Any
    status: TagStatus
    source_fact_id: str | None
    created_at: float
    reviewed_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant,
            "user_id": self.user_id,
            "tag": self.tag,
            "value": self.value,
            "status": self.status.value,
            "source_fact_id": self.source_fact_id,
            "created_at": self.created_at,
            "reviewed_at": self.reviewed_at,
        }


#: Where a note comes from: an active mid-term fact, or a short-term key fact of the customer's
#: other contact still open (not in memory yet, not verified).
NoteOrigin = Literal["memory", "open_contact"]


@dataclass(frozen=True, slots=True)
class Note:
    """What the agent sees about a customer: an active fact with its current confidence, or
    (``origin == "open_contact"``, no ``fact_id``) a key fact said in another contact of theirs
    that is still open, with the confidence it was said with."""

    fact_id: str | None
    key: str
    value: Any
    confidence: float
    age_s: float  # since the fact was last confirmed (open contact: since it was last active)
    created_at: float
    source_session: str | None
    text: str
    origin: NoteOrigin = "memory"

    def to_dict(self) -> dict[str, Any]:
        return {
            "fact_id": self.fact_id,
            "key": self.key,
            "value": self.value,
            "confidence": round(self.confidence, 4),
            "age_s": round(self.age_s, 1),
            "created_at": self.created_at,
            "source_session": self.source_session,
            "text": self.text,
            "origin": self.origin,
        }
