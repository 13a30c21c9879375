"""The typed records the turn's stages hand to each other, and the turn's outcome.

read → :class:`Reading` · decide → :class:`Plan` · act → :class:`Acting` · remember →
:class:`Remembered` · suggest → :class:`Suggestion` · persist → :class:`TurnOutcome`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_desk.actions import Proposal
from hermes_desk.nlu import DialogueState
from hermes_desk.nlu.dialogue_acts import NO_ACT, ActReading
from hermes_desk.packs import IntentSpec
from hermes_desk.tools import ToolResult
from hermes_desk.workflows import WorkflowView

__all__ = [
    "Acting",
    "Clause",
    "Lookup",
    "OtherRecord",
    "Plan",
    "ProposedWrite",
    "Reading",
    "Remembered",
    "Speaker",
    "Suggestion",
    "TurnOutcome",
    "WorkflowMove",
]

Speaker = Literal["customer", "agent"]


@dataclass(frozen=True, slots=True)
class Reading:
    """What the customer said, read in its conversation (stage *read*)."""

    text: str
    language: str
    intent: IntentSpec
    confidence: float
    carried: bool
    ranking: list[tuple[str, float]]
    act: Literal["question", "request"]
    found: dict[str, Any]
    slots: dict[str, Any]
    state: DialogueState
    nlu_ms: float
    waiting: WorkflowView | None
    proposals: list[Proposal]
    ranking_model: Literal["context", "classifier"] = "classifier"
    #: the conversation's slots before this turn (what the turn changed is told apart)
    previous_slots: dict[str, Any] = field(default_factory=dict)
    #: the conversation's intent before this turn (None: the turn opens the conversation)
    previous_intent: str | None = None
    #: the customer's previous turn, as the dialogue state kept it (None: the turn opens it)
    previous_text: str | None = None
    #: every value named so far of a slot of which several were named (``order_id`` → […])
    mentions: dict[str, list[str]] = field(default_factory=dict)
    #: The turn's dialogue act (thanks, closing…) and whether it is all the turn says.
    dialogue_act: ActReading = NO_ACT
    #: the intent was taken from a reading under the threshold (``ResolvedIntent.unsure``)
    unsure: bool = False
    #: every value of a slot this turn names several of ("订单A和B" → ``order_id`` → [A, B])
    listed: dict[str, list[str]] = field(default_factory=dict)
    #: those values each in a clause of its own, with what the clause asks ("A到哪了，另外退货B")
    clauses: tuple[Clause, ...] = ()
    #: the intent is the request one of those clauses makes, not the whole turn's reading
    by_clauses: bool = False
    #: the customer's writes that ran in their earlier contacts, oldest first (a ticket opened
    #: yesterday), read for the intents that go on from them (:func:`goes_on_across_contacts`)
    earlier: list[Proposal] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Clause:
    """A clause of a turn that names one of several records, and the intent it reads as alone
    (the classifier's, or ``oos`` under the threshold)."""

    slot: str
    value: str
    text: str
    intent: str


@dataclass(frozen=True, slots=True)
class Lookup:
    """A read tool to call, with its arguments, the look-up to make ``instead`` when it finds
    nothing (the intent's ``if_not_found``), and the look-up whose record's status joins its
    query (the intent's ``kb_record``)."""

    tool: str
    arguments: dict[str, Any]
    instead: Lookup | None = None
    #: a look-up made before this one whose record's status joins this one's ``query``
    status_of: str | None = None
    #: where that status goes: the ``query`` (it joins the ranking as the search's ``state``;
    #: an article only it matches is no answer), or ``about`` (it only chooses the passage of
    #: the article the question finds)
    status_in: Literal["query", "about"] = "query"
    #: look-ups that tell this record's status more closely, each with the status it takes
    #: over (the intent's ``kb_record_detail``: a shipped order's parcel, which may be lost)
    detail: tuple[tuple[str, Lookup], ...] = ()


@dataclass(frozen=True, slots=True)
class ProposedWrite:
    """A write to propose to the agent: never executed by the turn."""

    tool: str
    arguments: dict[str, Any]
    rule: str
    topic: str | None = None
    #: The look-up that must find the record the write names (the intent's ``record_check``):
    #: not found for this customer, the write is not proposed.
    requires: str | None = None


@dataclass(frozen=True, slots=True)
class WorkflowMove:
    """What the turn does with a workflow: ``start`` one, ``feed`` the waiting one a slot,
    ``show`` the waiting one as it is, or ``restart`` it (end it, start it again with
    ``inputs`` over its own)."""

    kind: Literal["start", "feed", "show", "restart"]
    name: str
    workflow_id: str | None = None
    inputs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Plan:
    """What the turn will do (stage *decide*; pure)."""

    answer_intent: str
    rule: str
    lookups: tuple[Lookup, ...] = ()
    writes: tuple[ProposedWrite, ...] = ()
    workflow: WorkflowMove | None = None
    missing_slots: tuple[str, ...] = ()
    #: The reply situation the plan settles itself (a dialogue act, a stated preference).
    situation: str | None = None
    #: The reply situation when every look-up found its record (``status_reported``: the
    #: record's status said); otherwise the usual one (``not_found``, ``tool_failed``).
    if_found: str | None = None
    #: Proposals the customer withdrew with this turn ("不退了", "I'll keep it"): withdrawn
    #: unless an agent decided them first.
    withdraw: tuple[str, ...] = ()
    #: The workflow waiting for the customer that they took back ("不用重置了"): it ends.
    withdraw_workflow: str | None = None
    #: A waiting proposal (its id) and the arguments the turn gives it ("尺码太小了": the
    #: return's reason), amended unless an agent decided it first.
    amend: tuple[str, dict[str, Any]] | None = None
    #: The turn says more than the withdrawal ("不退了，我要换货"): the plan for the rest, with
    #: the withdrawal (:func:`hermes_desk.assist.converse.with_the_rest`).
    answers_rest: bool = False
    #: Proposals of this session an agent approved and that ran ("我的投诉处理得怎么样了" after
    #: the ticket was opened): the reply shows their results; nothing runs again.
    recall: tuple[str, ...] = ()
    #: The intent the conversation goes on in, when not the one the turn read as ("is it done?"
    #: read as a parcel's intent, answered about the ticket: "还是没人联系我" next is the
    #: complaint's, not a parcel to track).
    conversation_intent: str | None = None
    #: A write of this session still waiting for the agent (its id), said before the answer
    #: ("when do I get the money?" while the refund waits: it is not confirmed yet).
    waits_first: str | None = None


@dataclass(frozen=True, slots=True)
class Acting:
    """What the turn did (stage *act*): read tools' results, the workflow, new proposals."""

    results: dict[str, ToolResult]
    workflow: WorkflowView | None
    proposals: list[Proposal]
    #: The plan's withdrawals as they came out: withdrawn, or decided by an agent first.
    withdrawals: list[Proposal] = field(default_factory=list)
    #: The plan's workflow withdrawal ended it (False: it had moved on meanwhile).
    workflow_withdrawn: bool = False
    #: The other records the turn named, each looked up as the first was
    #: (:mod:`hermes_desk.assist.several`), with what was read and planned for it.
    also: tuple[OtherRecord, ...] = ()
    #: a record's tool → the tool whose record told its status more closely (``Lookup.detail``)
    told: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class OtherRecord:
    """One more record a turn named ("订单A和B都到哪了": B), as read, planned and looked up."""

    reading: Reading
    plan: Plan
    acting: Acting


@dataclass(frozen=True, slots=True)
class Remembered:
    """Key facts of this turn and the customer's notes (stage *remember*)."""

    key_facts: list[dict[str, Any]]
    notes: list[dict[str, Any]]
    note_texts: tuple[str, ...]
    #: The customer's contact preferences known now, in the turn's language.
    preferences: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Suggestion:
    """The suggested reply, checked for compliance (stage *suggest*)."""

    text: str
    source: str
    compliant: bool
    violations: list[str]
    situation: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "source": self.source,
            "compliant": self.compliant,
            "violations": list(self.violations),
            "situation": self.situation,
        }


@dataclass
class TurnOutcome:
    """What one turn answers (the API's turn response)."""

    session_id: str
    turn_index: int
    speaker: Speaker
    intent: dict[str, Any] | None = None
    language: str | None = None
    dialogue_act: str | None = None
    slots: dict[str, Any] = field(default_factory=dict)
    missing_slots: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    workflow: dict[str, Any] | None = None
    proposals: list[dict[str, Any]] = field(default_factory=list)
    #: proposals the customer took back with this turn (or an agent decided first)
    withdrawn: list[dict[str, Any]] = field(default_factory=list)
    suggestion: dict[str, Any] | None = None
    key_facts: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    #: knowledge cards: ``[{title, article_id, passage, source, score}]``
    knowledge: list[dict[str, Any]] = field(default_factory=list)
    #: every value named of a slot of which several were named (``{"order_id": [A, B]}``)
    mentions: dict[str, list[str]] = field(default_factory=dict)
    sentiment: dict[str, Any] | None = None
    alerts: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "turn_index": self.turn_index,
            "speaker": self.speaker,
            "language": self.language,
            "dialogue_act": self.dialogue_act,
            "intent": self.intent,
            "slots": self.slots,
            "missing_slots": self.missing_slots,
            "tool_calls": self.tool_calls,
            "workflow": self.workflow,
            "proposals": self.proposals,
            "withdrawn": self.withdrawn,
            "suggestion": self.suggestion,
            "key_facts": self.key_facts,
            "notes": self.notes,
            "events": self.events,
            "knowledge": self.knowledge,
            "mentions": self.mentions,
            "sentiment": self.sentiment,
            "alerts": self.alerts,
        }
