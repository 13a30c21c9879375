"""``MemoryService``: the memory module's one entry point for turns, sessions, review and jobs.

It joins the key-fact filter, the pure planner, a :class:`MemoryStore`, a clock and an event
sink. Decay is computed lazily on read (for ranking notes) and archiving happens only in write
transactions (on the next write of the key, or in :meth:`sweep_decay`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from hermes_desk.clock import Clock
from hermes_desk.config import MemorySettings
from hermes_desk.errors import ValidationError
from hermes_desk.events import Event, EventSink, MemorySink
from hermes_desk.ids import digest
from hermes_desk.memory.decay import DecayPolicy
from hermes_desk.memory.fact import (
    CandidateFact,
    Fact,
    FactOrigin,
    FactStatus,
    LongTermTag,
    Note,
    canonical_json,
)
from hermes_desk.memory.keyfacts import KeyFactFilter, open_contact_text
from hermes_desk.memory.store import ChangePlan, MemoryStore, SweepPlan
from hermes_desk.memory.tiers import ShortTermMemory, qualifies
from hermes_desk.memory.transitions import Outcome, Planner

__all__ = ["MemoryService", "render_notes"]

_REVIEWABLE = (FactStatus.PENDING, FactStatus.CONFLICT)


class MemoryService:
    """Remember, propose, verify, review, sweep and read notes, for (tenant, user) pairs.

    Args:
        store: where facts live (SQLite or PostgreSQL).
        settings: the ``memory`` section (λ, archive threshold, notes floor and limit…).
        clock: wall time; tests inject a :class:`~hermes_desk.testing.FakeClock`.
        keyfacts: the pack's filter (labels for notes, long-term keys, extraction).
        events: where ``memory.*`` events go.
        lang: language of note texts.
    """

    def __init__(
        self,
        store: MemoryStore,
        settings: MemorySettings,
        *,
        clock: Clock,
        keyfacts: KeyFactFilter | None = None,
        events: EventSink | None = None,
        lang: str = "zh",
    ) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self.keyfacts = keyfacts
        self.events: EventSink = events if events is not None else MemorySink()
        self.lang = lang
        self.policy = DecayPolicy(settings.decay_lambda, settings.archive_below)
        self.planner = Planner(
            self.policy,
            is_long_term=keyfacts.is_long_term if keyfacts else (lambda _key: False),
        )

    # -- writes -----------------------------------------------------------------------------

    async def remember(
        self,
        tenant: str,
        user_id: str,
        candidate: CandidateFact,
        source_session: str | None = None,
        *,
        origin: FactOrigin = FactOrigin.RULE,
    ) -> Outcome:
        """Write a said fact to mid-term: store, reinforce, supersede or keep as a conflict."""
        _check_candidate(candidate)
        now = self.clock.now()

        def plan(current: Fact | None) -> Outcome:
            return self.planner.remember(
                tenant, user_id, candidate, current, now=now, source_session=source_session,
                origin=origin,
            )  # fmt: skip

        outcome = await self.store.write(tenant, user_id, candidate.key, plan)
        self._emit(outcome, source_session)
        return outcome

    async def observe(
        self,
        tenant: str,
        user_id: str,
        text: str,
        *,
        intent: str | None = None,
        slots: Mapping[str, Any] | None = None,
        source_session: str | None = None,
    ) -> list[Outcome]:
        """Run the key-fact filter on an utterance and remember the key facts at once."""
        if self.keyfacts is None:
            return []
        found = self.keyfacts.extract(text, intent, slots)
        return [
            await self.remember(tenant, user_id, c, source_session)
            for c in found
            if qualifies(c, 0.0)
        ]

    def extract(
        self, text: str, *, intent: str | None = None, slots: Mapping[str, Any] | None = None
    ) -> list[CandidateFact]:
        """Candidates for the short-term tier (no write)."""
        return self.keyfacts.extract(text, intent, slots) if self.keyfacts else []

    async def promote_short_term(
        self,
        tenant: str,
        user_id: str,
        session_id: str,
        short_term: ShortTermMemory | Iterable[CandidateFact | Mapping[str, Any]],
    ) -> list[Outcome]:
        """Session-end hook: move the short-term facts that qualify into mid-term."""
        if isinstance(short_term, ShortTermMemory):
            items = short_term.items()
        else:
            items = [
                c if isinstance(c, CandidateFact) else CandidateFact.from_dict(dict(c))
                for c in short_term
            ]
        floor = self.settings.notes_floor
        done = [
            await self.remember(tenant, user_id, c, session_id)
            for c in items
            if qualifies(c, floor)
        ]
        self.events.emit(
            Event("memory.promoted", session_id, self.clock.now(),
                  {"tenant": tenant, "offered": len(items), "promoted": len(done)})
        )  # fmt: skip
        return done

    async def propose(
        self,
        tenant: str,
        user_id: str,
        key: str,
        value: Any,
        confidence: float,
        source_session: str | None = None,
    ) -> Fact:
        """A model-proposed fact: enters ``pending`` until a verifier or a person signs it."""
        candidate = CandidateFact(key=key, value=value, confidence=confidence)
        _check_candidate(candidate)
        now = self.clock.now()

        def plan(_current: Fact | None) -> Outcome:
            return self.planner.propose(
                tenant, user_id, candidate, now=now, source_session=source_session
            )

        outcome = await self.store.write(tenant, user_id, key, plan)
        self._emit(outcome, source_session)
        assert outcome.fact is not None
        return outcome.fact

    # -- reads ------------------------------------------------------------------------------

    async def notes(
        self,
        tenant: str,
        user_id: str,
        *,
        limit: int | None = None,
        lang: str | None = None,
        open_contacts: Iterable[Mapping[str, Any]] = (),
    ) -> list[Note]:
        """Active facts above the floor, highest current confidence first, with age and source;
        their texts in ``lang`` (default: the service's language).

        ``open_contacts`` are short-term key facts of the customer's other contacts still open
        (``Session.open_contacts``: fact dicts with ``session_id``, ``at``), given by the caller,
        who read them for this (tenant, user). They join the notes as ``origin="open_contact"``,
        marked in the text as not verified, one per key (the first given wins: the most recent
        contact), when they would be promoted (a key fact above the floor) and memory holds no
        active fact with the same key and value, nor one with that key written from that
        session, now or before a later value superseded it (it ended and its facts moved).
        """
        now = self.clock.now()
        floor = self.settings.notes_floor
        language = lang or self.lang
        out: list[Note] = []
        active = [
            fact
            for fact in await self.store.facts(tenant, user_id, (FactStatus.ACTIVE,))
            if now < fact.valid_until
        ]
        for fact in active:
            confidence = self.policy.decayed(fact.confidence, fact.last_confirmed_at, now)
            if confidence < floor:
                continue
            text = (
                self.keyfacts.describe(fact.key, fact.value, language)
                if self.keyfacts
                else f"{fact.key} = {fact.value}"
            )
            out.append(
                Note(fact.id, fact.key, fact.value, confidence, now - fact.last_confirmed_at,
                     fact.created_at, fact.source_session, text)
            )  # fmt: skip
        out.extend(self._open_contact_notes(open_contacts, active, language, now))
        out.sort(key=lambda n: (-n.confidence, n.age_s))
        return out[: limit or self.settings.notes_limit]

    def _open_contact_notes(
        self,
        facts: Iterable[Mapping[str, Any]],
        active: Sequence[Fact],
        language: str,
        now: float,
    ) -> list[Note]:
        """Notes for the key facts of other open contacts (see :meth:`notes`)."""
        in_memory = {(f.key, canonical_json(f.value)) for f in active}
        moved = {
            (f.key, session)
            for f in active
            for session in (f.source_session, *(h.source_session for h in f.history))
            if session
        }
        seen: set[str] = set()
        out: list[Note] = []
        for raw in facts:
            try:
                candidate = CandidateFact.from_dict(dict(raw))
            except (KeyError, TypeError, ValueError):
                continue  # not a fact dict: nothing to show
            session = raw.get("session_id")
            source = str(session) if session else None
            if not qualifies(candidate, self.settings.notes_floor) or candidate.key in seen:
                continue
            seen.add(candidate.key)  # the most recent contact's value, shown or not
            held = (candidate.key, canonical_json(candidate.value)) in in_memory
            if held or (candidate.key, source) in moved:
                continue
            said_at = raw.get("at")
            at = float(said_at) if isinstance(said_at, int | float) else now
            text = (
                self.keyfacts.describe_open_contact(candidate.key, candidate.value, language)
                if self.keyfacts
                else open_contact_text(f"{candidate.key} = {candidate.value}", language)
            )
            out.append(
                Note(None, candidate.key, candidate.value, candidate.confidence,
                     max(0.0, now - at), at, source, text, origin="open_contact")
            )  # fmt: skip
        return out

    async def facts(
        self, tenant: str, user_id: str, statuses: Collection[FactStatus] | None = None
    ) -> list[Fact]:
        return await self.store.facts(tenant, user_id, statuses)

    async def pending(self, *, limit: int = 500) -> list[Fact]:
        return await self.store.pending(limit=limit)

    # -- verification and review ------------------------------------------------------------

    async def verify(self, fact: Fact, ok: bool, *, reason: str = "") -> Outcome:
        """The second signature: a verifier's answer for a pending fact."""
        now = self.clock.now()

        def plan(target: Fact, current: Fact | None) -> Outcome:
            if target.status is not FactStatus.PENDING:
                return Outcome("unchanged", target)
            if ok:
                return self.planner.accept(target, current, now=now, kind="verified")
            return self.planner.reject(target, now=now)

        outcome = await self.store.change(fact.tenant, fact.user_id, fact.id, plan)
        self._emit(outcome, fact.source_session, reason=reason)
        return outcome

    async def approve(self, tenant: str, user_id: str, fact_id: str) -> Outcome:
        now = self.clock.now()

        def plan(target: Fact, current: Fact | None) -> Outcome:
            return self.planner.accept(target, current, now=now, kind="approved")

        return await self._review(tenant, user_id, fact_id, plan)

    async def reject(self, tenant: str, user_id: str, fact_id: str) -> Outcome:
        now = self.clock.now()

        def plan(target: Fact, _current: Fact | None) -> Outcome:
            return self.planner.reject(target, now=now)

        return await self._review(tenant, user_id, fact_id, plan)

    async def edit(self, tenant: str, user_id: str, fact_id: str, value: Any) -> Outcome:
        now = self.clock.now()

        def plan(target: Fact, current: Fact | None) -> Outcome:
            return self.planner.edit(target, value, current, now=now)

        return await self._review(tenant, user_id, fact_id, plan)

    async def delete(self, tenant: str, user_id: str, fact_id: str) -> Outcome:
        def plan(target: Fact, _current: Fact | None) -> Outcome:
            return self.planner.delete(target)

        return await self._review(tenant, user_id, fact_id, plan)

    async def _review(self, tenant: str, user_id: str, fact_id: str, plan: ChangePlan) -> Outcome:
        outcome = await self.store.change(tenant, user_id, fact_id, plan)
        self._emit(outcome, None, reviewed=True)
        return outcome

    # -- long-term tags ---------------------------------------------------------------------

    async def tags(self, tenant: str, user_id: str) -> list[LongTermTag]:
        return await self.store.tags(tenant, user_id)

    async def approve_tag(self, tenant: str, user_id: str, tag: str) -> LongTermTag:
        done = await self.store.review_tag(tenant, user_id, tag, approve=True, now=self.clock.now())
        assert done is not None
        self.events.emit(Event("memory.tag.approved", tag, self.clock.now(), {"tenant": tenant}))
        return done

    async def delete_tag(self, tenant: str, user_id: str, tag: str) -> None:
        await self.store.review_tag(tenant, user_id, tag, approve=False, now=self.clock.now())
        self.events.emit(Event("memory.tag.deleted", tag, self.clock.now(), {"tenant": tenant}))

    # -- jobs -------------------------------------------------------------------------------

    async def sweep_decay(self, *, batch: int = 1000) -> list[Fact]:
        """Archive every active fact whose confidence fell below the threshold. Atomic per batch."""
        archived: list[Fact] = []
        while True:
            now = self.clock.now()
            outcomes = await self.store.sweep(now, self._sweep_plan(now), limit=batch)
            for outcome in outcomes:
                self._emit(outcome, outcome.fact.source_session if outcome.fact else None)
                archived.extend(outcome.archived)
            if len(outcomes) < batch:
                return archived

    def _sweep_plan(self, now: float) -> SweepPlan:
        def plan(fact: Fact) -> Outcome | None:
            return self.planner.sweep_one(fact, now)

        return plan

    async def close(self) -> None:
        await self.store.aclose()

    # -- events -----------------------------------------------------------------------------

    def _emit(self, outcome: Outcome, request_id: str | None, **extra: Any) -> None:
        fact = outcome.fact
        if fact is None:
            return
        for gone in outcome.archived:
            if gone is not fact:
                self.events.emit(self._event("archived", gone, request_id))
        self.events.emit(self._event(outcome.kind, fact, request_id, **extra))

    def _event(self, kind: str, fact: Fact, request_id: str | None, **extra: Any) -> Event:
        data = {
            "tenant": fact.tenant,
            "fact_id": fact.id,
            "key": fact.key,
            "value_digest": digest(fact.value),  # values can be personal: never raw in events
            "status": fact.status.value,
            "confidence": round(fact.confidence, 4),
            **extra,
        }
        return Event(f"memory.fact.{kind}", request_id or fact.id, self.clock.now(), data)


def render_notes(notes: Iterable[Note], *, now_label: str = "h ago") -> str:
    """Notes as prompt lines: ``- text (confidence 0.87, 3.0h ago, session ses_…)``."""
    lines = []
    for note in notes:
        source = f", session {note.source_session}" if note.source_session else ""
        lines.append(
            f"- {note.text} (confidence {note.confidence:.2f}, "
            f"{note.age_s / 3600:.1f}{now_label}{source})"
        )
    return "\n".join(lines)


def _check_candidate(candidate: CandidateFact) -> None:
    if not candidate.key or len(candidate.key) > 200:
        raise ValidationError("a fact key must have 1..200 characters", field="key")
    if not 0.0 <= candidate.confidence <= 1.0:
        raise ValidationError("confidence must be within 0..1", field="confidence")
