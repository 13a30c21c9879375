"""The HTTP API's contract: request bodies, response bodies and the error body.

Every route declares its response model, so ``/openapi.json`` describes what the service answers
(checked by schemathesis in the test suite). Values whose shape belongs to the domain pack (tool
results, slot values, JSON Schemas of tools) are typed as any JSON value.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

__all__ = [
    "AGENT_ID_PATTERN",
    "TEXT_PATTERN",
    "USER_ID_PATTERN",
    "AlertOut",
    "ApproveProposal",
    "BreakerOut",
    "ErrorBody",
    "ErrorDetail",
    "IntentOut",
    "KnowledgeCard",
    "NoteOut",
    "Problem",
    "ProposalList",
    "ProposalOut",
    "RejectProposal",
    "SentimentOut",
    "SessionClosed",
    "SessionCreate",
    "SessionOut",
    "SuggestionOut",
    "ToolCallOut",
    "ToolHealthOut",
    "ToolList",
    "ToolOut",
    "TurnCreate",
    "TurnOut",
]

USER_ID_PATTERN = r"^[A-Za-z0-9_.:@-]{1,128}$"
AGENT_ID_PATTERN = USER_ID_PATTERN

# What ``assist.pipeline.check_text`` accepts, as a JSON Schema pattern: at least one character
# that is neither whitespace (``str.strip``) nor a control character, and no control character
# other than tab, newline and carriage return. Spelled with explicit ranges so that every regex
# dialect (ECMA-262, Python, Rust) reads it the same way.
_CONTROL = r"\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f"
_BLANK = r"\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
TEXT_PATTERN = f"^[^{_CONTROL}]*[^{_BLANK}][^{_CONTROL}]*$"

JsonValue = Any


# -- errors --------------------------------------------------------------------------------------


class Problem(BaseModel):
    """One thing wrong with a request."""

    field: str = Field(description="where: a dotted path in the body, or the parameter's name")
    message: str = Field(description="why")


class ErrorDetail(BaseModel):
    """What went wrong. Errors about one resource add its id (``session_id``, ``status``…)."""

    model_config = ConfigDict(extra="allow")

    code: str = Field(description="machine-readable: validation_error, not_found, conflict…")
    message: str = Field(description="for people: names the problem")
    problems: list[Problem] | None = Field(
        None, description="on 422: each field or parameter refused, and why"
    )


class ErrorBody(BaseModel):
    """Every error the service answers (4xx and 5xx) has this body."""

    error: ErrorDetail


# -- request bodies ------------------------------------------------------------------------------


def _whole(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


#: A count as JSON Schema's non-negative integer: 3 or 3.0 (a client's JSON number), not "3"
#: or 3.5 (the bodies are strict).
JsonCount = Annotated[int, Field(ge=0), BeforeValidator(_whole)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SessionCreate(_Body):
    user_id: str = Field(pattern=USER_ID_PATTERN, description="the customer")
    resume: bool = Field(True, description="return the user's open session if there is one")


class TurnCreate(_Body):
    user_id: str = Field(pattern=USER_ID_PATTERN)
    # Length and content are checked by the assistant (clear messages naming the limit); the
    # schema states the same rules, its maxLength set from service.max_text_chars.
    text: str = Field(
        description=(
            "what was said (a final transcript segment or chat text): not blank, no control "
            "characters except tab and newlines, at most service.max_text_chars characters"
        ),
        json_schema_extra={"minLength": 1, "pattern": TEXT_PATTERN},
    )
    speaker: Literal["customer", "agent"] = "customer"


class ApproveProposal(_Body):
    user_id: str = Field(pattern=USER_ID_PATTERN, description="the proposal's customer")
    agent_id: str = Field(pattern=AGENT_ID_PATTERN, description="who approves (recorded)")
    arguments: dict[str, Any] | None = Field(
        None,
        description="edited arguments, checked against the tool's schema (default: as proposed)",
    )
    revision: JsonCount | None = Field(
        None,
        description="the revision the agent saw: refused (409) if the proposal changed since",
    )


class RejectProposal(_Body):
    user_id: str = Field(pattern=USER_ID_PATTERN, description="the proposal's customer")
    agent_id: str = Field(pattern=AGENT_ID_PATTERN, description="who rejects (recorded)")
    reason: str = Field(min_length=1, max_length=500, description="why (recorded)")


# -- responses -----------------------------------------------------------------------------------


class NoteOut(BaseModel):
    """A note: an active fact above the confidence floor, or a key fact the customer said in
    another contact still open (``origin: open_contact``, no ``fact_id``, not verified)."""

    fact_id: str | None
    key: str
    value: JsonValue
    confidence: float
    age_s: float
    created_at: float
    source_session: str | None
    text: str = Field(description="the note as the console and the prompt show it")
    origin: Literal["memory", "open_contact"] = Field(
        "memory", description="memory, or another contact of the customer's still open"
    )


class TranscriptTurn(BaseModel):
    role: Literal["user", "agent", "system", "tool"]
    text: str
    ts: float
    tool_call_id: str | None = None
    name: str | None = None
    meta: dict[str, JsonValue] | None = None


class WorkflowRef(BaseModel):
    id: str
    name: str
    status: str


class SessionOut(BaseModel):
    """A session with its transcript, slots, short-term key facts, notes and workflows."""

    session_id: str
    user_id: str
    status: Literal["open", "closed"]
    created_at: float
    last_active: float
    idle_expires_at: float
    turns: list[TranscriptTurn] = Field(
        description="the transcript: customer and agent turns, tool calls and their results"
    )
    slots: dict[str, JsonValue]
    short_term: list[dict[str, JsonValue]]
    notes: list[NoteOut]
    workflows: list[WorkflowRef]
    earlier: list[ProposalOut] = Field(
        default_factory=list,
        description="what the customer's earlier contacts had done for them: their writes that "
        "ran in other sessions within actions.earlier_contacts_days (a ticket opened), newest "
        "first",
    )
    model_usage: dict[str, JsonValue] = Field(description="model calls, tokens and cost")
    resumed: bool | None = Field(None, description="on POST: an open session was resumed")


class SessionClosed(BaseModel):
    session_id: str
    status: Literal["closed"]
    turns: int = Field(ge=0, description="how many customer turns the session had")
    notes: list[NoteOut] = Field(description="the customer's notes after the key facts moved")


class IntentOut(BaseModel):
    """How the turn was read.

    ``ranking`` is the distribution of the model named by ``ranking_model``: the context model
    (the turn read with its conversation) when the pack trained one, else the intent
    classifier (the turn alone). ``name`` is ``ranking[0]`` unless ``decided_by`` says otherwise:
    ``conversation`` (a bare slot value, or an unsure turn, keeps the conversation's intent),
    ``clauses`` (the request one clause makes, beside a question another asks of another
    record), ``out_of_scope`` (below the threshold, or an acknowledgement).
    """

    name: str = Field(description="the intent the turn is handled under (oos = out of scope)")
    answered_as: str = Field(description="the intent whose answer the turn gives")
    act: Literal["question", "request"]
    confidence: float = Field(ge=0, le=1, description="the deciding model's top probability")
    carried: bool = Field(description="the intent came from the conversation, not the turn alone")
    out_of_scope: bool
    decided_by: Literal["model", "conversation", "clauses", "out_of_scope"]
    ranking_model: Literal["context", "classifier"]
    ranking: list[tuple[str, float]] = Field(description="top three [label, probability]")
    latency_ms: float


class ToolCallOut(BaseModel):
    """A tool call of the turn: a read the turn made, or a workflow step that ran during it."""

    tool: str
    status: str = Field(description="ok, not_found, refused, timeout, error, invalid_args…")
    source: Literal["turn", "workflow"]
    step: str | None = Field(None, description="the workflow step (source workflow)")
    latency_ms: float | None
    result: JsonValue = None
    fallback: JsonValue = None
    error: str | None = None
    call_id: str | None = None


class StepRef(BaseModel):
    name: str
    status: str
    tool: str | None


class TurnWorkflow(BaseModel):
    id: str
    name: str
    status: str
    phase: str | None
    waiting_for: str | None = Field(description="a slot, or approval:<step> for a write")
    steps: list[StepRef]
    withdrawn: bool = Field(
        False,
        description="failed because the customer took it back (its write while it waited for"
        " the agent, or itself while it waited for them)",
    )


class ProposalOut(BaseModel):
    """A write proposed to the agent (arguments masked where sensitive) and where it stands."""

    id: str
    session_id: str | None
    tool: str
    arguments: dict[str, JsonValue]
    why: dict[str, JsonValue]
    explanation: str
    language: str
    status: str = Field(
        description="proposed, executing, executed, failed, rejected, expired, or withdrawn"
        " (by the customer, before an agent decided)"
    )
    created_at: float
    expires_at: float
    workflow_id: str | None
    step: str | None
    agent_id: str | None
    decided_at: float | None
    reason: str | None
    executed_arguments: dict[str, JsonValue] | None
    executed_at: float | None
    result_status: str | None
    result: JsonValue
    revision: int = Field(
        0,
        ge=0,
        description="how many times its arguments changed while it waited (a detail the "
        "customer gave afterwards); an approval may name the revision it saw",
    )


class ProposalList(BaseModel):
    proposals: list[ProposalOut]


class SuggestionOut(BaseModel):
    text: str
    source: str = Field(description="offline, or the model that answered")
    compliant: bool
    violations: list[str]
    situation: str


class KnowledgeCard(BaseModel):
    """A knowledge-base article that answers the turn, for the agent to read or quote."""

    title: str = Field(description="the article's title, in the customer's language")
    article_id: str
    passage: str = Field(description="whole sentences of the article that answer")
    source: str = Field(description="where the article lives in the pack, kb/<id>.md")
    score: float = Field(
        description="BM25 relevance; cards below the knowledge threshold are left out"
    )


class SentimentOut(BaseModel):
    label: Literal["negative", "neutral", "positive"]
    score: float = Field(
        ge=-1, le=1, description="P(positive) - P(negative); below 0 leans negative"
    )
    confidence: float = Field(ge=0, le=1, description="probability of the label")


class AlertOut(BaseModel):
    kind: str = Field(
        description="regulator_threat, media_threat, legal_threat, abuse, negative_streak, "
        "verification_failures, over_promise, full_number, credential_request (pack-defined)"
    )
    severity: Literal["info", "warning", "critical"]
    message: str
    speaker: Literal["customer", "agent"]
    turn_index: int = Field(ge=0)
    rule: str = Field(description="the compliance.yaml rule that fired")


class TurnOut(BaseModel):
    """What a turn answers. An agent turn carries only the first three fields' values."""

    session_id: str
    turn_index: int = Field(ge=0)
    speaker: Literal["customer", "agent"]
    language: Literal["zh", "en"] | None = Field(
        None, description="the language of this customer turn; the suggestion speaks it"
    )
    dialogue_act: (
        Literal["thanks", "closing", "greeting", "confirmation", "correction", "human"] | None
    ) = Field(None, description="the turn's dialogue act, when it makes one")
    intent: IntentOut | None
    slots: dict[str, JsonValue]
    missing_slots: list[str]
    tool_calls: list[ToolCallOut] = Field(
        description="every tool call of the turn: its reads and the workflow steps it ran"
    )
    workflow: TurnWorkflow | None
    proposals: list[ProposalOut]
    withdrawn: list[ProposalOut] = Field(
        default_factory=list,
        description="proposals the customer took back with this turn (status withdrawn), or one an"
        " agent had decided first (its status as it stands); [] when none",
    )
    suggestion: SuggestionOut | None
    key_facts: list[dict[str, JsonValue]]
    notes: list[NoteOut]
    events: list[dict[str, JsonValue]]
    knowledge: list[KnowledgeCard] = Field(
        default_factory=list, description="knowledge cards; [] when the turn searched nothing"
    )
    mentions: dict[str, list[str]] = Field(
        default_factory=dict,
        description="every value named so far of a slot of which several were named, in the "
        "order named ({'order_id': [...]}); the current one is in slots",
    )
    sentiment: SentimentOut | None = Field(
        description="the customer turn's sentiment; null on agent turns"
    )
    alerts: list[AlertOut] = Field(description="alerts this line raised; [] when none")


class BreakerOut(BaseModel):
    state: Literal["closed", "open", "probing"]
    consecutive_timeouts: int
    failures: int
    opened_at: float | None
    probe_started_at: float | None
    reason: str | None
    retry_at: float | None
    retry_in_s: float | None = None


class ToolOut(BaseModel):
    """A tool's spec and its circuit breaker."""

    model_config = ConfigDict(extra="allow")

    name: str
    description: str
    parameters: dict[str, JsonValue] = Field(description="JSON Schema of the arguments")
    required: list[str]
    effect: Literal["read", "write"]
    breaker: BreakerOut | None


class ToolList(BaseModel):
    tools: list[ToolOut]


class ToolHealthOut(BaseModel):
    tool: str
    healthy: bool
    latency_ms: float
    breaker: BreakerOut
