"""The in-process session store: the default for one worker, and the test double.

Sessions live as Python objects (no serialisation), so ``load`` is a dictionary look-up. A lock
makes every method atomic even when threads share the store. ``load`` hands out the stored
object itself; callers still ``save`` after changing it, as with every other backend.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from hermes_desk.clock import Clock, SystemClock
from hermes_desk.sessions.session import Session

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

    async def save(self, session: Session, *, create: bool = False) -> bool:
        with self._lock:
            sid = session.id
            if create:
                if sid in self._live or sid in self._tombstones:
                    return False
                self._by_user[(session.tenant, session.user)] = sid
            elif sid not in self._live:
                return False
            self._live[sid] = session
            return True

    async def load(self, session_id: str) -> Session | None:
        session = self._live.get(session_id)
        if session is not None:
            return session
        with self._lock:
            entry = self._tombstones.get(session_id)
            if entry is None:
                return None
            if entry[1] <= self._clock.now():
                del self._tombstones[session_id]
                return None
            return entry[0]

    async def touch(self, session: Session) -> bool:
        stored = self._live.get(session.id)
        if stored is None:
            return False
        stored.last_active = session.last_active
        return True

    async def retire(self, session: Session, *, tombstone_s: float) -> bool:
        with self._lock:
            if self._live.pop(session.id, None) is None:
                return False
            key = (session.tenant, session.user)
            if self._by_user.get(key) == session.id:
                del self._by_user[key]
            if tombstone_s > 0:
                stone = replace(
                    session, status="closed", turns=[], short_term=[], slots=dict(session.slots)
                )
                self._tombstones[session.id] = (stone, self._clock.now() + tombstone_s)
            return True

    async def find_open(self, tenant: str, user: str) -> str | None:
        return self._by_user.get((tenant, user))

    async def idle_before(self, cutoff: float, limit: int = 1000) -> list[str]:
        with self._lock:
            now = self._clock.now()
            for sid in [s for s, (_, until) in self._tombstones.items() if until <= now]:
                del self._tombstones[sid]
            idle = [s for s in self._live.values() if s.last_active <= cutoff]
        idle.sort(key=lambda s: s.last_active)
        return [s.id for s in idle[:limit]]
