"""The ``MemoryStore`` interface: facts and tags of (tenant, user), changed only atomically.

Every method that reads or writes a person's data takes the (tenant, user) pair and filters on
both, so no path can reach another user's facts (M7). Writes take a plan — a pure function from
the rows loaded in the transaction to an :class:`~hermes_desk.memory.transitions.Outcome` — and
apply its operations before commit, so decisions and writes are one atomic step.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from typing import Any, Protocol

from hermes_desk.memory.fact import (
    Fact,
    FactHistory,
    FactOrigin,
    FactStatus,
    LongTermTag,
    TagStatus,
    canonical_json,
)
from hermes_desk.memory.transitions import Outcome

__all__ = [
    "FACT_COLUMNS",
    "ChangePlan",
    "MemoryStore",
    "SweepPlan",
    "WritePlan",
    "fact_from_row",
    "fact_params",
    "tag_from_row",
]

WritePlan = Callable[[Fact | None], Outcome]
"""Given the active fact of the key (or None), decide. Pure: it may run more than once."""
ChangePlan = Callable[[Fact, Fact | None], Outcome]
"""Given the target fact and the active fact of its key (another row, or None), decide."""
SweepPlan = Callable[[Fact], Outcome | None]
"""Given an active fact past its ``valid_until``, archive it (or not)."""


class MemoryStore(Protocol):
    """Mid-term facts and long-term tags. Implementations: SQLite and PostgreSQL."""

    async def write(self, tenant: str, user_id: str, key: str, plan: WritePlan) -> Outcome:
        """Load the active fact of the key of (tenant, user), apply ``plan``, commit atomically.

        The commit only happens if the key's active fact is still the one ``plan`` saw; a store
        may run ``plan`` again after losing a race, so plans must be pure.
        """
        ...

    async def change(self, tenant: str, user_id: str, fact_id: str, plan: ChangePlan) -> Outcome:
        """Load a fact of (tenant, user) — NotFoundError if it is not theirs — apply ``plan``."""
        ...

    async def facts(
        self,
        tenant: str,
        user_id: str,
        statuses: Collection[FactStatus] | None = None,
        *,
        limit: int = 1000,
    ) -> list[Fact]:
        """Facts of (tenant, user), newest update first, optionally of some statuses only."""
        ...

    async def pending(self, *, limit: int = 500) -> list[Fact]:
        """Pending facts of every tenant, oldest first: the verifiers' work list (no user path)."""
        ...

    async def sweep(self, now: float, plan: SweepPlan, *, limit: int = 1000) -> list[Outcome]:
        """Archive active facts with ``valid_until <= now`` in write transactions."""
        ...

    async def tags(self, tenant: str, user_id: str) -> list[LongTermTag]: ...

    async def review_tag(
        self, tenant: str, user_id: str, tag: str, *, approve: bool, now: float
    ) -> LongTermTag | None:
        """Approve a tag (returns it) or delete it (returns None); NotFoundError if unknown."""
        ...

    async def close(self) -> None: ...


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str | bytes) else value


def fact_from_row(row: Mapping[str, Any]) -> Fact:
    """Build a fact from a row of either backend (JSON as text or already decoded)."""
    history = _json(row["history"]) or []
    return Fact(
        id=row["id"],
        tenant=row["tenant"],
        user_id=row["user_id"],
        key=row["key"],
        value=_json(row["value"]),
        confidence=float(row["confidence"]),
        status=FactStatus(row["status"]),
        origin=FactOrigin(row["origin"]),
        valid_until=float(row["valid_until"]),
        created_at=float(row["created_at"]),
        updated_at=float(row["updated_at"]),
        last_confirmed_at=float(row["last_confirmed_at"]),
        confirmations=int(row["confirmations"]),
        source_session=row["source_session"],
        conflicts_with=row["conflicts_with"],
        history=tuple(FactHistory.from_dict(h) for h in history),
    )


def fact_params(fact: Fact) -> tuple[Any, ...]:
    """Column values in :data:`FACT_COLUMNS` order, JSON as text."""
    return (
        fact.id,
        fact.tenant,
        fact.user_id,
        fact.key,
        canonical_json(fact.value),
        fact.confidence,
        fact.status.value,
        fact.origin.value,
        fact.valid_until,
        fact.created_at,
        fact.updated_at,
        fact.last_confirmed_at,
        fact.confirmations,
        fact.source_session,
        fact.conflicts_with,
        canonical_json([h.to_dict() for h in fact.history]),
    )


FACT_COLUMNS = (
    "id", "tenant", "user_id", "key", "value", "confidence", "status", "origin", "valid_until",
    "created_at", "updated_at", "last_confirmed_at", "confirmations", "source_session",
    "conflicts_with", "history",
)  # fmt: skip


def tag_from_row(row: Mapping[str, Any]) -> LongTermTag:
    reviewed = row["reviewed_at"]
    return LongTermTag(
        tenant=row["tenant"],
        user_id=row["user_id"],
        tag=row["tag"],
        value=_json(row["value"]),
        status=TagStatus(row["status"]),
        source_fact_id=row["source_fact_id"],
        created_at=float(row["created_at"]),
        reviewed_at=float(reviewed) if reviewed is not None else None,
    )
