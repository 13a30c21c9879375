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

import functools
import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from hermes_desk.actions import ActionService, Proposal
from hermes_desk.assist.act import TurnActor
from hermes_desk.assist.converse import (
    PREFERENCE_PREFIX,
    after_the_withdrawal,
    conversation_plan,
    with_the_rest,
)
from hermes_desk.assist.decide import asks_what_no_tool_does, decide, reports_a_status
from hermes_desk.assist.read import TurnReaderStage
from hermes_desk.assist.records import (
    Acting,
    OtherRecord,
    Plan,
    Reading,
    Remembered,
    Speaker,
    Suggestion,
    TurnOutcome,
)
from hermes_desk.assist.several import other_asks, other_records
from hermes_desk.assist.suggest import Responder, TurnSuggester
from hermes_desk.clock import Clock
from hermes_desk.compliance import ComplianceChecker
from hermes_desk.errors import ConflictError, ValidationError
from hermes_desk.events import Event, EventSink, TurnCollector
from hermes_desk.llm.slots import ModelSlotChannel
from hermes_desk.masking import Masker, Masking
from hermes_desk.memory import MemoryService
from hermes_desk.nlu import SlotExtractor, TurnReader
from hermes_desk.nlu.dates import resolve_timezone, today_in
from hermes_desk.packs import Pack
from hermes_desk.sentiment import SentimentModel
from hermes_desk.sessions import Session, SessionManager, Turn
from hermes_desk.supervision import Alert, AlertDetector, verification_failures
from hermes_desk.tools import ToolExecutor, ToolResult, ToolSpec
from hermes_desk.workflows import WorkflowService, WorkflowView

__all__ = ["Assistant", "check_text", "knowledge_cards"]


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
        max_cards: int = 3,
        max_records: int = 3,
        sentiment: SentimentModel | None = None,
        alerts: AlertDetector | None = None,
        masking: Masking | None = None,
    ) -> None:
        self.pack = pack
        #: the workflow each intent starts (a decline takes back its conversation's)
        self._workflows = {name: spec.workflow for name, spec in pack.intents.items()}
        self._offered = functools.partial(reports_a_status, pack=pack)
        self._beyond = functools.partial(asks_what_no_tool_does, pack=pack)
        self.max_cards = max_cards
        #: records of one kind a turn that names several looks up at most ("订单A和B")
        self.max_records = max_records
        self.workflows = workflows
        self.sentiment = sentiment
        self.alerts = alerts if alerts is not None else AlertDetector(pack.compliance.alerts)
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
        zone = resolve_timezone(pack.manifest.timezone)
        self.suggester = TurnSuggester(
            responder=responder,
            compliance=compliance,
            pack=pack,
            explain=self._explain,
            specs=tools.registry.spec_map,
            today=lambda: today_in(clock, zone),
        )

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
        session = await self.sessions.get(tenant, user, session_id, saving=True)
        if not session.is_open:
            raise ConflictError("the session is closed", session_id=session_id)
        started = self.clock.now()
        turn_index = len(session.turns)
        if speaker == "agent":
            return await self._agent_turn(session, text, turn_index)

        reading = await self.reader.read(session, text)
        specs = self.tools.registry.spec_map()
        intent = reading.intent.name
        plan = conversation_plan(
            reading,
            self.pack.acts,
            lambda part: self.memory.extract(part, intent=intent),
            self._workflows,
            self._offered,
            self._beyond,
        )
        if plan is None:
            plan = decide(reading, self.pack, specs, user=user)
        elif plan.answers_rest:
            rest = after_the_withdrawal(reading, plan, self.pack.acts)
            plan = with_the_rest(plan, decide(rest, self.pack, specs, user=user))
        sentiment = self.sentiment.predict(text).to_dict() if self.sentiment else None
        meta: dict[str, Any] = {
            "intent": plan.conversation_intent or intent,
            "slots": reading.found,
            "language": reading.language,
        }
        if sentiment is not None:
            meta["sentiment"] = {"label": sentiment["label"], "score": sentiment["score"]}
        user_turn = Turn("user", text, meta=meta)
        earlier = [t for t in session.turns if t.role == "user"]
        session.turns.append(user_turn)
        acting = await self.actor.act(plan, reading, session, turn_index)
        acting = await self._also_named(acting, reading, plan, session, turn_index, specs)
        remembered = await self._remember(session, reading)
        suggestion = await self.suggester.suggest(reading, plan, acting, remembered, session)
        alerts = self._customer_alerts(text, turn_index, earlier, user_turn, acting)
        await self._persist(session, user_turn, reading, acting, suggestion, turn_index)
        self._supervise(session, "customer", turn_index, sentiment, alerts)
        self.sink.emit(
            Event(
                "turn.handled",
                session.id,
                self.clock.now(),
                {
                    "intent": reading.intent.name,
                    "answered_as": plan.answer_intent,
                    "rule": plan.rule,
                    "tools": [f"{n}:{r.status.value}" for _part, n, r in _all_results(acting)],
                    "proposals": [p.id for p in acting.proposals],
                    "workflow": acting.workflow.status if acting.workflow else None,
                    "suggestion_source": suggestion.source,
                    "compliant": suggestion.compliant,
                    "sentiment": sentiment["label"] if sentiment else None,
                    "alerts": [a.kind for a in alerts],
                },
            )
        )
        outcome = _outcome(
            session, turn_index, reading, plan, acting, remembered, suggestion, started
        )
        outcome.knowledge = knowledge_cards(acting, self.max_cards)
        outcome.sentiment = sentiment
        outcome.alerts = [a.to_dict() for a in alerts]
        return outcome

    async def _agent_turn(self, session: Session, text: str, turn_index: int) -> TurnOutcome:
        """The agent's own line joins the transcript and is checked for compliance slips;
        asking for the input the session's workflow waits for (the SMS code) is the step."""
        waiting = await self.workflows.find_waiting(session.id) if self.workflows else None
        alerts = self.alerts.agent_line(
            text, turn_index, waiting_for=waiting.waiting_for if waiting else None
        )
        meta = {"alerts": [a.kind for a in alerts]} if alerts else None
        # Checked in clear (a full number read out is the slip), stored masked.
        said = self.masking.for_tenant(session.tenant).text(text)
        await self.sessions.append_turn(
            session.tenant, session.user, session.id, Turn("agent", said, meta=meta)
        )
        self._supervise(session, "agent", turn_index, None, alerts)
        outcome = TurnOutcome(session.id, turn_index, "agent")
        outcome.alerts = [a.to_dict() for a in alerts]
        return outcome

    def _customer_alerts(
        self,
        text: str,
        turn_index: int,
        earlier: Sequence[Turn],
        turn: Turn,
        acting: Acting,
    ) -> list[Alert]:
        """Threats and abuse in the line, a run of negative turns, repeated rejected codes."""
        alerts = self.alerts.customer_line(text, turn_index)
        labels = [_meta(t, "sentiment").get("label", "") for t in earlier]
        if turn.meta and "sentiment" in turn.meta:
            labels.append(turn.meta["sentiment"]["label"])
            streak = self.alerts.negative_streak(labels, turn_index)
            if streak is not None:
                alerts.append(streak)
        counts: dict[str, int] = {}
        for previous in earlier:
            counts.update(_meta(previous, "verification"))
        before = sum(counts.values())
        if acting.workflow is not None:
            failures = verification_failures(acting.workflow.steps)
            if failures:
                counts[acting.workflow.id] = failures
                turn.meta = {**(turn.meta or {}), "verification": {acting.workflow.id: failures}}
        failed = self.alerts.verification(before, sum(counts.values()), turn_index)
        if failed is not None:
            alerts.append(failed)
        return alerts

    def _supervise(
        self,
        session: Session,
        speaker: Speaker,
        turn_index: int,
        sentiment: dict[str, Any] | None,
        alerts: Sequence[Alert],
    ) -> None:
        """Tell the supervisor's board (and the logs) about the turn and its alerts."""
        now = self.clock.now()
        base = {"tenant": session.tenant, "turn_index": turn_index, "speaker": speaker}
        self.sink.emit(Event("supervisor.turn", session.id, now, {**base, "sentiment": sentiment}))
        for alert in alerts:
            self.sink.emit(
                Event(
                    "alert.raised",
                    session.id,
                    now,
                    {"tenant": session.tenant, "alert": alert.to_dict()},
                )
            )

    async def _also_named(
        self,
        acting: Acting,
        reading: Reading,
        plan: Plan,
        session: Session,
        turn_index: int,
        specs: Mapping[str, ToolSpec],
    ) -> Acting:
        """The other records a turn named ("订单A和B都到哪了"), each looked up as the first; or
        each asked of in a clause of its own ("订单A到哪了，另外我想退货订单B": A's status)."""
        if not reading.listed:
            return acting

        def planned(other: Reading) -> Plan:
            return decide(other, self.pack, specs, user=session.user)

        others = other_records(reading, plan, planned, limit=self.max_records) or other_asks(
            reading, planned, self.pack.intent, limit=self.max_records
        )
        also = [
            OtherRecord(other, other_plan, await self.actor.act(
                other_plan, other, session, turn_index, part=part
            ))
            for part, (other, other_plan) in enumerate(others, 1)
        ]  # fmt: skip
        return replace(acting, also=tuple(also)) if also else acting

    def _explain(self, proposal: Proposal, language: str) -> str:
        """What a proposal will do, in ``language`` (its tool's ``explain``)."""
        spec = self.tools.registry.spec_map().get(proposal.tool)
        return spec.explanation(proposal.arguments, language) if spec else proposal.explanation

    async def _remember(self, session: Session, reading: Reading) -> Remembered:
        """Stage *remember*: key facts into the session's short-term tier; the notes."""
        candidates = self.memory.extract(
            reading.text, intent=reading.intent.name, slots=reading.slots
        )
        _keep_short_term(session, candidates)
        language = reading.language
        notes = await self.memory.notes(
            session.tenant, session.user, lang=language, open_contacts=session.open_contacts
        )
        return Remembered(
            key_facts=[
                {"key": c.key, "value": c.value, "is_key_fact": c.is_key_fact, "signals": c.signals}
                for c in candidates
            ],
            notes=[n.to_dict() for n in notes],
            note_texts=tuple(n.text for n in notes),
            preferences=self._preferences(session, notes, language),
        )

    def _preferences(
        self, session: Session, notes: Sequence[Any], language: str
    ) -> tuple[str, ...]:
        """The customer's contact preferences: this session's (latest first), then the notes'."""
        keyfacts = self.memory.keyfacts
        if keyfacts is None:
            return ()
        known: dict[str, Any] = {}
        for fact in reversed(session.short_term):
            key = str(fact.get("key", ""))
            if key.startswith(PREFERENCE_PREFIX) and key not in known:
                known[key] = fact.get("value")
        for note in notes:
            if note.key.startswith(PREFERENCE_PREFIX) and note.key not in known:
                known[note.key] = note.value
        return tuple(keyfacts.describe(key, value, language) for key, value in known.items())

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
        for part, name, result in _all_results(acting):
            call_id = f"{session.id}:{turn_index}:{name}{f'#{part}' if part else ''}"
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
    outcome.mentions = {name: list(values) for name, values in reading.mentions.items()}
    outcome.language = reading.language
    outcome.dialogue_act = reading.dialogue_act.act
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
    outcome.tool_calls = [_tool_view(name, result) for _part, name, result in _all_results(acting)]
    if acting.workflow is not None:
        outcome.tool_calls += _workflow_calls(acting.workflow, started)
        outcome.workflow = _workflow_view(acting.workflow)
    outcome.proposals = [p.view() for p in acting.proposals]
    outcome.withdrawn = [p.view() for p in acting.withdrawals]
    outcome.suggestion = suggestion.to_dict()
    outcome.key_facts = remembered.key_facts
    outcome.notes = remembered.notes
    return outcome


def _all_results(acting: Acting) -> list[tuple[int, str, ToolResult]]:
    """The turn's tool results, then those of each other record it named (``part`` 1, 2…)."""
    out = [(0, name, result) for name, result in acting.results.items()]
    for part, other in enumerate(acting.also, 1):
        out += [(part, name, result) for name, result in other.acting.results.items()]
    return out


def knowledge_cards(acting: Acting, limit: int = 3) -> list[dict[str, Any]]:
    """The knowledge-base articles the turn found, as cards for the agent: the title in the
    customer's language, the article id, the passage quoted (whole sentences), its source and
    score; ``[]`` when the turn searched nothing or nothing scored above the threshold. After
    the turn's own (at most ``limit``), the article quoted for each other record it asked of
    ("A到哪了？B能退吗": B's return policy), so every article the suggestion quotes has its card."""
    cards = _cards(acting)[:limit]
    shown = {card["article_id"] for card in cards}
    for other in acting.also:
        for card in _cards(other.acting)[:1]:
            if card["article_id"] not in shown:
                shown.add(card["article_id"])
                cards.append(card)
    return cards


def _cards(acting: Acting) -> list[dict[str, Any]]:
    cards: list[dict[str, Any]] = []
    for result in acting.results.values():
        data = result.result if result.ok and isinstance(result.result, dict) else {}
        hits = data.get("results")
        if not isinstance(hits, list):
            continue
        for hit in hits:
            if not isinstance(hit, dict) or "id" not in hit:
                continue
            cards.append(
                {
                    "title": hit.get("heading") or hit.get("title", ""),
                    "article_id": hit["id"],
                    "passage": hit.get("passage") or hit.get("snippet", ""),
                    "source": hit.get("source") or f"kb/{hit['id']}.md",
                    "score": hit.get("score", 0.0),
                }
            )
    return cards


def _meta(turn: Turn, key: str) -> dict[str, Any]:
    value = (turn.meta or {}).get(key)
    return value if isinstance(value, dict) else {}


def _masked_outcome(outcome: TurnOutcome, mask: Masker) -> TurnOutcome:
    """What the turn answers, personal numbers masked (workflow and proposal views are masked
    by their own rules; events before they are built)."""
    if not mask.enabled:
        return outcome
    outcome.slots = mask.data(outcome.slots)
    outcome.tool_calls = mask.data(outcome.tool_calls)
    outcome.key_facts = mask.data(outcome.key_facts)
    outcome.mentions = mask.data(outcome.mentions)
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
    conversation's intent kept (``conversation``), the request one of its clauses makes beside
    a question (``clauses``), or nothing sure enough (``out_of_scope``)."""
    if reading.intent.out_of_scope:
        return "out_of_scope"
    if reading.by_clauses:
        return "clauses"
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
        "withdrawn": view.withdrawn,
    }


def _short(result: ToolResult) -> str:
    payload = result.result if result.ok else {"status": result.status.value}
    return json.dumps(payload, ensure_ascii=False, default=str)[:500]
