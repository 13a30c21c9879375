"""The ``MemoryStore`` interface: facts and tags of (tenant, user), changed only atomically.

Backends: ``sqlite_store`` (the embedded default) and ``postgres_store`` (several workers), built
by :func:`build_memory_store`; both take their tables from :func:`facts_and_tags_sql`, so the
schema has one source, typed per dialect.

Every method that reads or writes a person's data takes the (tenant, user) pair and filters on
both, so no path can reach another user's facts (M7). Writes take a plan — a pure function from
the rows loaded in the transaction to an :class:`~hermes_desk.memory.transitions.Outcome` — and
apply its operations before commit, so decisions and writes are one atomic step.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, Protocol

from hermes_desk.config import MemorySettings
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
from hermes_desk.storage import SqliteDatabase

__all__ = [
    "FACT_COLUMNS",
    "ChangePlan",
    "MemoryStore",
    "SweepPlan",
    "WritePlan",
    "build_memory_store",
    "fact_from_row",
    "fact_params",
    "facts_and_tags_sql",
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

    async def ping(self) -> None:
        """Return when the backend answers; raise (``BackendUnavailableError`` …) otherwise."""
        ...

    async def aclose(self) -> None:
        """Release what the store holds (pool, writer thread). Idempotent."""
        ...


def build_memory_store(
    settings: MemorySettings, *, database: SqliteDatabase | str | Path, pool_size: int = 8
) -> MemoryStore:
    """The store ``settings.store`` names: SQLite in ``database`` (default; a path is opened and
    owned by the store, a :class:`SqliteDatabase` is shared with its owner) or PostgreSQL at
    ``settings.postgres_dsn`` (a pool of up to ``pool_size`` connections, opened and migrated on
    first use)."""
    if settings.store == "postgres":
        from hermes_desk.memory.postgres_store import PostgresMemoryStore

        return PostgresMemoryStore(
            settings.postgres_dsn,
            max_size=pool_size,
            synchronous_commit=settings.postgres_synchronous_commit,
        )
    from hermes_desk.memory.sqlite_store import SqliteMemoryStore

    if isinstance(database, SqliteDatabase):
        return SqliteMemoryStore(database)
    return SqliteMemoryStore.open(database)


def facts_and_tags_sql(*, json_type: str, float_type: str) -> str:
    """The ``memory_facts`` and ``memory_tags`` tables and their indexes, in a dialect's types
    (SQLite: ``TEXT``, ``REAL``; PostgreSQL: ``JSONB``, ``DOUBLE PRECISION``)."""
    j, f = json_type, float_type
    return f"""
        CREATE TABLE memory_facts (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            key TEXT NOT NULL,
            value {j} NOT NULL,
            confidence {f} NOT NULL,
            status TEXT NOT NULL,
            origin TEXT NOT NULL,
            valid_until {f} NOT NULL,
            created_at {f} NOT NULL,
            updated_at {f} NOT NULL,
            last_confirmed_at {f} NOT NULL,
            confirmations INTEGER NOT NULL DEFAULT 1,
            source_session TEXT,
            conflicts_with TEXT,
            history {j} NOT NULL DEFAULT '[]'
        );
        CREATE INDEX memory_facts_owner ON memory_facts (tenant, user_id, status);
        CREATE UNIQUE INDEX memory_facts_active_key
            ON memory_facts (tenant, user_id, key) WHERE status = 'active';
        CREATE INDEX memory_facts_due ON memory_facts (valid_until) WHERE status = 'active';
        CREATE INDEX memory_facts_pending ON memory_facts (created_at) WHERE status = 'pending';
        CREATE TABLE memory_tags (
            tenant TEXT NOT NULL,
            user_id TEXT NOT NULL,
            tag TEXT NOT NULL,
            value {j} NOT NULL,
            status TEXT NOT NULL,
            source_fact_id TEXT,
            created_at {f} NOT NULL,
            reviewed_at {f},
            PRIMARY KEY (tenant, user_id, tag)
        );
        """


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
