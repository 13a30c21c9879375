"""The session store interface: where live sessions are kept between requests (spec S4, D1).

The manager owns the lifecycle rules (ownership, idle expiry, archive, hooks); a store only keeps
sessions and answers its questions atomically: is this id free, what is stored under it, which
open session does this user have (the latest, and all of them: an index per (tenant, user)), and
which sessions have been idle since a given time.

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
import threading
from pathlib import Path
from typing import Protocol, runtime_checkable

from hermes_desk.clock import Clock, SystemClock
from hermes_desk.config import SessionSettings
from hermes_desk.sessions.session import Session

__all__ = ["MemorySessionStore", "SaveResult", "SessionStore", "build_session_store"]


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

    async def list_open(self, tenant: str, user: str, limit: int = 20) -> list[Session]:
        """Copies of the live sessions of (tenant, user), most recently active first, at most
        ``limit``: one look-up in the store's index of open sessions per owner, never a scan.
        Whether a listed session has passed its idle time is the manager's question."""
        ...

    async def idle_before(self, cutoff: float, limit: int = 1000) -> list[str]:
        """Ids of live sessions whose ``last_active`` is at or before ``cutoff``, oldest first."""
        ...

    async def ping(self) -> None:
        """Return when the backend answers; raise (``BackendUnavailableError`` …) otherwise."""
        ...

    async def aclose(self) -> None:
        """Release what the store holds (connections, threads). Idempotent."""
        ...


class MemorySessionStore:
    """The in-process store: for tests and single-process tools, and the test double.

    Sessions live as Python objects in a dict (no serialisation). The store keeps its own
    copies: ``save`` stores a copy and ``load`` hands out one (:meth:`Session.copy`, containers
    only, so both stay cheap), so a caller changing a loaded session changes nothing until it
    saves, and the compare-and-set on ``version`` means what it says. A lock makes every method
    atomic even when threads share the store. Nothing survives the process: the service's
    default is the SQLite store. Tombstones keep their own expiry; two indices per user (the
    latest session, and every open one).
    """

    def __init__(self, *, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()
        self._live: dict[str, Session] = {}
        self._tombstones: dict[str, tuple[Session, float]] = {}
        self._by_user: dict[tuple[str, str], str] = {}
        self._open: dict[tuple[str, str], set[str]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._live)

    async def save(self, session: Session, *, create: bool = False) -> SaveResult:
        with self._lock:
            sid = session.id
            if create:
                if sid in self._live or self._tombstone(sid) is not None:
                    return SaveResult.TAKEN
                self._by_user[(session.tenant, session.user)] = sid
                self._open.setdefault((session.tenant, session.user), set()).add(sid)
            else:
                stored = self._live.get(sid)
                if stored is None:
                    return SaveResult.RETIRED
                if stored.version != session.version:
                    return SaveResult.STALE
            kept = session.copy()
            kept.version = session.version + 1
            self._live[sid] = kept
            session.version = kept.version
            return SaveResult.WRITTEN

    async def load(self, session_id: str) -> Session | None:
        with self._lock:
            found = self._live.get(session_id) or self._tombstone(session_id)
            return found.copy() if found is not None else None

    async def touch(self, session: Session) -> bool:
        with self._lock:
            stored = self._live.get(session.id)
            if stored is None:
                return False
            stored.last_active = session.last_active
            return True

    async def retire(self, session: Session, *, tombstone_s: float) -> bool:
        with self._lock:
            stored = self._live.pop(session.id, None)
            if stored is None:
                return False
            key = (stored.tenant, stored.user)
            if self._by_user.get(key) == session.id:
                del self._by_user[key]
            owned = self._open.get(key)
            if owned is not None:
                owned.discard(session.id)
                if not owned:
                    del self._open[key]
            if tombstone_s > 0:
                stone = session.copy()
                stone.status, stone.turns, stone.short_term = "closed", [], []
                stone.open_contacts = []
                stone.version = stored.version + 1
                self._tombstones[session.id] = (stone, self._clock.now() + tombstone_s)
            return True

    async def find_open(self, tenant: str, user: str) -> str | None:
        with self._lock:
            return self._by_user.get((tenant, user))

    async def list_open(self, tenant: str, user: str, limit: int = 20) -> list[Session]:
        with self._lock:
            found = [self._live[sid] for sid in self._open.get((tenant, user), ())]
            found.sort(key=lambda s: (-s.last_active, s.id))
            return [s.copy() for s in found[:limit]]

    async def idle_before(self, cutoff: float, limit: int = 1000) -> list[str]:
        with self._lock:
            now = self._clock.now()
            for sid in [s for s, (_, until) in self._tombstones.items() if until <= now]:
                del self._tombstones[sid]
            idle = [s for s in self._live.values() if s.last_active <= cutoff]
        idle.sort(key=lambda s: s.last_active)
        return [s.id for s in idle[:limit]]

    async def ping(self) -> None:
        """Always answers: the sessions are in this process."""

    async def aclose(self) -> None:
        """Nothing to release; here so that every store closes the same way."""

    def _tombstone(self, session_id: str) -> Session | None:
        entry = self._tombstones.get(session_id)
        if entry is None:
            return None
        if entry[1] <= self._clock.now():
            del self._tombstones[session_id]
            return None
        return entry[0]


def build_session_store(
    settings: SessionSettings, *, data_dir: Path, clock: Clock | None = None
) -> SessionStore:
    """The store named by ``settings.store``: ``sqlite`` (default, ``<data_dir>/sessions.db``),
    ``memory`` (nothing survives the process: tests, one-off tools) or ``redis`` (several
    workers)."""
    if settings.store == "redis":
        from hermes_desk.sessions.redis_store import RedisSessionStore

        # Redis keeps an untouched session well past the idle TTL, so the sweeper archives it.
        retention = 2 * settings.idle_ttl_s + 2 * settings.sweep_interval_s
        return RedisSessionStore(settings.redis_url, retention_s=retention)
    if settings.store == "memory":
        return MemorySessionStore(clock=clock)
    from hermes_desk.sessions.sqlite_store import SqliteSessionStore

    return SqliteSessionStore.open(Path(data_dir) / "sessions.db", clock=clock)
