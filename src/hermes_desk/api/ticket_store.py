"""Where used WebSocket tickets are remembered: the :class:`TicketUseStore` boundary and the
in-process store.

A ticket opens one socket. Several workers behind one address each check tickets signed with
the same keys, so the record that a ticket was used must be shared by them, or a ticket copied
from a log could open a second socket on another worker. The store keeps the ticket's id (its
nonce) until the ticket expires, no longer: an expired ticket is refused by its signed expiry,
whatever the store holds.

The backend follows the session store's (``sessions.store``): ``memory`` (one process),
``sqlite`` (``<data_dir>/tickets.db``, shared by the workers of one host) or ``redis`` (several
hosts, ``sessions.redis_url``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol, runtime_checkable

from hermes_desk.config import SessionSettings

__all__ = ["MemoryTicketUseStore", "TicketUseStore", "build_ticket_use_store"]


@runtime_checkable
class TicketUseStore(Protocol):
    """Ticket ids used so far, each until its ticket expires."""

    async def use(self, nonce: str, *, expires_at: float, now: float) -> bool:
        """Record ``nonce`` as used until ``expires_at``: ``True`` the first time, ``False`` if
        it was used before and has not expired, or if ``expires_at`` is not after ``now``
        (atomic: of two callers, exactly one wins)."""
        ...

    async def ping(self) -> None:
        """Return when the backend answers; raise (``BackendUnavailableError`` …) otherwise."""
        ...

    async def aclose(self) -> None:
        """Release what the store holds. Idempotent."""
        ...


class MemoryTicketUseStore:
    """Used ticket ids in this process: the store for one worker and the test double."""

    def __init__(self) -> None:
        self._used: dict[str, float] = {}
        self._lock = threading.Lock()

    async def use(self, nonce: str, *, expires_at: float, now: float) -> bool:
        if expires_at <= now:
            return False  # nothing to keep: an expired ticket is refused anyway
        with self._lock:
            for old in [n for n, until in self._used.items() if until <= now]:
                del self._used[old]
            if nonce in self._used:
                return False
            self._used[nonce] = expires_at
            return True

    async def ping(self) -> None:
        """Always answers: the ids are in this process."""

    async def aclose(self) -> None:
        """Nothing to release."""


def build_ticket_use_store(settings: SessionSettings, *, data_dir: Path) -> TicketUseStore:
    """The store beside the session store ``settings.store`` names: ``redis`` (its
    ``redis_url``; the redis extra), ``memory``, or ``sqlite`` (``<data_dir>/tickets.db``)."""
    if settings.store == "redis":
        from hermes_desk.api.ticket_redis_store import RedisTicketUseStore

        return RedisTicketUseStore(settings.redis_url)
    if settings.store == "memory":
        return MemoryTicketUseStore()
    from hermes_desk.api.ticket_sqlite_store import SqliteTicketUseStore

    return SqliteTicketUseStore(Path(data_dir) / "tickets.db")
