"""Provider-neutral chat records: messages, tool-call requests, usage and model responses.

These are plain frozen dataclasses in the OpenAI chat-completions shape, the lingua franca of
LiteLLM. A tool call's ``arguments`` stay the raw text the model produced: deciding whether it is
a valid call is the tools module's strict parser's job, not the transport's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "LinkAttempt",
    "Message",
    "ModelResponse",
    "ResponderInput",
    "Role",
    "ToolCallRequest",
    "Usage",
]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """One native tool call as the model produced it.

    Attributes:
        id: the provider's call id (echoed back in the ``tool`` message).
        name: the tool name the model asked for (may be unknown or empty).
        arguments: the raw JSON text of the arguments, unparsed and unvalidated.
    """

    id: str
    name: str
    arguments: str

    def as_model_output(self) -> dict[str, Any]:
        """The ``{"name": ..., "arguments": ...}`` form the tools module's strict parser reads."""
        return {"name": self.name, "arguments": self.arguments}

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    @classmethod
    def system(cls, content: str) -> Message:
        return cls("system", content)

    @classmethod
    def user(cls, content: str) -> Message:
        return cls("user", content)

    @classmethod
    def assistant(
        cls, content: str | None, tool_calls: tuple[ToolCallRequest, ...] = ()
    ) -> Message:
        return cls("assistant", content, tool_calls)

    @classmethod
    def tool(cls, call_id: str, name: str, result: Any) -> Message:
        """A tool result message; non-string results are sent as compact JSON."""
        text = result if isinstance(result, str) else _json(result)
        return cls("tool", text, tool_call_id=call_id, name=name)

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role == "tool":
            out["name"] = self.name
        return out


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        cost: float | None
        if self.cost_usd is None and other.cost_usd is None:
            cost = None
        else:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            cost,
        )


@dataclass(frozen=True, slots=True)
class LinkAttempt:
    """One try of one link of a chain: ``status`` is ``ok`` or an error code."""

    link: str
    status: str
    retryable: bool = False
    latency_ms: float = 0.0
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """What a model answered.

    Attributes:
        content: the text reply (``None`` when the model only called tools).
        tool_calls: native tool calls, raw.
        model: the provider's model name as reported.
        link: the chain link that answered (``"offline"`` for the offline responder).
        usage: tokens and cost of this call (summed over the attempts that consumed tokens).
        finish_reason: the provider's finish reason, when known.
        attempts: every try the chain made, in order, ending with the one that answered.
    """

    content: str | None
    tool_calls: tuple[ToolCallRequest, ...] = ()
    model: str = ""
    link: str = ""
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    attempts: tuple[LinkAttempt, ...] = ()

    @property
    def offline(self) -> bool:
        return self.link == "offline"

    def as_message(self) -> Message:
        return Message.assistant(self.content, self.tool_calls)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


@dataclass(frozen=True, slots=True)
class ResponderInput:
    """The structured facts of one turn, from which the prompt and the offline reply are built.

    Attributes:
        intent: the parsed intent (``"oos"`` / out of scope included).
        slots: the dialogue-state slots after this turn.
        tool_results: validated tool results by tool name (a mapping, or an object with
            attributes), addressed by templates as ``{tool_name.dotted.path}``.
        failed_fallbacks: fallback replies of the tools that could not answer, in call order.
        notes: the customer's notes (memory), already rendered one per line.
        workflow_state: the workflow's state when one runs (``waiting_input``, ``completed``,
            ``failed``, ``escalated``…), else ``None``.
        language: ``"zh"`` or ``"en"`` (reply templates may be keyed by language).
        missing_slots: required slots the intent still needs.
        situation: force a reply situation instead of deriving it.
        waiting_for: the slot a waiting workflow asks the customer for (``sms_code``…).
        overdue: tools whose record promised a date that has passed, while its status still
            says it is on its way, and by how many days (``{"get_shipment": 3}``).
        today: the business's date the turn was read on (ISO), which ``overdue`` was judged by.
    """

    intent: str
    slots: Mapping[str, Any] = field(default_factory=dict)
    tool_results: Mapping[str, Any] = field(default_factory=dict)
    failed_fallbacks: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    workflow_state: str | None = None
    language: str = "zh"
    missing_slots: tuple[str, ...] = ()
    situation: str | None = None
    waiting_for: str | None = None
    overdue: Mapping[str, int] = field(default_factory=dict)
    today: str | None = None
