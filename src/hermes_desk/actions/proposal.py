"""A proposal: a write the assistant wants done, waiting for a human agent's decision (X2).

A customer's words never execute a write. The turn (or a workflow step, or an MCP client)
*proposes* it: which tool, with which arguments, why, and what will happen in the customer's
language. The agent approves it (possibly with edited arguments), rejects it with a reason, or
lets it expire. Statuses move one way only::

    proposed ─┬─ executing ─┬─ executed
              │             ├─ failed
              │             └─ approved   (a workflow's write: handed to the workflow, whose
              ├─ rejected                  own record tells the end)
              └─ expired

``executing`` is the agent's approval recorded while the write (or the hand-over to the
workflow) is under way: its arguments stay clear until then, so a write approved just before a
crash is carried out after the restart, with the same idempotency key. Every move is a
compare-and-set on the stored status, so approving twice (or from two workers) executes once.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from hermes_desk.events import mask_fields

__all__ = ["DECIDED", "Proposal", "ProposalStatus", "ran_at"]

ProposalStatus = Literal[
    "proposed", "executing", "approved", "rejected", "expired", "executed", "failed", "withdrawn"
]

#: Statuses after the agent's (or the clock's, or the customer's withdrawal) decision.
DECIDED: frozenset[str] = frozenset(
    {"executing", "approved", "rejected", "expired", "executed", "failed", "withdrawn"}
)


@dataclass(slots=True)
class Proposal:
    """One proposed write.

    Attributes:
        id: unguessable id (``act_…``).
        tenant, user: whose customer it concerns; every path checks both.
        session_id: the conversation it came from (``None`` for an MCP client's proposal).
        tool: the write tool to call.
        arguments: the arguments as proposed (kept in clear: the tool needs them; shown masked).
        why: what led to it: ``intent``, ``slots``, ``rule``.
        explanation: what will happen, in the customer's language.
        language: that language (``zh``/``en``).
        created_at, expires_at: epoch seconds.
        workflow_id, step: set when a workflow step waits for this decision.
        topic: a key that keeps one open proposal per subject (one ticket per complaint).
        agent_id, decided_at, reason: who decided, when, and why (rejections).
        executed_arguments: the arguments the write ran with (the agent may have edited them).
        result_status, result: what the write came to.
        sensitive: argument names masked when shown.
        revision: how many times its arguments changed while it waited (the customer gave the
            reason after the request): a decision names the revision it saw.
    """

    id: str
    tenant: str
    user: str
    session_id: str | None
    tool: str
    arguments: dict[str, Any]
    why: dict[str, Any]
    explanation: str
    language: str
    created_at: float
    expires_at: float
    status: ProposalStatus = "proposed"
    workflow_id: str | None = None
    step: str | None = None
    topic: str | None = None
    agent_id: str | None = None
    decided_at: float | None = None
    reason: str | None = None
    executed_arguments: dict[str, Any] | None = None
    executed_at: float | None = None
    result_status: str | None = None
    result: Any = None
    sensitive: tuple[str, ...] = field(default_factory=tuple)
    revision: int = 0

    @property
    def pending(self) -> bool:
        return self.status == "proposed"

    @property
    def turned_down(self) -> bool:
        """An agent rejected it, or it expired undecided: it will not be done."""
        return self.status in ("rejected", "expired")

    def owned_by(self, tenant: str, user: str | None) -> bool:
        return self.tenant == tenant and (user is None or self.user == user)

    def to_dict(self) -> dict[str, Any]:
        """The stored form (arguments in clear)."""
        data = asdict(self)
        data["sensitive"] = list(self.sensitive)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Proposal:
        known = {name for name in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known}
        values["sensitive"] = tuple(values.get("sensitive") or ())
        return cls(**values)

    def view(self) -> dict[str, Any]:
        """What the agent's screen and the API show: sensitive arguments masked."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "tool": self.tool,
            "arguments": _masked(self.arguments, self.sensitive),
            "why": self.why,
            "explanation": self.explanation,
            "language": self.language,
            "status": self.status,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "workflow_id": self.workflow_id,
            "step": self.step,
            "agent_id": self.agent_id,
            "decided_at": self.decided_at,
            "reason": self.reason,
            "executed_arguments": _masked(self.executed_arguments, self.sensitive)
            if self.executed_arguments is not None
            else None,
            "executed_at": self.executed_at,
            "result_status": self.result_status,
            "result": self.result,
            "revision": self.revision,
        }


def ran_at(proposal: Proposal) -> float:
    """When the write ran (a proposal stored before that was kept: its decision, its making)."""
    return proposal.executed_at or proposal.decided_at or proposal.created_at


def _masked(arguments: dict[str, Any], sensitive: tuple[str, ...]) -> dict[str, Any]:
    shown = mask_fields(arguments)
    for name in sensitive:
        if name in shown:
            shown[name] = "***"
    return shown
