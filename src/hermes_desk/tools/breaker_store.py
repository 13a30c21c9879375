"""Where breaker state lives: the :class:`BreakerStateStore` boundary and the in-process store.

The breaker's transitions are pure functions (:mod:`hermes_desk.tools.breaker`); a store applies
one atomically with :meth:`BreakerStateStore.update`, so two callers (or two workers, with the
Redis store) never both take the probe lease or lose a failure count.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol, TypeVar

from hermes_desk.config import BreakerSettings
from hermes_desk.tools.breaker import CLOSED, BreakerRecord

__all__ = ["BreakerStateStore", "MemoryBreakerStore", "build_breaker_store"]

T = TypeVar("T")


class BreakerStateStore(Protocol):
    """Breaker records by tool name; a tool never seen is closed."""

    async def get(self, tool: str) -> BreakerRecord: ...

    async def update(
        self, tool: str, change: Callable[[BreakerRecord], tuple[BreakerRecord, T]]
    ) -> T:
        """Apply ``change`` to the current record atomically; store its new record, return its
        second value. ``change`` is pure and may run more than once (optimistic retries)."""
        ...

    async def all(self) -> dict[str, BreakerRecord]:
        """Every record that is not plain closed."""
        ...

    async def reset(self, tool: str | None = None) -> None:
        """Forget one tool's record (or all)."""
        ...

    async def ping(self) -> None:
        """Return when the backend answers; raise (``BackendUnavailableError`` …) otherwise."""
        ...

    async def aclose(self) -> None:
        """Release what the store holds. Idempotent."""
        ...


class MemoryBreakerStore:
    """In-process records; the default for one worker and the test double."""

    def __init__(self) -> None:
        self._records: dict[str, BreakerRecord] = {}
        self._lock = threading.Lock()  # the executor may be shared across event loops

    async def get(self, tool: str) -> BreakerRecord:
        return self._records.get(tool, CLOSED)

    async def update(
        self, tool: str, change: Callable[[BreakerRecord], tuple[BreakerRecord, T]]
    ) -> T:
        with self._lock:
            current = self._records.get(tool, CLOSED)
            new, out = change(current)
            if new is not current:
                if new == CLOSED:
                    self._records.pop(tool, None)
                else:
                    self._records[tool] = new
            return out

    async def all(self) -> dict[str, BreakerRecord]:
        with self._lock:
            return dict(self._records)

    async def reset(self, tool: str | None = None) -> None:
        with self._lock:
            if tool is None:
                self._records.clear()
            else:
                self._records.pop(tool, None)

    async def ping(self) -> None:
        """Always answers: the records are in this process."""

    async def aclose(self) -> None:
        """Nothing to release."""


def build_breaker_store(settings: BreakerSettings) -> BreakerStateStore:
    """The store the settings ask for (``memory`` or ``redis``, which needs the redis extra)."""
    if settings.store == "redis":
        from hermes_desk.tools.breaker_redis_store import RedisBreakerStore

        return RedisBreakerStore(settings.redis_url)
    return MemoryBreakerStore()
