"""The supervisor's board: the live sessions of each tenant with their sentiment trend and
alerts, and a feed of what happens to them.

The board is an :class:`~hermes_desk.events.EventSink` in the runtime's fan-out: it reads
``session.created`` / ``session.resumed`` / ``session.closed`` / ``session.expired`` from the
session manager and the ``supervisor.turn`` and ``alert.raised`` events every turn emits
(they carry the tenant), keeps a bounded picture per tenant, and hands each change to the
tenant's subscribers (``GET /v1/supervisor/events``). It lives in the process that runs the
turns: with several workers, each has its own board (see docs/supervisor.md).
"""

from __future__ import annotations

import contextlib
import threading
from collections import Counter, deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from hermes_desk.events import Event

__all__ = ["LiveSession", "SupervisorBoard"]

_OPENED = {"session.created", "session.resumed"}
_ENDED = {"session.closed", "session.expired"}


@dataclass
class LiveSession:
    """What the board knows of one open session."""

    session_id: str
    tenant: str
    opened_at: float
    last_at: float
    customer_turns: int = 0
    agent_turns: int = 0
    sentiment: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=20))
    alerts: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=20))
    alert_counts: Counter[str] = field(default_factory=Counter)

    def view(self) -> dict[str, Any]:
        latest = self.sentiment[-1] if self.sentiment else None
        return {
            "session_id": self.session_id,
            "opened_at": self.opened_at,
            "last_at": self.last_at,
            "customer_turns": self.customer_turns,
            "agent_turns": self.agent_turns,
            "sentiment": latest,
            "sentiment_trend": list(self.sentiment),
            "alerts": list(self.alerts),
            "alert_count": sum(self.alert_counts.values()),
            "alert_counts": dict(self.alert_counts),
            "critical": any(a.get("severity") == "critical" for a in self.alerts),
        }


class SupervisorBoard:
    """Live sessions per tenant and their subscribers. Bounded: at most ``max_sessions``
    sessions per tenant (the least recently active go first) and ``queue`` undelivered
    messages per subscriber (a subscriber that falls further behind is dropped)."""

    def __init__(self, *, max_sessions: int = 1000, queue: int = 256) -> None:
        self._max_sessions = max_sessions
        self._queue = queue
        self._sessions: dict[str, dict[str, LiveSession]] = {}
        self._subscribers: dict[str, set[MemoryObjectSendStream[dict[str, Any]]]] = {}
        self._lock = threading.Lock()

    # -- EventSink ---------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        tenant = event.data.get("tenant")
        if not isinstance(tenant, str):
            return
        message: dict[str, Any] | None = None
        with self._lock:
            live = self._sessions.setdefault(tenant, {})
            sid = event.request_id
            if event.name in _OPENED:
                entry = self._entry(live, tenant, sid, event.at)
                message = {"type": "session_opened", "session": entry.view()}
            elif event.name in _ENDED:
                gone = live.pop(sid, None)
                if gone is not None:
                    reason = event.name.split(".", 1)[1]
                    message = {"type": "session_closed", "session_id": sid, "reason": reason}
            elif event.name == "supervisor.turn":
                entry = self._entry(live, tenant, sid, event.at)
                entry.last_at = event.at
                if event.data.get("speaker") == "agent":
                    entry.agent_turns += 1
                else:
                    entry.customer_turns += 1
                sentiment = event.data.get("sentiment")
                if isinstance(sentiment, dict):
                    point = {"turn_index": event.data.get("turn_index"), "at": event.at}
                    entry.sentiment.append(point | sentiment)
                message = {"type": "turn", "session": entry.view()}
            elif event.name == "alert.raised":
                entry = self._entry(live, tenant, sid, event.at)
                alert = dict(event.data.get("alert") or {})
                alert["at"] = event.at
                entry.alerts.append(alert)
                entry.alert_counts[str(alert.get("kind"))] += 1
                message = {"type": "alert", "session_id": sid, "alert": alert}
            subscribers = list(self._subscribers.get(tenant, ()))
        if message is not None:
            self._deliver(tenant, subscribers, message)

    # -- reading -----------------------------------------------------------------------------

    def sessions(self, tenant: str) -> list[dict[str, Any]]:
        """The tenant's live sessions, most recently active first."""
        with self._lock:
            entries = list(self._sessions.get(tenant, {}).values())
        return [e.view() for e in sorted(entries, key=lambda e: e.last_at, reverse=True)]

    def subscribers(self, tenant: str) -> int:
        with self._lock:
            return len(self._subscribers.get(tenant, ()))

    @contextlib.asynccontextmanager
    async def subscribe(
        self, tenant: str
    ) -> AsyncIterator[MemoryObjectReceiveStream[dict[str, Any]]]:
        """A stream of the tenant's board messages, from now on, while the context is open."""
        sender, receiver = anyio.create_memory_object_stream[dict[str, Any]](self._queue)
        with self._lock:
            self._subscribers.setdefault(tenant, set()).add(sender)
        try:
            async with receiver:
                yield receiver
        finally:
            with self._lock:
                subs = self._subscribers.get(tenant)
                if subs is not None:
                    subs.discard(sender)
                    if not subs:
                        del self._subscribers[tenant]
            sender.close()

    # -- internals ---------------------------------------------------------------------------

    def _entry(self, live: dict[str, LiveSession], tenant: str, sid: str, at: float) -> LiveSession:
        entry = live.get(sid)
        if entry is None:
            entry = LiveSession(sid, tenant, opened_at=at, last_at=at)
            live[sid] = entry
            if len(live) > self._max_sessions:
                oldest = min(live.values(), key=lambda e: e.last_at)
                live.pop(oldest.session_id, None)
        return entry

    def _deliver(
        self,
        tenant: str,
        subscribers: list[MemoryObjectSendStream[dict[str, Any]]],
        message: dict[str, Any],
    ) -> None:
        for sender in subscribers:
            try:
                sender.send_nowait(message)
            except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                # Too far behind (or gone): drop it; it reconnects and reloads the snapshot.
                with self._lock:
                    subs = self._subscribers.get(tenant)
                    if subs is not None:
                        subs.discard(sender)
                sender.close()
