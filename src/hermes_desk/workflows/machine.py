"""The pure state machine: given a definition, a state and what happened, the next state.

Nothing here does I/O, reads a clock or draws randomness: times and ids come in as arguments, so
a transition can be replayed and tested in microseconds. Each function returns a new
:class:`WorkflowState` and leaves its argument untouched. :func:`advance` is the decider: it
closes finished phases, follows ``on_failure`` branches and says what the runner must do next.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from hermes_desk.ids import digest
from hermes_desk.workflows.definition import (
    ESCALATE,
    FAIL,
    Phase,
    Step,
    WorkflowDefinition,
    when_step,
)

__all__ = [
    "ACTIVE_STATUSES",
    "APPROVAL_PREFIX",
    "TERMINAL_STATUSES",
    "WITHDRAWN_BY_CUSTOMER",
    "Action",
    "AwaitInput",
    "Finished",
    "PhaseRecord",
    "RunSteps",
    "StepRecord",
    "StepResult",
    "StepStatus",
    "WorkflowState",
    "WorkflowStatus",
    "advance",
    "approval_slot",
    "expire",
    "idempotency_key",
    "new_workflow",
    "provide_input",
    "resolve_arguments",
    "retry_delay",
    "step_finished",
    "step_started",
    "supersede",
]

WorkflowStatus = Literal["pending", "running", "waiting_input", "completed", "failed", "escalated"]
StepStatus = Literal[
    "pending",
    "waiting_input",
    "running",
    "succeeded",
    "failed",
    "timeout",
    "cancelled",
    "rejected",
    "skipped",
]
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "escalated"})
ACTIVE_STATUSES: frozenset[str] = frozenset({"pending", "running", "waiting_input"})
#: The error of a workflow the customer took back while it waited for them (not a failure).
WITHDRAWN_BY_CUSTOMER = "withdrawn by the customer"
_STEP_FAILED: frozenset[str] = frozenset({"failed", "timeout", "cancelled", "rejected"})
_STEP_OPEN: frozenset[str] = frozenset({"pending", "waiting_input", "running"})

#: A step with ``approval`` waits for the input ``approval:<step>``: the agent's decision
#: ``{"decision": "approved"|"rejected"|"expired"|"withdrawn", "agent_id", "arguments",
#: "reason"}`` (withdrawn: by the customer, before an agent decided).
APPROVAL_PREFIX = "approval:"


def approval_slot(step: str) -> str:
    return f"{APPROVAL_PREFIX}{step}"


class StepRecord(BaseModel):
    """What is known of one step. ``input_round`` counts re-asks of its slot."""

    name: str
    phase: str
    tool: str | None = None
    status: StepStatus = "pending"
    attempts: int = 0
    input_round: int = 0
    output: dict[str, Any] | None = None
    error: str | None = None
    started_at: float | None = None
    finished_at: float | None = None
    rejected_inputs: list[str] = Field(default_factory=list)

    @property
    def duration_ms(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return round((self.finished_at - self.started_at) * 1000, 3)


class PhaseRecord(BaseModel):
    name: str
    route: str
    mode: str
    started_at: float
    finished_at: float | None = None
    outcome: Literal["running", "succeeded", "failed"] = "running"
    winner: str | None = None


class WorkflowState(BaseModel):
    """Everything a snapshot holds. Field names are part of the snapshot schema."""

    id: str
    name: str
    definition_version: int
    tenant: str
    user: str
    session_id: str | None = None
    status: WorkflowStatus = "pending"
    route: str = "main"
    phase_index: int = 0
    phase: str | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)
    steps: dict[str, StepRecord] = Field(default_factory=dict)
    phases: list[PhaseRecord] = Field(default_factory=list)
    waiting_for: str | None = None
    error: str | None = None
    failed_step: str | None = None
    created_at: float
    updated_at: float
    deadline_at: float | None = None
    finished_at: float | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


@dataclass(frozen=True, slots=True)
class RunSteps:
    """Run these steps of ``phase`` (``mode`` says how); a ``first`` phase cancels the losers."""

    phase: str
    mode: str
    steps: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AwaitInput:
    step: str
    slot: str


@dataclass(frozen=True, slots=True)
class Finished:
    status: WorkflowStatus


Action = RunSteps | AwaitInput | Finished


@dataclass(frozen=True, slots=True)
class StepResult:
    """How one attempt ended, as the runner saw it."""

    status: Literal["ok", "error", "timeout", "cancelled"]
    output: Mapping[str, Any] | None = None
    error: str | None = None
    retryable: bool = True


def new_workflow(
    definition: WorkflowDefinition,
    *,
    workflow_id: str,
    inputs: Mapping[str, Any],
    tenant: str,
    user: str,
    session_id: str | None,
    now: float,
    deadline_s: float,
    secrets: Mapping[str, str] | None = None,
) -> WorkflowState:
    """A pending workflow. Missing ``generate: secret`` inputs are taken from ``secrets``.

    Raises:
        KeyError: a required input is missing (its name is the key).
    """
    values = dict(inputs)
    for name, spec in definition.inputs.items():
        if values.get(name) in (None, "") and spec.default is not None:
            values[name] = spec.default
        if values.get(name) in (None, "") and spec.generate == "secret" and secrets:
            values[name] = secrets[name]
        if spec.required and values.get(name) in (None, ""):
            raise KeyError(name)
    steps = {
        step.name: StepRecord(name=step.name, phase=phase.name, tool=step.tool)
        for phase, step in definition.all_steps()
    }
    return WorkflowState(
        id=workflow_id,
        name=definition.name,
        definition_version=definition.version,
        tenant=tenant,
        user=user,
        session_id=session_id,
        inputs=values,
        steps=steps,
        created_at=now,
        updated_at=now,
        deadline_at=now + (definition.deadline_s or deadline_s),
    )


def _clone(state: WorkflowState) -> WorkflowState:
    """A copy safe to change: containers and records are new; leaf values are never mutated
    in place (outputs and lists are replaced, not edited), so they can be shared."""
    new = state.model_copy()
    new.inputs = dict(state.inputs)
    new.steps = {name: record.model_copy() for name, record in state.steps.items()}
    new.phases = [phase.model_copy() for phase in state.phases]
    return new


def idempotency_key(state: WorkflowState, step: str) -> str:
    """Stable across retries and restarts; a re-asked input makes a new request, a new key."""
    record = state.steps[step]
    suffix = f":r{record.input_round}" if record.input_round else ""
    return f"{state.id}:{step}{suffix}"


def advance(
    definition: WorkflowDefinition, state: WorkflowState, now: float
) -> tuple[WorkflowState, Action]:
    """Close finished phases, follow failures, and say what to do next."""
    new = _clone(state)
    for phase, step in definition.all_steps():
        # A step added to the definition after this workflow started (a newer pack version)
        # starts out pending, so snapshots taken before the change still resume.
        if step.name not in new.steps:
            new.steps[step.name] = StepRecord(name=step.name, phase=phase.name, tool=step.tool)
    while True:
        if new.terminal:
            return new, Finished(new.status)
        phases = definition.route(new.route)
        if new.phase_index >= len(phases):
            outcome: WorkflowStatus = (
                "completed"
                if new.route == "main"
                else definition.branch_outcome.get(new.route, "escalated")
            )
            _finish(new, outcome, now)
            return new, Finished(outcome)
        phase = phases[new.phase_index]
        _enter_phase(new, phase, now)
        verdict = _phase_verdict(definition, new, phase, now)
        if isinstance(verdict, RunSteps | AwaitInput):
            if isinstance(verdict, AwaitInput):
                new.status = "waiting_input"
                new.waiting_for = verdict.slot
                new.steps[verdict.step].status = "waiting_input"
            else:
                new.status = "running"
                new.waiting_for = None
            new.updated_at = now
            return new, verdict
        if verdict is None:
            _close_phase(new, "succeeded", now)
            new.phase_index += 1
            continue
        _close_phase(new, "failed", now)
        _follow_failure(definition, new, phase, definition.step(verdict), now)


def _phase_verdict(
    definition: WorkflowDefinition, state: WorkflowState, phase: Phase, now: float
) -> RunSteps | AwaitInput | str | None:
    """``None``: the phase succeeded; a step name: it failed there; else the work to do."""
    records = [state.steps[s.name] for s in phase.steps]
    if phase.mode == "sequence":
        for step, record in zip(phase.steps, records, strict=True):
            if record.status in ("succeeded", "skipped"):
                continue
            if record.status in _STEP_FAILED:
                return step.name
            if step.when is not None and not _holds(state, step.when):
                record.status = "skipped"
                record.error = _skipped_because(step.when)
                record.finished_at = now
                continue
            if step.wait_for and state.inputs.get(step.wait_for) in (None, ""):
                return AwaitInput(step.name, step.wait_for)
            if step.approval:
                decision = state.inputs.get(approval_slot(step.name))
                if not isinstance(decision, Mapping):
                    return AwaitInput(step.name, approval_slot(step.name))
                if decision.get("decision") != "approved":
                    # Rejected, expired or withdrawn by the customer: the write never runs;
                    # the phase's on_failure follows.
                    record.status = "rejected"
                    who = (
                        WITHDRAWN_BY_CUSTOMER
                        if decision.get("decision") == "withdrawn"
                        else f"{decision.get('decision')} by the agent"
                    )
                    record.error = f"{who}: {decision.get('reason') or 'no reason given'}"
                    record.finished_at = now
                    return step.name
            if step.tool is None:  # a pure wait: the slot is here, nothing to call
                record.status = "succeeded"
                record.output = {}
                record.finished_at = now
                continue
            return RunSteps(phase.name, phase.mode, (step.name,))
        return None
    if phase.mode == "all":
        failed = [r for r in records if r.status in _STEP_FAILED]
        if failed:  # the step that failed, not the siblings cancelled because of it
            failed.sort(key=lambda r: r.status == "cancelled")
            return failed[0].name
        open_steps = tuple(r.name for r in records if r.status in _STEP_OPEN)
        return RunSteps(phase.name, phase.mode, open_steps) if open_steps else None
    # first: the first success wins; steps still open are losers (cancelled).
    winners = [r for r in records if r.status == "succeeded"]
    if winners:
        winner = min(winners, key=lambda r: r.finished_at or now)
        for record in records:
            if record.status in _STEP_OPEN:
                record.status = "cancelled"
                record.error = f"cancelled: '{winner.name}' completed first"
                record.finished_at = now
        state.phases[-1].winner = winner.name
        return None
    open_steps = tuple(r.name for r in records if r.status in _STEP_OPEN)
    if open_steps:
        return RunSteps(phase.name, phase.mode, open_steps)
    return records[-1].name


def _holds(state: WorkflowState, when: str) -> bool:
    """A step's ``when``: an earlier step that won, or an earlier result's field that is true."""
    if not when.startswith("$"):
        return _won(state, when)
    if not _won(state, when_step(when)):
        return False
    try:
        return _lookup(when, state) is True
    except KeyError:  # the result does not say: not shown to hold
        return False


def _skipped_because(when: str) -> str:
    if when.startswith("$"):
        return f"skipped: '{when}' is not true"
    return f"skipped: '{when}' did not go through"


def _won(state: WorkflowState, step: str) -> bool:
    """Did ``step`` succeed — and, in a ``first`` phase, win? (Two racers may both finish before
    the phase closes; only the winner counts.)"""
    record = state.steps[step]
    if record.status != "succeeded":
        return False
    phase = next((p for p in reversed(state.phases) if p.name == record.phase), None)
    return phase is None or phase.mode != "first" or phase.winner in (None, step)


def _enter_phase(state: WorkflowState, phase: Phase, now: float) -> None:
    if state.phase == phase.name and state.phases and state.phases[-1].name == phase.name:
        return
    state.phase = phase.name
    state.phases.append(
        PhaseRecord(name=phase.name, route=state.route, mode=phase.mode, started_at=now)
    )


def _close_phase(state: WorkflowState, outcome: Literal["succeeded", "failed"], now: float) -> None:
    if state.phases and state.phases[-1].outcome == "running":
        state.phases[-1].outcome = outcome
        state.phases[-1].finished_at = now


def _follow_failure(
    definition: WorkflowDefinition, state: WorkflowState, phase: Phase, step: Step, now: float
) -> None:
    record = state.steps[step.name]
    target = step.on_failure or phase.on_failure or FAIL
    state.failed_step = step.name
    state.error = f"step '{step.name}' {record.status}: {record.error or 'no detail'}"
    if target == ESCALATE:
        _finish(state, "escalated", now)
    elif target == FAIL or state.route != "main":
        # A failure inside a branch ends the workflow: branches never chain into loops.
        _finish(state, "escalated" if target == ESCALATE else "failed", now)
    else:
        state.route = target
        state.phase_index = 0
        state.phase = None
        state.status = "running"


def _finish(state: WorkflowState, status: WorkflowStatus, now: float) -> None:
    state.status = status
    state.waiting_for = None
    state.finished_at = now
    state.updated_at = now
    for record in state.steps.values():
        if record.status in ("running", "waiting_input"):
            record.status = "cancelled"
            record.error = record.error or f"workflow {status}"
            record.finished_at = now


def step_started(state: WorkflowState, step: str, now: float) -> WorkflowState:
    """A new attempt of ``step`` begins."""
    new = _clone(state)
    record = new.steps[step]
    record.status = "running"
    record.attempts += 1
    if record.started_at is None:
        record.started_at = now
    new.status = "running"
    new.updated_at = now
    return new


def step_finished(
    definition: WorkflowDefinition, state: WorkflowState, step: str, result: StepResult, now: float
) -> WorkflowState:
    """Record the final outcome of ``step`` (after retries), checking ``expect`` on success."""
    new = _clone(state)
    spec = definition.step(step)
    record = new.steps[step]
    record.finished_at = now
    new.updated_at = now
    if record.status not in ("running", "pending"):
        return new  # already closed (a cancelled loser, a deadline): the first word stands
    if result.status == "ok":
        output = dict(result.output or {})
        mismatch = {
            k: output.get(k) for k, v in spec.expect.items() if not _as_expected(output.get(k), v)
        }
        record.output = output
        if not mismatch:
            record.status = "succeeded"
            record.error = None
            return new
        record.status = "rejected"
        record.error = f"expected {spec.expect}, got {mismatch}"
        if spec.wait_for and record.input_round + 1 < spec.input_attempts:
            # Ask the customer again: forget the rejected value, new request, new key.
            rejected = digest(new.inputs.get(spec.wait_for))
            record.rejected_inputs = [*record.rejected_inputs, rejected]
            new.inputs.pop(spec.wait_for, None)
            record.input_round += 1
            record.status = "pending"
            record.started_at = None
            record.finished_at = None
        return new
    record.status = "failed" if result.status == "error" else result.status
    record.error = result.error or result.status
    return new


def _as_expected(value: Any, expected: Any) -> bool:
    """``expect``: the value itself, or one of a list's values."""
    return value in expected if isinstance(expected, list) else bool(value == expected)


def retry_delay(
    definition: WorkflowDefinition,
    state: WorkflowState,
    step: str,
    result: StepResult,
    *,
    default_retries: int,
    default_backoff_s: float,
) -> float | None:
    """Seconds to wait before the next attempt, or ``None`` when the step must not retry."""
    if result.status not in ("error", "timeout") or not result.retryable:
        return None
    policy = definition.step(step).retry
    retries = default_retries if policy.max_retries is None else policy.max_retries
    attempts = state.steps[step].attempts
    if attempts > retries:
        return None
    return policy.delay(attempts, default_backoff_s)


def provide_input(
    definition: WorkflowDefinition, state: WorkflowState, slots: Mapping[str, Any], now: float
) -> tuple[WorkflowState, bool]:
    """Take the awaited slot from a turn. Returns the state and whether it was accepted.

    A value the workflow already rejected (a wrong code carried over from an earlier turn) is
    ignored, so it cannot burn the remaining attempts.
    """
    slot = state.waiting_for
    if state.status != "waiting_input" or slot is None:
        return state, False
    value = slots.get(slot)
    if value in (None, ""):
        return state, False
    waiting = next(
        (r for r in state.steps.values() if r.status == "waiting_input"),
        None,
    )
    if waiting is not None and digest(value) in waiting.rejected_inputs:
        return state, False
    new = _clone(state)
    new.inputs[slot] = value
    new.waiting_for = None
    new.status = "running"
    new.updated_at = now
    if waiting is not None:
        new.steps[waiting.name].status = "pending"
    return new, True


def supersede(state: WorkflowState, now: float, reason: str) -> WorkflowState:
    """A workflow waiting for the customer is replaced by a new run of the same request (the
    customer asked again with a new phone number, or for a new code): it ends as ``failed``
    with ``reason``; its waiting step is cancelled."""
    if state.terminal:
        return state
    new = _clone(state)
    new.error = reason
    _finish(new, "failed", now)
    return new


def expire(definition: WorkflowDefinition, state: WorkflowState, now: float) -> WorkflowState:
    """The deadline passed: fail or escalate (``on_deadline``); open steps become timeouts."""
    if state.terminal:
        return state
    new = _clone(state)
    for record in new.steps.values():
        if record.status in _STEP_OPEN and record.status != "pending":
            record.status = "timeout"
            record.error = "workflow deadline exceeded"
            record.finished_at = now
    _close_phase(new, "failed", now)
    new.error = "workflow deadline exceeded"
    _finish(new, "escalated" if definition.on_deadline == "escalate" else "failed", now)
    return new


def resolve_arguments(step: Step, state: WorkflowState) -> dict[str, Any]:
    """Fill a step's arguments from inputs, earlier outputs and the workflow's identity.

    Raises:
        KeyError: a reference points at nothing (message names it).
    """
    decision = state.inputs.get(approval_slot(step.name)) if step.approval else None
    if isinstance(decision, Mapping) and isinstance(decision.get("arguments"), Mapping):
        return dict(decision["arguments"])  # the arguments the agent approved (maybe edited)
    resolved = _resolve(step.arguments, state)
    assert isinstance(resolved, dict)
    return resolved


def _resolve(value: Any, state: WorkflowState) -> Any:
    if isinstance(value, str) and value.startswith("$"):
        return _lookup(value, state)
    if isinstance(value, Mapping):
        return {k: _resolve(v, state) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_resolve(v, state) for v in value]
    return value


def _lookup(ref: str, state: WorkflowState) -> Any:
    if "??" in ref:
        alternatives = [part.strip() for part in ref.split("??")]
        for alternative in alternatives[:-1]:
            try:
                value = _lookup(alternative, state)
            except KeyError:
                continue
            if value not in (None, ""):
                return value
        return _lookup(alternatives[-1], state)
    kind, _, path = ref[1:].partition(".")
    parts = path.split(".")
    node: Any
    if kind == "inputs":
        node = state.inputs
    elif kind == "workflow":
        return {
            "id": state.id,
            "session_id": state.session_id,
            "tenant": state.tenant,
            "user": state.user,
        }[path]
    else:
        record = state.steps.get(parts[0])
        if record is None or record.status != "succeeded":
            raise KeyError(f"{ref}: step '{parts[0]}' has not succeeded")
        node = record.output or {}
        parts = parts[2:]
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(f"{ref}: no value")
        node = node[part]
    return node
