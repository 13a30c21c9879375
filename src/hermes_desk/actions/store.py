"""Where proposals live: a Protocol, the in-process store (tests), and the builder.

Every status change is a compare-and-set (:meth:`ProposalStore.replace` with the status the
caller read): of two agents or two workers approving at once, exactly one wins, so a write runs
once. Backends: ``sqlite_store`` (the embedded default, in the data folder, survives restarts)
and ``redis_store`` (several workers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio

from hermes_desk.actions.proposal import Proposal, ProposalStatus
from hermes_desk.config import ActionSettings

__all__ = ["MemoryProposalStore", "ProposalStore", "build_proposal_store"]


@runtime_checkable
class ProposalStore(Protocol):
    """Keeps proposals. Every method is atomic with respect to the others."""

    async def add(self, proposal: Proposal) -> bool:
        """Store a new proposal; ``False`` (and nothing written) when its id exists already."""
        ...

    async def get(self, proposal_id: str) -> Proposal | None: ...

    async def replace(
        self, proposal: Proposal, *, expected: ProposalStatus, revision: int | None = None
    ) -> bool:
        """Write ``proposal`` only if the stored one still has status ``expected`` (and, when
        ``revision`` is given, that revision: its arguments were not amended meanwhile)."""
        ...

    async def for_session(self, session_id: str) -> list[Proposal]:
        """The session's proposals, oldest first."""
        ...

    async def executed_for(
        self, tenant: str, user: str, *, since: float, limit: int = 20
    ) -> list[Proposal]:
        """The customer's writes that ran (``executed``) at or after ``since``, in any of their
        sessions, newest first: what an earlier contact already did for them (a ticket)."""
        ...

    async def due(self, now: float, limit: int = 100) -> list[Proposal]:
        """Pending proposals whose ``expires_at`` is at or before ``now``."""
        ...

    async def executing(self, limit: int = 100) -> list[Proposal]:
        """Approved proposals whose write (or hand-over to a workflow) has not ended yet,
        oldest decision first: after a crash, the ones to carry out."""
        ...

    async def ping(self) -> None:
        """Return when the backend answers; raise (``BackendUnavailableError`` …) otherwise."""
        ...

    async def aclose(self) -> None:
        """Release what the store holds. Idempotent."""
        ...


class MemoryProposalStore:
    """In-process proposals: the test double and the single-process option."""

    def __init__(self) -> None:
        self._items: dict[str, dict[str, Any]] = {}
        self._lock = anyio.Lock()

    async def add(self, proposal: Proposal) -> bool:
        async with self._lock:
            if proposal.id in self._items:
                return False
            self._items[proposal.id] = proposal.to_dict()
            return True

    async def get(self, proposal_id: str) -> Proposal | None:
        data = self._items.get(proposal_id)
        return Proposal.from_dict(dict(data)) if data is not None else None

    async def replace(
        self, proposal: Proposal, *, expected: ProposalStatus, revision: int | None = None
    ) -> bool:
        async with self._lock:
            current = self._items.get(proposal.id)
            if current is None or current["status"] != expected:
                return False
            if revision is not None and current.get("revision", 0) != revision:
                return False
            self._items[proposal.id] = proposal.to_dict()
            return True

    async def for_session(self, session_id: str) -> list[Proposal]:
        found = [Proposal.from_dict(dict(d)) for d in self._items.values()]
        return sorted((p for p in found if p.session_id == session_id), key=lambda p: p.created_at)

    async def executed_for(
        self, tenant: str, user: str, *, since: float, limit: int = 20
    ) -> list[Proposal]:
        def at(data: dict[str, Any]) -> float:  # ran_at of the stored form: few are built
            return float(data["executed_at"] or data["decided_at"] or data["created_at"])

        ran = [
            d for d in self._items.values()
            if d["status"] == "executed" and d["tenant"] == tenant and d["user"] == user
            and at(d) >= since
        ]  # fmt: skip
        ran.sort(key=at, reverse=True)
        return [Proposal.from_dict(dict(d)) for d in ran[:limit]]

    async def due(self, now: float, limit: int = 100) -> list[Proposal]:
        found = [Proposal.from_dict(dict(d)) for d in self._items.values()]
        return [p for p in found if p.pending and p.expires_at <= now][:limit]

    async def executing(self, limit: int = 100) -> list[Proposal]:
        found = [Proposal.from_dict(dict(d)) for d in self._items.values()]
        running = [p for p in found if p.status == "executing"]
        return sorted(running, key=lambda p: p.decided_at or 0.0)[:limit]

    async def ping(self) -> None:
        """Always answers: the proposals are in this process."""

    async def aclose(self) -> None:
        """Nothing to release."""


def build_proposal_store(settings: ActionSettings, *, data_dir: Path) -> ProposalStore:
    """The store ``settings.store`` names: SQLite in ``data_dir`` (default), memory or Redis."""
    if settings.store == "redis":
        from hermes_desk.actions.redis_store import RedisProposalStore

        return RedisProposalStore(settings.redis_url)
    if settings.store == "memory":
        return MemoryProposalStore()
    from hermes_desk.actions.sqlite_store import SqliteProposalStore

    return SqliteProposalStore(data_dir / "actions.db")
