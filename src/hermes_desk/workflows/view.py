"""What callers see of a workflow: state, steps, phases, timings and snapshots, with personal
values masked (phones, codes and passwords never leave the engine raw)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from hermes_desk.events import mask_fields
from hermes_desk.workflows.machine import WITHDRAWN_BY_CUSTOMER, WorkflowState, approval_slot
from hermes_desk.workflows.snapshot import SnapshotInfo

__all__ = ["PhaseView", "SnapshotView", "StepView", "WorkflowView"]


class StepView(BaseModel):
    name: str
    phase: str
    tool: str | None
    status: str
    attempts: int
    input_round: int
    started_at: float | None
    finished_at: float | None
    duration_ms: float | None
    error: str | None
    output: dict[str, Any] | None


class PhaseView(BaseModel):
    name: str
    route: str
    mode: str
    outcome: str
    winner: str | None
    started_at: float
    finished_at: float | None
    duration_ms: float | None


class SnapshotView(BaseModel):
    seq: int
    saved_at: float
    reason: str
    status: str


class WorkflowView(BaseModel):
    id: str
    name: str
    status: str
    tenant: str
    session_id: str | None
    route: str
    phase: str | None
    waiting_for: str | None
    error: str | None
    failed_step: str | None
    created_at: float
    updated_at: float
    deadline_at: float | None
    finished_at: float | None
    duration_ms: float | None
    seq: int
    inputs: dict[str, Any]
    steps: list[StepView]
    phases: list[PhaseView]
    snapshots: list[SnapshotView]
    #: Failed because the customer took it back (its write, or itself while it waited for them).
    withdrawn: bool = False
    #: Failed (or escalated, as a password reset is) because an agent rejected its write, or the
    #: approval expired undecided: it will not be done (never "a colleague will follow up":
    #: nobody was asked to; never "the verification did not go through": it did).
    turned_down: bool = False

    @classmethod
    def of(
        cls, state: WorkflowState, *, seq: int, history: list[SnapshotInfo] | None = None
    ) -> WorkflowView:
        end = state.finished_at
        return cls(
            id=state.id,
            name=state.name,
            status=state.status,
            tenant=state.tenant,
            session_id=state.session_id,
            route=state.route,
            phase=state.phase,
            waiting_for=state.waiting_for,
            error=state.error,
            failed_step=state.failed_step,
            withdrawn=state.status == "failed" and WITHDRAWN_BY_CUSTOMER in (state.error or ""),
            turned_down=_turned_down(state),
            created_at=state.created_at,
            updated_at=state.updated_at,
            deadline_at=state.deadline_at,
            finished_at=end,
            duration_ms=round((end - state.created_at) * 1000, 3) if end else None,
            seq=seq,
            inputs=mask_fields(state.inputs),
            steps=[
                StepView(
                    name=r.name,
                    phase=r.phase,
                    tool=r.tool,
                    status=r.status,
                    attempts=r.attempts,
                    input_round=r.input_round,
                    started_at=r.started_at,
                    finished_at=r.finished_at,
                    duration_ms=r.duration_ms,
                    error=r.error,
                    output=mask_fields(r.output) if r.output is not None else None,
                )
                for r in state.steps.values()
            ],
            phases=[
                PhaseView(
                    name=p.name,
                    route=p.route,
                    mode=p.mode,
                    outcome=p.outcome,
                    winner=p.winner,
                    started_at=p.started_at,
                    finished_at=p.finished_at,
                    duration_ms=round((p.finished_at - p.started_at) * 1000, 3)
                    if p.finished_at is not None
                    else None,
                )
                for p in state.phases
            ],
            snapshots=[
                SnapshotView(seq=h.seq, saved_at=h.saved_at, reason=h.reason, status=h.status)
                for h in history or []
            ],
        )

    @property
    def terminal(self) -> bool:
        return self.status in ("completed", "failed", "escalated")


def _turned_down(state: WorkflowState) -> bool:
    """The workflow failed (or escalated) at an approval an agent rejected or let expire."""
    if state.status not in ("failed", "escalated") or state.failed_step is None:
        return False
    decision = state.inputs.get(approval_slot(state.failed_step))
    return isinstance(decision, Mapping) and decision.get("decision") in ("rejected", "expired")
