"""The session store interface: where live sessions are kept between requests (spec S4).

The manager owns the lifecycle rules (ownership, idle expiry, archive, hooks); a store only keeps
sessions and answers four questions atomically: is this id free, what is stored under it, which
open session does this user have, and which sessions have been idle since a given time.

Closing or expiring a session *retires* it: the live record is removed in one atomic step, so
exactly one caller wins a race between close, expiry and the sweeper (and runs the destroy
hooks once); a small closed record (a tombstone, without the transcript) may stay for a while so
that late writes are answered "closed" rather than "not found". A ``save`` never brings a
retired session back.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from hermes_desk.sessions.session import Session

__all__ = ["SessionStore"]


@runtime_checkable
class SessionStore(Protocol):
    """Keeps live sessions. Every method is atomic with respect to the others."""

    async def save(self, session: Session, *, create: bool = False) -> bool:
        """Write ``session`` (its ``last_active`` included).

        With ``create``, only if the id is free; otherwise only if the session is still live
        (not retired). Returns whether it was written.
        """
        ...

    async def load(self, session_id: str) -> Session | None:
        """The live session, its tombstone (``status == "closed"``) or ``None``."""
        ...

    async def touch(self, session: Session) -> bool:
        """Record ``session.last_active`` without rewriting the transcript. False if retired."""
        ...

    async def retire(self, session: Session, *, tombstone_s: float) -> bool:
        """Remove the live session; keep a tombstone of ``session`` for ``tombstone_s`` seconds
        (0 for none). Returns True for exactly one caller per session."""
        ...

    async def find_open(self, tenant: str, user: str) -> str | None:
        """The id of the latest live session created for (tenant, user), if any."""
        ...

    async def idle_before(self, cutoff: float, limit: int = 1000) -> list[str]:
        """Ids of live sessions whose ``last_active`` is at or before ``cutoff``, oldest first."""
        ...
