"""Where suggestion feedback lives: a Protocol, the in-process store (tests), and the builder.

Backends: ``sqlite_store`` (the embedded default, ``<data_dir>/feedback.db``, survives restarts)
and ``redis_store`` (several workers). Every backend keeps one record per suggestion and event
(the latest wins) and counts by tenant, intent and kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import anyio

from hermes_desk.config import FeedbackSettings
from hermes_desk.feedback.record import SuggestionEvent

__all__ = ["FeedbackStore", "MemoryFeedbackStore", "build_feedback_store"]


@runtime_checkable
class FeedbackStore(Protocol):
    """Keeps suggestion events. Every method is atomic with respect to the others."""

    async def put(self, event: SuggestionEvent) -> bool:
        """Store ``event``, replacing the same suggestion's earlier event of its kind; ``True``
        when there was none (the first insert, rating… of that suggestion)."""
        ...

    async def put_many(self, events: Sequence[SuggestionEvent]) -> list[bool]:
        """:meth:`put` each of ``events`` in order, in one round trip (one transaction where the
        backend has them); what :meth:`put` would have answered for each."""
        ...

    async def for_session(self, tenant: str, session_id: str) -> list[SuggestionEvent]:
        """The session's events, by turn then event name."""
        ...

    async def counts(self, tenant: str) -> list[tuple[str, str, int]]:
        """``(intent, kind, n)`` for the tenant (kinds: ``record.COUNT_KINDS``)."""
        ...

    async def ping(self) -> None:
        """Return when the backend answers; raise (``BackendUnavailableError`` …) otherwise."""
        ...

    async def aclose(self) -> None:
        """Release what the store holds. Idempotent."""
        ...


class MemoryFeedbackStore:
    """In-process feedback: the test double and the single-process option."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str, str], SuggestionEvent] = {}
        self._lock = anyio.Lock()

    async def put(self, event: SuggestionEvent) -> bool:
        key = (event.tenant, event.session_id, event.field)
        async with self._lock:
            new = key not in self._items
            self._items[key] = event
            return new

    async def put_many(self, events: Sequence[SuggestionEvent]) -> list[bool]:
        return [await self.put(event) for event in events]

    async def for_session(self, tenant: str, session_id: str) -> list[SuggestionEvent]:
        found = [e for (t, s, _), e in self._items.items() if t == tenant and s == session_id]
        return sorted(found, key=lambda e: (e.turn_index, e.event))

    async def counts(self, tenant: str) -> list[tuple[str, str, int]]:
        tally: dict[tuple[str, str], int] = {}
        for (t, _, _), event in self._items.items():
            if t == tenant:
                key = (event.intent, event.kind)
                tally[key] = tally.get(key, 0) + 1
        return [(intent, kind, n) for (intent, kind), n in sorted(tally.items())]

    async def ping(self) -> None:
        """Always answers: the events are in this process."""

    async def aclose(self) -> None:
        """Nothing to release."""


def build_feedback_store(settings: FeedbackSettings, *, data_dir: Path) -> FeedbackStore:
    """The store ``settings.store`` names: SQLite in ``data_dir`` (default), memory or Redis."""
    if settings.store == "redis":
        from hermes_desk.feedback.redis_store import RedisFeedbackStore

        return RedisFeedbackStore(settings.redis_url)
    if settings.store == "memory":
        return MemoryFeedbackStore()
    from hermes_desk.feedback.sqlite_store import SqliteFeedbackStore

    return SqliteFeedbackStore(data_dir / "feedback.db")
