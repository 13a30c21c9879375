"""One customer turn as a short pipeline of typed stages::

    read → decide → act → remember → suggest → persist

Each stage returns its own record (:mod:`hermes_desk.assist.records`); the turn collects its own
events while it runs (:class:`~hermes_desk.events.TurnCollector`). The engine knows no business:
which tools an intent may call, which workflow it starts and how the reply reads come from the
domain pack; which tools write comes from their declared effects. Every path works with no
model. Turns of one session run one at a time (the session manager's turn lock; a turn that
loses a race with another worker gets a 409).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from typing import Any

from hermes_desk.actions import ActionService
from hermes_desk.assist.act import TurnActor
from hermes_desk.assist.decide import decide
from hermes_desk.assist.read import TurnReaderStage
from hermes_desk.assist.records import (
    Acting,
    Plan,
    Reading,
    Remembered,
    Speaker,
    Suggestion,
    TurnOutcome,
)
from hermes_desk.assist.suggest import Responder, TurnSuggester
from hermes_desk.clock import Clock
from hermes_desk.compliance import ComplianceChecker
from hermes_desk.errors import ConflictError, ValidationError
from hermes_desk.events import Event, EventSink, TurnCollector
from hermes_desk.llm.slots import ModelSlotChannel
from hermes_desk.masking import Masker, Masking
from hermes_desk.memory import MemoryService
from hermes_desk.nlu import SlotExtractor, TurnReader
from hermes_desk.packs import Pack
from hermes_desk.sessions import Session, SessionManager, Turn
from hermes_desk.tools import ToolExecutor, ToolResult
from hermes_desk.workflows import WorkflowService, WorkflowView

__all__ = ["Assistant", "check_text"]


def check_text(text: str, max_chars: int) -> str:
    """Refuse empty, oversized or binary text (control characters), naming the problem."""
    stripped = text.strip()
    if not stripped:
        raise ValidationError("text is empty", field="text")
    if len(text) > max_chars:
        raise ValidationError(f"text is longer than {max_chars} characters", field="text")
    if any(unicodedata.category(ch) == "Cc" and ch not in "\t\n\r" for ch in text):
        raise ValidationError("text contains control characters (binary data?)", field="text")
    return stripped


class Assistant:
    """Runs turns. Built whole, once per service, by :func:`hermes_desk.runtime.build_runtime`."""

    def __init__(
        self,
        *,
        pack: Pack,
        sessions: SessionManager,
        intents: TurnReader,
        slots: SlotExtractor,
        tools: ToolExecutor,
        workflows: WorkflowService | None,
        actions: ActionService,
        memory: MemoryService,
        responder: Responder,
        compliance: ComplianceChecker,
        sink: EventSink,
        clock: Clock,
        oos_threshold: float,
        max_text_chars: int,
        model_slots: ModelSlotChannel | None = None,
        masking: Masking | None = None,
    ) -> None:
        self.pack = pack
        # Personal numbers are masked in what the turn stores and answers (spec D3).
        self.masking = masking or Masking()
        self.sessions = sessions
        self.tools = tools
        self.memory = memory
        self.sink = sink
        self.clock = clock
        self.max_text_chars = max_text_chars
        self.reader = TurnReaderStage(
            pack=pack,
            intents=intents,
            slots=slots,
            workflows=workflows,
            actions=actions,
            oos_threshold=oos_threshold,
            model_slots=model_slots,
        )
        self.actor = TurnActor(tools=tools, workflows=workflows, actions=actions)
        self.suggester = TurnSuggester(responder=responder, compliance=compliance)

    async def turn(
        self, tenant: str, user: str, session_id: str, text: str, *, speaker: Speaker = "customer"
    ) -> TurnOutcome:
        """Handle one utterance. Raises NotFoundError / ConflictError / ValidationError."""
        text = check_text(text, self.max_text_chars)
        async with self.sessions.turn_lock(session_id):
            with TurnCollector.collect() as events:
                outcome = await self._turn(tenant, user, session_id, text, speaker)
            outcome.events = [e.to_dict() for e in events]
        return _masked_outcome(outcome, self.masking.for_tenant(tenant))

    async def _turn(
        self, tenant: str, user: str, session_id: str, text: str, speaker: Speaker
    ) -> TurnOutcome:
        session = await self.sessions.get(tenant, user, session_id)
        if not session.is_open:
            raise ConflictError("the session is closed", session_id=session_id)
        started = self.clock.now()
        turn_index = len(session.turns)
        if speaker == "agent":
            said = self.masking.for_tenant(tenant).text(text)
            await self.sessions.append_turn(tenant, user, session_id, Turn("agent", said))
            return TurnOutcome(session.id, turn_index, speaker)

        reading = await self.reader.read(session, text)
        specs = {spec.name: spec for spec in self.tools.registry.specs()}
        plan = decide(reading, self.pack, specs, user=user)
        user_turn = Turn("user", text, meta={"intent": reading.intent.name, "slots": reading.found})
        session.turns.append(user_turn)
        acting = await self.actor.act(plan, reading, session, turn_index)
        remembered = await self._remember(session, reading)
        suggestion = await self.suggester.suggest(reading, plan, acting, remembered, session)
        await self._persist(session, user_turn, reading, acting, suggestion, turn_index)
        self.sink.emit(
            Event(
                "turn.handled",
                session.id,
                self.clock.now(),
                {
                    "intent": reading.intent.name,
                    "answered_as": plan.answer_intent,
                    "rule": plan.rule,
                    "tools": [f"{n}:{r.status.value}" for n, r in acting.results.items()],
                    "proposals": [p.id for p in acting.proposals],
                    "workflow": acting.workflow.status if acting.workflow else None,
                    "suggestion_source": suggestion.source,
                    "compliant": suggestion.compliant,
                },
            )
        )
        return _outcome(session, turn_index, reading, plan, acting, remembered, suggestion, started)

    async def _remember(self, session: Session, reading: Reading) -> Remembered:
        """Stage *remember*: key facts into the session's short-term tier; the notes."""
        candidates = self.memory.extract(
            reading.text, intent=reading.intent.name, slots=reading.slots
        )
        _keep_short_term(session, candidates)
        notes = await self.memory.notes(session.tenant, session.user)
        return Remembered(
            key_facts=[
                {"key": c.key, "value": c.value, "is_key_fact": c.is_key_fact, "signals": c.signals}
                for c in candidates
            ],
            notes=[n.to_dict() for n in notes],
            note_texts=tuple(n.text for n in notes),
        )

    async def _persist(
        self,
        session: Session,
        user_turn: Turn,
        reading: Reading,
        acting: Acting,
        suggestion: Suggestion,
        turn_index: int,
    ) -> None:
        """Stage *persist*: the tool calls and the suggestion join the transcript; one save.
        What is stored is masked: the clear values stay with the turn (and a running
        workflow's own state)."""
        mask = self.masking.for_tenant(session.tenant)
        for name, result in acting.results.items():
            call_id = f"{session.id}:{turn_index}:{name}"
            session.turns.append(Turn("agent", f"call {name}", tool_call_id=call_id, name=name))
            stored = mask.text(_short(result))
            session.turns.append(Turn("tool", stored, tool_call_id=call_id, name=name))
        session.slots = mask.data(dict(reading.state.slots))
        user_turn.meta = mask.data({**(user_turn.meta or {}), "suggestion": suggestion.text})
        user_turn.text = mask.text(user_turn.text)
        session.short_term = mask.data(session.short_term)
        await self.sessions.save(session)


def _outcome(
    session: Session,
    turn_index: int,
    reading: Reading,
    plan: Plan,
    acting: Acting,
    remembered: Remembered,
    suggestion: Suggestion,
    started: float,
) -> TurnOutcome:
    outcome = TurnOutcome(session.id, turn_index, "customer", slots=dict(reading.slots))
    outcome.intent = {
        "name": reading.intent.name,
        "answered_as": plan.answer_intent,
        "act": reading.act,
        "confidence": round(reading.confidence, 4),
        "carried": reading.carried,
        "out_of_scope": reading.intent.out_of_scope,
        "decided_by": _decided_by(reading),
        "ranking_model": reading.ranking_model,
        "ranking": [[label, round(p, 4)] for label, p in reading.ranking],
        "latency_ms": round(reading.nlu_ms, 3),
    }
    outcome.missing_slots = list(plan.missing_slots)
    outcome.tool_calls = [_tool_view(name, result) for name, result in acting.results.items()]
    if acting.workflow is not None:
        outcome.tool_calls += _workflow_calls(acting.workflow, started)
        outcome.workflow = _workflow_view(acting.workflow)
    outcome.proposals = [p.view() for p in acting.proposals]
    outcome.suggestion = suggestion.to_dict()
    outcome.key_facts = remembered.key_facts
    outcome.notes = remembered.notes
    return outcome


def _masked_outcome(outcome: TurnOutcome, mask: Masker) -> TurnOutcome:
    """What the turn answers, personal numbers masked (workflow and proposal views are masked
    by their own rules; events before they are built)."""
    if not mask.enabled:
        return outcome
    outcome.slots = mask.data(outcome.slots)
    outcome.tool_calls = mask.data(outcome.tool_calls)
    outcome.key_facts = mask.data(outcome.key_facts)
    outcome.suggestion = mask.data(outcome.suggestion) if outcome.suggestion else None
    return outcome


def _keep_short_term(session: Session, candidates: Sequence[Any]) -> None:
    """Short-term tier: the session's key facts, one per key (the latest wins)."""
    for candidate in candidates:
        if not candidate.is_key_fact:
            continue
        data = candidate.to_dict()
        session.short_term = [f for f in session.short_term if f.get("key") != candidate.key]
        session.short_term.append(data)


def _decided_by(reading: Reading) -> str:
    """Why the turn has its intent: the top of the ranking shown (``model``), the
    conversation's intent kept (``conversation``), or nothing sure enough (``out_of_scope``)."""
    if reading.intent.out_of_scope:
        return "out_of_scope"
    top = reading.ranking[0][0] if reading.ranking else None
    return "model" if top == reading.intent.name else "conversation"


def _tool_view(name: str, result: ToolResult) -> dict[str, Any]:
    view = result.to_dict()
    view["tool"] = name
    view["source"] = "turn"
    view["step"] = None
    return view


def _workflow_calls(view: WorkflowView, since: float) -> list[dict[str, Any]]:
    """The workflow's tool steps that finished during this turn, as tool calls (the same
    fields as the turn's own calls; a step's result stays in the workflow)."""
    return [
        {
            "tool": step.tool,
            "status": "ok" if step.status == "succeeded" else step.status,
            "latency_ms": step.duration_ms,
            "source": "workflow",
            "step": step.name,
            "result": None,
            "fallback": None,
            "error": step.error,
            "call_id": None,
        }
        for step in view.steps
        if step.tool and step.finished_at is not None and step.finished_at >= since
    ]


def _workflow_view(view: WorkflowView) -> dict[str, Any]:
    return {
        "id": view.id,
        "name": view.name,
        "status": view.status,
        "phase": view.phase,
        "waiting_for": view.waiting_for,
        "steps": [{"name": s.name, "status": s.status, "tool": s.tool} for s in view.steps],
    }


def _short(result: ToolResult) -> str:
    payload = result.result if result.ok else {"status": result.status.value}
    return json.dumps(payload, ensure_ascii=False, default=str)[:500]
