"""The in-process session store: for tests and single-process tools, and the test double.

Sessions live as Python objects in a dict (no serialisation). The store keeps its own copies:
``save`` stores a copy and ``load`` hands out one (:meth:`Session.copy`, containers only, so
both stay cheap), so a caller changing a loaded session changes nothing until it saves, and the
compare-and-set on ``version`` means what it says. A lock makes every method atomic even when
threads share the store. Nothing survives the process: the service's default is the SQLite store.
"""

from __future__ import annotations

import threading

from hermes_desk.clock import Clock, SystemClock
from hermes_desk.sessions.session import Session
from hermes_desk.sessions.store import SaveResult

__all__ = ["MemorySessionStore"]


class MemorySessionStore:
    """Live sessions in a dict, tombstones with their own expiry, an index per user."""

    def __init__(self, *, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()
        self._live: dict[str, Session] = {}
        self._tombstones: dict[str, tuple[Session, float]] = {}
        self._by_user: dict[tuple[str, str], str] = {}
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
            if tombstone_s > 0:
                stone = session.copy()
                stone.status, stone.turns, stone.short_term = "closed", [], []
                stone.version = stored.version + 1
                self._tombstones[session.id] = (stone, self._clock.now() + tombstone_s)
            return True

    async def find_open(self, tenant: str, user: str) -> str | None:
        with self._lock:
            return self._by_user.get((tenant, user))

    async def idle_before(self, cutoff: float, limit: int = 1000) -> list[str]:
        with self._lock:
            now = self._clock.now()
            for sid in [s for s, (_, until) in self._tombstones.items() if until <= now]:
                del self._tombstones[sid]
            idle = [s for s in self._live.values() if s.last_active <= cutoff]
        idle.sort(key=lambda s: s.last_active)
        return [s.id for s in idle[:limit]]

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
