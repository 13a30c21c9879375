"""Stage *suggest*: the reply the agent may send, built from what actually happened.

The facts handed to the responder say the truth about outcomes: a write that was only proposed
is "waiting for the agent" (situation ``proposed``), a record the customer does not own or that
does not exist is ``not_found``, a business refusal is ``refused``; nothing is called done unless
its write executed. The reply is then checked against the pack's compliance rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from hermes_desk.assist.records import Acting, Plan, Reading, Remembered, Suggestion
from hermes_desk.compliance import ComplianceChecker
from hermes_desk.llm.messages import ResponderInput
from hermes_desk.llm.offline import situation_for
from hermes_desk.sessions import Session
from hermes_desk.tools import ToolStatus
from hermes_desk.workflows.machine import APPROVAL_PREFIX

__all__ = ["Responder", "TurnSuggester", "facts_of"]


class Responder(Protocol):
    """What turns a turn's facts into a suggestion: the model chain, ending offline."""

    async def suggest(self, facts: ResponderInput, session: Session) -> tuple[str, str]:
        """Returns ``(text, link)`` where link names who answered (``offline``, a model…)."""
        ...


class TurnSuggester:
    def __init__(self, *, responder: Responder, compliance: ComplianceChecker) -> None:
        self.responder = responder
        self.compliance = compliance

    async def suggest(
        self,
        reading: Reading,
        plan: Plan,
        acting: Acting,
        remembered: Remembered,
        session: Session,
    ) -> Suggestion:
        facts = facts_of(reading, plan, acting, remembered)
        text, link = await self.responder.suggest(facts, session)
        checked = self.compliance.check(text)
        return Suggestion(
            text=checked.text,
            source=link,
            compliant=checked.passed,
            violations=list(checked.violations),
            situation=situation_for(facts),
        )


def facts_of(
    reading: Reading, plan: Plan, acting: Acting, remembered: Remembered
) -> ResponderInput:
    """The structured facts of the turn, for the model prompt and the offline templates."""
    shown: dict[str, Any] = dict(reading.slots)
    # A phone said earlier is carried masked (139****5678): its tail still reads back.
    phone = reading.slots.get("phone") or reading.state.slots.get("phone")
    if isinstance(phone, str):
        shown["phone_tail"] = phone[-4:]
    outputs: dict[str, Any] = {}
    view = acting.workflow
    if view is not None:  # a workflow's step results read like tool results in templates
        outputs.update({s.tool: s.output for s in view.steps if s.tool and s.output})
        phone = next(
            (
                s.output.get("phone_tail")
                for s in view.steps
                if s.output and "phone_tail" in s.output
            ),
            None,
        )
        if phone and "phone_tail" not in shown:
            shown["phone_tail"] = phone
    outputs.update({n: r.result for n, r in acting.results.items() if r.ok})
    pending = [p for p in acting.proposals if p.pending]
    if pending:
        shown["proposal"] = pending[0].explanation
    waiting_for = view.waiting_for if view is not None else None
    return ResponderInput(
        intent=plan.answer_intent,
        slots=shown,
        tool_results=outputs,
        failed_fallbacks=tuple(r.fallback or "" for r in acting.results.values() if not r.answered),
        notes=remembered.note_texts,
        workflow_state=view.status if view is not None else None,
        waiting_for=waiting_for,
        language=reading.language,
        missing_slots=plan.missing_slots,
        situation=_situation(acting, pending, waiting_for),
    )


def _situation(acting: Acting, pending: list[Any], waiting_for: str | None) -> str | None:
    if waiting_for and waiting_for.startswith(APPROVAL_PREFIX):
        return "proposed"
    if pending and (acting.workflow is None or acting.workflow.status == "waiting_input"):
        return "proposed"
    statuses: Mapping[str, ToolStatus] = {n: r.status for n, r in acting.results.items()}
    if ToolStatus.NOT_FOUND in statuses.values():
        return "not_found"
    if ToolStatus.REFUSED in statuses.values():
        return "refused"
    return None
