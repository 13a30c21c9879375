"""One turn: session → NLU → gate → workflow or tools → memory → suggestion → compliance.

The engine knows no business: which tools an intent may call, which it calls, which workflow it
starts and how the reply reads all come from the domain pack. Every path works with no model.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from hermes_desk.clock import Clock
from hermes_desk.compliance import ComplianceChecker
from hermes_desk.errors import ConflictError, ValidationError
from hermes_desk.events import Event, EventSink, MemorySink
from hermes_desk.llm.messages import ResponderInput
from hermes_desk.llm.slots import ModelSlotChannel
from hermes_desk.memory import MemoryService, Note
from hermes_desk.nlu import (
    OOS,
    DialogueState,
    SlotExtractor,
    TurnReader,
    merge_model_slots,
)
from hermes_desk.packs import IntentSpec, Pack
from hermes_desk.sessions import Session, SessionManager, Turn
from hermes_desk.tools import CallContext, ToolExecutor, ToolResult
from hermes_desk.workflows import WorkflowService, WorkflowView

__all__ = ["Assistant", "Responder", "TurnOutcome", "check_text", "language_of"]

Speaker = Literal["customer", "agent"]
_CJK = re.compile(r"[\u4e00-\u9fff]")
# Arguments a pack's tools may take from the conversation itself rather than from slots.
_CONTEXT_ARGUMENTS = ("user_id", "query", "summary")


class Responder(Protocol):
    """What turns a turn's facts into a suggestion: the model chain, ending offline."""

    async def suggest(self, facts: ResponderInput, session: Session) -> tuple[str, str]:
        """Returns ``(text, link)`` where link names who answered (``offline``, a model…)."""
        ...


@dataclass
class TurnOutcome:
    session_id: str
    turn_index: int
    speaker: Speaker
    intent: dict[str, Any] | None = None
    slots: dict[str, Any] = field(default_factory=dict)
    missing_slots: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    workflow: dict[str, Any] | None = None
    suggestion: dict[str, Any] | None = None
    key_facts: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "turn_index": self.turn_index,
            "speaker": self.speaker,
            "intent": self.intent,
            "slots": self.slots,
            "missing_slots": self.missing_slots,
            "tool_calls": self.tool_calls,
            "workflow": self.workflow,
            "suggestion": self.suggestion,
            "key_facts": self.key_facts,
            "notes": self.notes,
            "events": self.events,
        }


def language_of(text: str) -> str:
    return "zh" if _CJK.search(text) else "en"


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
    """Runs turns. Built once per service by :func:`hermes_desk.runtime.build_runtime`."""

    def __init__(
        self,
        *,
        pack: Pack,
        sessions: SessionManager,
        intents: TurnReader,
        slots: SlotExtractor,
        tools: ToolExecutor,
        workflows: WorkflowService | None,
        memory: MemoryService,
        responder: Responder,
        compliance: ComplianceChecker,
        events: MemorySink,
        sink: EventSink,
        clock: Clock,
        oos_threshold: float,
        max_text_chars: int,
        model_slots: ModelSlotChannel | None = None,
    ) -> None:
        self.pack = pack
        self.sessions = sessions
        self.intents = intents
        self.slots = slots
        self.tools = tools
        self.workflows = workflows
        self.memory = memory
        self.responder = responder
        self.compliance = compliance
        self.recent_events = events
        self.sink = sink
        self.clock = clock
        self.oos_threshold = oos_threshold
        self.max_text_chars = max_text_chars
        self.model_slots = model_slots

    async def turn(
        self, tenant: str, user: str, session_id: str, text: str, *, speaker: Speaker = "customer"
    ) -> TurnOutcome:
        """Handle one utterance. Raises NotFoundError / ConflictError / ValidationError."""
        text = check_text(text, self.max_text_chars)
        session = await self.sessions.get(tenant, user, session_id)
        if not session.is_open:
            raise ConflictError("the session is closed", session_id=session_id)
        started = self.clock.now()
        turn_index = len(session.turns)
        if speaker == "agent":
            await self.sessions.append_turn(tenant, user, session_id, Turn("agent", text))
            return TurnOutcome(session.id, turn_index, speaker)

        perf = time.perf_counter()
        state = _state_of(session, self.oos_threshold)
        resolved = self.intents.read(text, state)
        prediction = resolved.prediction
        intent = self.pack.intent(resolved.intent)
        found = self.slots.extract(text)
        nlu_ms = (time.perf_counter() - perf) * 1000
        if self.model_slots is not None and intent.slots and not intent.out_of_scope:
            # Second channel: the model's slots, each checked against the intent's schema;
            # deterministic, format-checked values win.
            proposed = await self.model_slots.extract(
                text,
                intent=intent.name,
                schema=intent.slots,
                language=language_of(text),
                request_id=session.id,
            )
            found, _refused = merge_model_slots(found, proposed.slots, intent.slots)
        state.update_slots(found)
        slots = state.slots_for(intent.slots)

        key_facts = self.memory.extract(text, intent=intent.name, slots=slots)
        _keep_short_term(session, key_facts)

        outcome = TurnOutcome(session.id, turn_index, "customer", slots=slots)
        outcome.intent = {
            "name": intent.name,
            "confidence": round(resolved.confidence, 4),
            "carried": resolved.carried,
            "out_of_scope": intent.out_of_scope,
            "ranking": [[label, round(p, 4)] for label, p in prediction.ranking[:3]],
            "latency_ms": round(nlu_ms, 3),
        }
        outcome.key_facts = [
            {"key": c.key, "value": c.value, "is_key_fact": c.is_key_fact, "signals": c.signals}
            for c in key_facts
        ]

        user_turn = Turn("user", text, meta={"intent": intent.name, "slots": found})
        session.turns.append(user_turn)
        results: dict[str, ToolResult] = {}
        view: WorkflowView | None = None
        if not intent.out_of_scope:
            view = await self._workflow(tenant, user, session, intent, slots, found, outcome, text)
            if view is None and not outcome.missing_slots:
                results = await self._call_tools(session, user, intent, slots, text, turn_index)
        elif self.workflows is not None:
            view = await self._feed_waiting(tenant, session, found, text)

        for name, result in results.items():
            outcome.tool_calls.append(_tool_view(name, result))
            call_id = f"{session.id}:{turn_index}:{name}"
            session.turns.append(Turn("agent", f"call {name}", tool_call_id=call_id, name=name))
            session.turns.append(Turn("tool", _short(result), tool_call_id=call_id, name=name))

        notes = await self.memory.notes(tenant, user)
        outcome.notes = [n.to_dict() for n in notes]
        facts = self._facts(intent, slots, results, notes, view, outcome, text)
        reply, link = await self.responder.suggest(facts, session)
        checked = self.compliance.check(reply)
        outcome.suggestion = {
            "text": checked.text,
            "source": link,
            "compliant": checked.passed,
            "violations": list(checked.violations),
        }
        if view is not None:
            outcome.workflow = _workflow_view(view)
        session.slots = dict(state.slots)
        user_turn.meta = {**(user_turn.meta or {}), "suggestion": checked.text}
        await self.sessions.save(session)
        self.sink.emit(
            Event(
                "turn.handled",
                session.id,
                self.clock.now(),
                {
                    "intent": intent.name,
                    "tools": [f"{n}:{r.status.value}" for n, r in results.items()],
                    "workflow": view.status if view else None,
                    "suggestion_source": link,
                    "compliant": checked.passed,
                },
            )
        )
        outcome.events = [
            e.to_dict() for e in self.recent_events.events(request_id=session.id) if e.at >= started
        ]
        return outcome

    # -- workflows ---------------------------------------------------------------------------

    async def _workflow(
        self,
        tenant: str,
        user: str,
        session: Session,
        intent: IntentSpec,
        slots: dict[str, Any],
        found: dict[str, Any],
        outcome: TurnOutcome,
        text: str,
    ) -> WorkflowView | None:
        if self.workflows is None:
            return None
        waiting = await self._feed_waiting(tenant, session, found, text)
        if waiting is not None or not intent.workflow:
            return waiting
        definition = self.pack.workflows[intent.workflow]
        missing = [
            name for name, spec in definition.inputs.items()
            if spec.required and name not in slots and spec.generate is None
        ]  # fmt: skip
        if missing:
            outcome.missing_slots = missing
            return None
        inputs = {name: slots[name] for name in definition.inputs if name in slots}
        return await self.workflows.start(
            intent.workflow, inputs, tenant=tenant, user=user, session_id=session.id
        )

    async def _feed_waiting(
        self, tenant: str, session: Session, found: Mapping[str, Any], text: str
    ) -> WorkflowView | None:
        """A workflow of this session waiting for the customer gets the slot this turn brings."""
        if self.workflows is None:
            return None
        waiting = await self.workflows.find_waiting(session.id)
        if waiting is None or not waiting.waiting_for:
            return waiting
        slot = waiting.waiting_for
        value = found.get(slot)
        if value is None:
            value = _value_for_schema(text, self._slot_schema(slot))
        if value is None:
            return waiting
        return await self.workflows.provide_input(waiting.id, {slot: value}, tenant=tenant)

    def _slot_schema(self, slot: str) -> Mapping[str, Any] | None:
        for intent in self.pack.intents.values():
            if slot in intent.slots:
                return intent.slots[slot]
        return None

    # -- tools -------------------------------------------------------------------------------

    async def _call_tools(
        self,
        session: Session,
        user: str,
        intent: IntentSpec,
        slots: Mapping[str, Any],
        text: str,
        turn_index: int,
    ) -> dict[str, ToolResult]:
        missing = [s for s in intent.required_slots if s not in slots]
        if missing:
            return {}
        context = {"user_id": user, "query": text, "summary": text}
        results: dict[str, ToolResult] = {}
        for name in intent.calls:
            entry = self.tools.registry.get(name)
            if entry is None:
                continue
            properties = entry.spec.parameters.get("properties", {})
            arguments = {
                key: slots[key] if key in slots else context[key]
                for key in properties
                if key in slots or key in _CONTEXT_ARGUMENTS
            }
            results[name] = await self.tools.execute(
                {"name": name, "arguments": arguments},
                request_id=session.id,
                allowed_tools=intent.tools,
                context=CallContext(
                    request_id=session.id, idempotency_key=f"{session.id}:{turn_index}:{name}"
                ),
            )
        return results

    # -- the reply ---------------------------------------------------------------------------

    def _facts(
        self,
        intent: IntentSpec,
        slots: Mapping[str, Any],
        results: Mapping[str, ToolResult],
        notes: Sequence[Note],
        view: WorkflowView | None,
        outcome: TurnOutcome,
        text: str,
    ) -> ResponderInput:
        missing = list(outcome.missing_slots) or [
            s for s in intent.required_slots if s not in slots
        ]
        outcome.missing_slots = missing
        shown = dict(slots)
        if isinstance(slots.get("phone"), str):
            shown["phone_tail"] = slots["phone"][-4:]
        outputs: dict[str, Any] = {}
        if view is not None:  # a workflow's step results read like tool results in templates
            outputs.update({s.tool: s.output for s in view.steps if s.tool and s.output})
        outputs.update({n: r.result for n, r in results.items() if r.ok})
        return ResponderInput(
            intent=intent.name,
            slots=shown,
            tool_results=outputs,
            failed_fallbacks=tuple(r.fallback or "" for r in results.values() if not r.ok),
            notes=tuple(n.text for n in notes),
            workflow_state=view.status if view is not None else None,
            waiting_for=view.waiting_for if view is not None else None,
            language=language_of(text),
            missing_slots=tuple(missing),
        )


def _value_for_schema(text: str, schema: Mapping[str, Any] | None) -> str | None:
    """The token of ``text`` that satisfies a slot's anchored ``pattern`` (a code the customer
    reads out: "验证码是 123456", "it says X7K2"), for the slot a workflow is waiting for.

    Code-like tokens (with a digit, or in capitals) come first; else the last match, since a
    code is read out after the words that announce it ("the code is abcd")."""
    if not schema or "pattern" not in schema:
        return None
    pattern = re.compile(str(schema["pattern"]))
    tokens: list[str] = re.findall(r"[A-Za-z0-9]+", text)
    matches = [token for token in tokens if pattern.fullmatch(token)]
    coded = [t for t in matches if t.isupper() or any(ch.isdigit() for ch in t)]
    if coded:
        return coded[0]
    return matches[-1] if matches else None


def _state_of(session: Session, threshold: float) -> DialogueState:
    last_intent = next(
        (
            t.meta["intent"]
            for t in reversed(session.turns)
            if t.role == "user" and t.meta and t.meta.get("intent") not in (None, OOS)
        ),
        None,
    )
    user_turns = [t for t in session.turns if t.role == "user"]
    return DialogueState(
        threshold=threshold,
        intent=last_intent,
        slots=dict(session.slots),
        turns=len(user_turns),
        last_text=user_turns[-1].text if user_turns else None,
    )


def _keep_short_term(session: Session, candidates: Sequence[Any]) -> None:
    """Short-term tier: the session's key facts, one per key (the latest wins)."""
    for candidate in candidates:
        if not candidate.is_key_fact:
            continue
        data = candidate.to_dict()
        session.short_term = [f for f in session.short_term if f.get("key") != candidate.key]
        session.short_term.append(data)


def _tool_view(name: str, result: ToolResult) -> dict[str, Any]:
    view = result.to_dict()
    view["tool"] = name
    return view


def _workflow_view(view: WorkflowView) -> dict[str, Any]:
    out = {
        "id": view.id,
        "name": view.name,
        "status": view.status,
        "phase": view.phase,
        "waiting_for": view.waiting_for,
        "steps": [{"name": s.name, "status": s.status} for s in view.steps],
    }
    image = _image_to_show(view)
    if image is not None:
        out["image"] = image
    return out


def _image_to_show(view: WorkflowView) -> str | None:
    """While a workflow waits for the customer, the image they must read from (a captcha): the
    agent shows or sends it. Only ``data:image/…`` URLs from steps that went through — a racer
    that finished but lost its ``first`` phase did not."""
    if view.status != "waiting_input":
        return None
    lost = {
        step.name
        for step in view.steps
        for phase in view.phases
        if phase.name == step.phase and phase.mode == "first" and phase.winner != step.name
    }
    for step in reversed(view.steps):
        if step.status != "succeeded" or step.name in lost:
            continue
        image = (step.output or {}).get("image")
        if isinstance(image, str) and image.startswith("data:image/"):
            return image
    return None


def _short(result: ToolResult) -> str:
    import json

    payload = result.result if result.ok else {"status": result.status.value}
    return json.dumps(payload, ensure_ascii=False, default=str)[:500]
