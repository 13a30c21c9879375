"""The session store interface: where live sessions are kept between requests (spec S4, D1).

The manager owns the lifecycle rules (ownership, idle expiry, archive, hooks); a store only keeps
sessions and answers its questions atomically: is this id free, what is stored under it, which
open session does this user have, and which sessions have been idle since a given time.

Writes are compare-and-set on ``Session.version``. A session is read, changed and written back;
the write lands only if nobody wrote the session in between, so two turns that read the same
session cannot both write it (the second would silently drop the first one's turns). The loser
is told ``SaveResult.STALE`` and reads again. ``touch`` renews ``last_active`` only: it neither
rewrites the transcript nor counts as a write, so a turn that renewed the session on ``get`` still
holds the current version.

Closing or expiring a session *retires* it: the live record is removed in one atomic step, so
exactly one caller wins a race between close, expiry and the sweeper (and runs the destroy
hooks once); a small closed record (a tombstone, without the transcript) may stay for a while so
that late writes are answered "closed" rather than "not found". A ``save`` never brings a
retired session back.
"""

from __future__ import annotations

import enum
from typing import Protocol, runtime_checkable

from hermes_desk.sessions.session import Session

__all__ = ["SaveResult", "SessionStore"]


class SaveResult(enum.Enum):
    """What :meth:`SessionStore.save` did. Only ``WRITTEN`` is truthy."""

    #: Stored as version ``session.version`` (raised by one).
    WRITTEN = "written"
    #: Not written: the stored version is not the one this copy was loaded at (someone else
    #: wrote it meanwhile). Load again, redo the change, save again.
    STALE = "stale"
    #: Not written: no live session under this id (never created, closed or expired).
    RETIRED = "retired"
    #: Not written (``create`` only): the id is in use, live or as a tombstone.
    TAKEN = "taken"

    def __bool__(self) -> bool:
        return self is SaveResult.WRITTEN


@runtime_checkable
class SessionStore(Protocol):
    """Keeps live sessions. Every method is atomic with respect to the others."""

    async def save(self, session: Session, *, create: bool = False) -> SaveResult:
        """Write ``session`` (its ``last_active`` included) as version ``session.version + 1``.

        With ``create``, only if the id is free (``TAKEN`` otherwise). Without, only if the
        session is live (``RETIRED`` otherwise) and its stored version is ``session.version``
        (``STALE`` otherwise). On ``WRITTEN`` the store sets ``session.version`` to the version
        it stored; on anything else it changes neither the stored session nor ``session``.
        """
        ...

    async def load(self, session_id: str) -> Session | None:
        """A copy of the live session (with its stored version), its tombstone
        (``status == "closed"``) or ``None``. Changing the copy changes nothing stored."""
        ...

    async def touch(self, session: Session) -> bool:
        """Record ``session.last_active``, and nothing else: the stored turns, state and version
        stay as they are. False if the session is not live."""
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

    async def aclose(self) -> None:
        """Release what the store holds (connections, threads). Idempotent."""
        ...
