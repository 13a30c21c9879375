"""Suggestion feedback: what the agent did with each suggested reply, checked and counted.

The console shows one suggestion per customer turn; the agent may edit it in place, insert it
into the reply box, copy it, and rate it useful or not (with a reason). Each of those arrives as
an event naming the turn; the service checks that the turn is the session's and has a
suggestion, keeps the agent's edited text beside the original, and counts.

A suggestion *shown* is counted on every customer turn, so those are not written one by one:
they wait (at most ``flush_after_s``, or until ``flush_at`` are waiting) and are written
together in one transaction. Anything that reads the events (a report, a session's events, an
agent's event) writes the waiting ones first, and so does closing the store.
"""

from __future__ import annotations

import asyncio
import logging
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_desk.clock import Clock
from hermes_desk.errors import NotFoundError, ValidationError
from hermes_desk.feedback.metrics import SuggestionMetrics
from hermes_desk.feedback.record import (
    AGENT_EVENTS,
    MAX_REASON_CHARS,
    FeedbackEvent,
    SuggestionEvent,
    report,
)
from hermes_desk.feedback.store import FeedbackStore
from hermes_desk.sessions import SessionManager

__all__ = ["SuggestionFeedback"]

_logger = logging.getLogger(__name__)


class SuggestionFeedback:
    """Records suggestion events and reports them per tenant.

    Args:
        store: where events live.
        sessions: to find the turn an event is about (and refuse another tenant's).
        metrics: the Prometheus counters.
        max_text_chars: the longest edited text accepted (the service's text limit).
        redact: ``(tenant, text) -> text``, applied to every text before it is stored (the
            suggestion, the agent's edit, the reason): the tenant's masking of personal numbers.
        flush_after_s: the longest a shown suggestion waits to be written with others.
        flush_at: this many waiting are written at once.
    """

    def __init__(
        self,
        store: FeedbackStore,
        sessions: SessionManager,
        *,
        metrics: SuggestionMetrics,
        clock: Clock,
        max_text_chars: int,
        redact: Callable[[str, str], str] | None = None,
        flush_after_s: float = 0.5,
        flush_at: int = 64,
    ) -> None:
        self.store: FeedbackStore = _FlushFirst(store, self)
        self.sessions = sessions
        self.metrics = metrics
        self.clock = clock
        self.max_text_chars = max_text_chars
        self.redact = redact or (lambda tenant, text: text)
        self.flush_after_s = flush_after_s
        self.flush_at = flush_at
        self._inner = store
        self._waiting: list[SuggestionEvent] = []
        self._timer: asyncio.TimerHandle | None = None
        self._flushes: set[asyncio.Task[None]] = set()

    async def shown(self, tenant: str, outcome: Mapping[str, Any]) -> None:
        """Count the suggestion a turn answered (the turn response or assist frame body): it is
        written with the others waiting, within ``flush_after_s`` (see the module docstring).

        Never fails the turn: a store that does not answer is logged and the count is lost.
        """
        suggestion = outcome.get("suggestion")
        intent = outcome.get("intent")
        if not suggestion or not isinstance(intent, Mapping):
            return
        event = SuggestionEvent(
            tenant=tenant,
            session_id=str(outcome["session_id"]),
            turn_index=int(outcome["turn_index"]),
            event="shown",
            intent=str(intent.get("name")),
            at=self.clock.now(),
            suggestion=self.redact(tenant, str(suggestion.get("text", ""))),
        )
        self._waiting.append(event)
        if len(self._waiting) >= self.flush_at:
            await self.flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(
                self.flush_after_s, self._flush_soon
            )

    async def flush(self) -> None:
        """Write the shown suggestions waiting, in one round trip; never raises (a store that
        does not answer is logged and those counts are lost)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        waiting, self._waiting = self._waiting, []
        if not waiting:
            return
        try:
            firsts = await self._inner.put_many(waiting)
        except Exception:  # counting must never cost the agent the assist
            sessions = ", ".join(sorted({e.session_id for e in waiting}))
            _logger.exception("could not count %d shown suggestion(s) (sessions %s)",
                              len(waiting), sessions)  # fmt: skip
            return
        self._observe(waiting, firsts)

    def _flush_soon(self) -> None:
        self._timer = None
        task = asyncio.get_running_loop().create_task(self.flush())
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def record(
        self,
        tenant: str,
        user: str,
        session_id: str,
        turn_index: int,
        *,
        event: str,
        agent_id: str,
        useful: bool | None = None,
        reason: str | None = None,
        text: str | None = None,
    ) -> dict[str, Any]:
        """Record one agent event on the suggestion of turn ``turn_index``.

        ``text`` is the agent's version of the reply; when it differs from the suggestion the
        event also records an ``edited`` one with it (the edit is counted whatever the agent did
        next). Returns the stored event(s).

        Raises:
            NotFoundError: unknown session (or another tenant's or customer's), or no suggestion
                at that turn.
            ValidationError: the fields do not fit the event (a rating without ``useful``…).
        """
        kind = _check(event, useful, reason, text, MAX_REASON_CHARS, self.max_text_chars)
        await self.flush()  # the shown ones first: what is read next counts them
        session = await self.sessions.get(tenant, user, session_id)
        turns = session.turns
        turn = turns[turn_index] if 0 <= turn_index < len(turns) else None
        meta = (turn.meta or {}) if turn is not None and turn.role == "user" else {}
        if "suggestion" not in meta:
            raise NotFoundError(
                f"no suggestion at turn {turn_index}", session_id=session_id, turn_index=turn_index
            )
        original = str(meta["suggestion"])
        base = {
            "tenant": tenant,
            "session_id": session.id,
            "turn_index": turn_index,
            "intent": str(meta.get("intent") or "unknown"),
            "at": self.clock.now(),
            "suggestion": self.redact(tenant, original),
            "agent_id": agent_id,
        }
        edited = text is not None and text.strip() != original.strip()
        if kind == "edited" and not edited:
            raise ValidationError(
                "text is the suggestion unchanged: nothing was edited",
                problems=[{"field": "text", "message": "same as the suggestion"}],
            )
        stored: list[SuggestionEvent] = []
        kept = self.redact(tenant, text) if text is not None else None
        if edited and kind != "edited":
            stored.append(SuggestionEvent(event="edited", text=kept, **base))  # type: ignore[arg-type]
        stored.append(
            SuggestionEvent(
                event=kind,
                useful=useful,
                reason=self.redact(tenant, reason.strip()) if reason else None,
                text=kept,
                **base,  # type: ignore[arg-type]
            )
        )
        firsts = [await self._put(item) for item in stored]
        return {
            "session_id": session.id,
            "turn_index": turn_index,
            "intent": base["intent"],
            "recorded": [
                {**item.to_dict(), "first": first}
                for item, first in zip(stored, firsts, strict=True)
            ],
        }

    async def for_session(self, tenant: str, user: str, session_id: str) -> list[dict[str, Any]]:
        """The session's suggestion events (``NotFoundError`` for another's session)."""
        session = await self.sessions.get(tenant, user, session_id)
        return [e.to_dict() for e in await self.store.for_session(tenant, session.id)]

    async def report(self, tenant: str) -> dict[str, Any]:
        """Shown, inserted, copied, edited and rated counts, in total and by intent."""
        return report(tenant, await self.store.counts(tenant))

    async def _put(self, event: SuggestionEvent) -> bool:
        first = await self._inner.put(event)
        self._observe([event], [first])
        return first

    def _observe(self, events: Sequence[SuggestionEvent], firsts: Sequence[bool]) -> None:
        for event, first in zip(events, firsts, strict=True):
            if first:
                self.metrics.observe(event.tenant, event.intent, event.kind)


class _FlushFirst:
    """The service's store as others see it (the runtime's health check and shutdown): reads
    and closing write the shown suggestions still waiting first."""

    def __init__(self, inner: FeedbackStore, service: SuggestionFeedback) -> None:
        self._inner = inner
        self._service = service

    async def put(self, event: SuggestionEvent) -> bool:
        await self._service.flush()
        return await self._inner.put(event)

    async def put_many(self, events: Sequence[SuggestionEvent]) -> list[bool]:
        await self._service.flush()
        return await self._inner.put_many(events)

    async def for_session(self, tenant: str, session_id: str) -> list[SuggestionEvent]:
        await self._service.flush()
        return await self._inner.for_session(tenant, session_id)

    async def counts(self, tenant: str) -> list[tuple[str, str, int]]:
        await self._service.flush()
        return await self._inner.counts(tenant)

    async def ping(self) -> None:
        await self._inner.ping()

    async def aclose(self) -> None:
        await self._service.flush()
        for task in list(self._service._flushes):
            await task
        await self._inner.aclose()


def _check(
    event: str,
    useful: bool | None,
    reason: str | None,
    text: str | None,
    max_reason: int,
    max_text: int,
) -> FeedbackEvent:
    problems: list[dict[str, str]] = []
    if event not in AGENT_EVENTS:
        problems.append({"field": "event", "message": f"one of {', '.join(AGENT_EVENTS)}"})
    if event == "rated" and useful is None:
        problems.append({"field": "useful", "message": "a rating says useful (true) or not"})
    if event != "rated" and useful is not None:
        problems.append({"field": "useful", "message": "only a rating says useful"})
    if event != "rated" and reason is not None:
        problems.append({"field": "reason", "message": "only a rating gives a reason"})
    if reason is not None and (len(reason) > max_reason or not reason.strip() or _binary(reason)):
        problems.append({"field": "reason", "message": f"1 to {max_reason} characters of text"})
    if event == "edited" and text is None:
        problems.append({"field": "text", "message": "an edit sends the edited text"})
    if text is not None and (len(text) > max_text or not text.strip() or _binary(text)):
        problems.append({"field": "text", "message": f"1 to {max_text} characters of text"})
    if problems:
        fields = ", ".join(p["field"] for p in problems)
        raise ValidationError(f"invalid feedback ({fields})", problems=problems)
    return event  # type: ignore[return-value]


def _binary(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" and ch not in "\t\n\r" for ch in text)
