"""The runner: does the I/O the state machine asks for, and snapshots after every step.

:meth:`WorkflowRunner.drive` loops ``advance → run the steps → record → snapshot`` until the
workflow waits for the customer or ends. Every way a step can end is recorded: success, error,
timeout, and cancellation too (the article's ``run_step`` missed the last one and left "running"
ghosts). Cancellation from outside is recorded in a shielded scope, then the workflow follows its
``on_failure`` path; a drive stopped by the watchdog records the deadline instead.

Saves are compare-and-set on the snapshot seq: when another worker has moved the workflow on, this
drive stops quietly (``Superseded``) and leaves the workflow to it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import anyio
import anyio.abc
import anyio.lowlevel

from hermes_desk.clock import Clock
from hermes_desk.config import WorkflowSettings
from hermes_desk.errors import ConflictError
from hermes_desk.events import Event, EventSink
from hermes_desk.ids import digest
from hermes_desk.masking import Masking
from hermes_desk.workflows.definition import WorkflowDefinition
from hermes_desk.workflows.executor import StepExecutor
from hermes_desk.workflows.machine import (
    AwaitInput,
    Finished,
    RunSteps,
    StepResult,
    WorkflowState,
    advance,
    expire,
    idempotency_key,
    resolve_arguments,
    retry_delay,
    step_finished,
    step_started,
)
from hermes_desk.workflows.snapshot import Snapshot
from hermes_desk.workflows.store import SnapshotStore

__all__ = ["Cursor", "Superseded", "WorkflowRunner"]


class Superseded(Exception):
    """Another worker saved a newer snapshot: this drive must stop."""


@dataclass
class Cursor:
    """A workflow being driven: its state, the seq of its last snapshot, and why it stopped."""

    state: WorkflowState
    seq: int
    stop_reason: Literal["deadline"] | None = None
    # fast_acquire: a lock nobody holds is taken without a trip through the event loop
    lock: anyio.Lock = field(default_factory=lambda: anyio.Lock(fast_acquire=True))
    scope: anyio.CancelScope | None = None

    def stop_for_deadline(self) -> None:
        self.stop_reason = "deadline"
        if self.scope is not None:
            self.scope.cancel()


class WorkflowRunner:
    """Drives workflows through a :class:`StepExecutor`, saving to a :class:`SnapshotStore`."""

    def __init__(
        self,
        *,
        definitions: Mapping[str, WorkflowDefinition],
        executor: StepExecutor,
        store: SnapshotStore,
        clock: Clock,
        settings: WorkflowSettings,
        events: EventSink,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        masking: Masking | None = None,
    ) -> None:
        self.definitions = definitions
        self.masking = masking
        self.executor = executor
        self.store = store
        self.clock = clock
        self.settings = settings
        self.events = events
        self._sleep = sleep

    def definition(self, state: WorkflowState) -> WorkflowDefinition:
        return self.definitions[state.name]

    async def save(self, cursor: Cursor, reason: str) -> None:
        snapshot = Snapshot.of(
            cursor.state,
            seq=cursor.seq + 1,
            saved_at=self.clock.now(),
            reason=reason,
            masking=self.masking,
        )
        try:
            # Shielded: a cancellation landing between the store's write and the cursor's
            # update (a "first" race cancelling a step that is saving its own success) would
            # leave the cursor one behind the store, and every later save would look like
            # another worker's.
            with anyio.CancelScope(shield=True):
                await self.store.save(
                    snapshot,
                    expected_seq=cursor.seq or None,
                    ttl_s=self.settings.snapshot_ttl_s,
                )
                cursor.seq += 1
        except ConflictError as exc:
            raise Superseded(str(exc)) from exc

    def emit(self, state: WorkflowState, name: str, **data: object) -> None:
        payload = {"workflow_id": state.id, "workflow": state.name, **data}
        self.events.emit(Event(name, state.session_id or state.id, self.clock.now(), payload))

    async def drive(self, cursor: Cursor) -> WorkflowState:
        """Run until the workflow waits for input or ends; returns the last saved state.

        Raises:
            Superseded: another worker owns the workflow now.
        """
        definition = self.definition(cursor.state)
        try:
            with anyio.CancelScope() as scope:
                cursor.scope = scope
                await self._loop(definition, cursor)
        except Superseded:
            self.emit(cursor.state, "workflow.superseded", seq=cursor.seq)
            raise
        except anyio.get_cancelled_exc_class():
            # Cancelled from outside (service stopping, a caller's scope): record it, then go.
            with anyio.CancelScope(shield=True):
                await self._after_cancel(definition, cursor)
            raise
        finally:
            cursor.scope = None
        if scope.cancelled_caught:  # stopped on purpose: the deadline passed
            with anyio.CancelScope(shield=True):
                await self._after_cancel(definition, cursor)
        return cursor.state

    async def _after_cancel(self, definition: WorkflowDefinition, cursor: Cursor) -> None:
        now = self.clock.now()
        if cursor.stop_reason == "deadline":
            cursor.state = expire(definition, cursor.state, now)
            await self.save(cursor, "deadline")
            self.emit(cursor.state, "workflow.deadline_exceeded", status=cursor.state.status)
            self._emit_finished(cursor.state)
            return
        # Cancelled from outside: the steps say "cancelled"; follow on_failure now, and a
        # fallback branch (if any) is left "running" for recovery to pick up.
        cursor.state, action = advance(definition, cursor.state, now)
        await self.save(cursor, "cancelled")
        if isinstance(action, Finished):
            self._emit_finished(cursor.state)

    async def _loop(self, definition: WorkflowDefinition, cursor: Cursor) -> None:
        while True:
            now = self.clock.now()
            if cursor.state.deadline_at is not None and now >= cursor.state.deadline_at:
                cursor.stop_for_deadline()
                await anyio.lowlevel.checkpoint()  # let the cancellation land
            before = cursor.state
            cursor.state, action = advance(definition, before, now)
            if isinstance(action, Finished):
                await self.save(cursor, action.status)
                self._emit_finished(cursor.state)
                return
            if isinstance(action, AwaitInput):
                await self.save(cursor, f"waiting:{action.slot}")
                self.emit(
                    cursor.state, "workflow.waiting_input", step=action.step, slot=action.slot
                )
                return
            if cursor.state.phase != before.phase or cursor.state.route != before.route:
                self.emit(
                    cursor.state,
                    "workflow.phase",
                    phase=cursor.state.phase,
                    route=cursor.state.route,
                    mode=action.mode,
                )
            await self._run_phase(definition, cursor, action)

    def _emit_finished(self, state: WorkflowState) -> None:
        self.emit(
            state,
            "workflow.finished",
            status=state.status,
            error=state.error,
            failed_step=state.failed_step,
        )

    async def _run_phase(
        self, definition: WorkflowDefinition, cursor: Cursor, action: RunSteps
    ) -> None:
        now = self.clock.now()
        for name in action.steps:
            cursor.state = step_started(cursor.state, name, now)
        if len(action.steps) == 1:
            # One snapshot per step, after it: a step caught in flight by a crash is re-sent
            # with the same idempotency key whether or not its start was saved.
            await self._run_step(definition, cursor, action.steps[0], None)
            return
        await self.save(cursor, "started:" + ",".join(action.steps))
        try:
            async with anyio.create_task_group() as group:
                for name in action.steps:
                    group.start_soon(self._run_step, definition, cursor, name, (action.mode, group))
        except BaseExceptionGroup as errors:
            superseded = errors.subgroup(lambda e: isinstance(e, Superseded))
            if superseded is not None:
                raise Superseded(str(superseded.exceptions[0])) from errors
            raise

    async def _run_step(
        self,
        definition: WorkflowDefinition,
        cursor: Cursor,
        name: str,
        race: tuple[str, anyio.abc.TaskGroup] | None,
    ) -> None:
        step = definition.step(name)
        timeout_s = step.timeout_s or self.settings.step_timeout_s
        try:
            while True:
                result = await self._attempt(cursor.state, name, timeout_s)
                delay = retry_delay(
                    definition,
                    cursor.state,
                    name,
                    result,
                    default_retries=self.settings.max_retries,
                    default_backoff_s=self.settings.retry_backoff_s,
                )
                if delay is None:
                    break
                self.emit(
                    cursor.state,
                    "workflow.step_retry",
                    step=name,
                    tool=step.tool,
                    status=result.status,
                    error=result.error,
                    attempt=cursor.state.steps[name].attempts,
                    delay_s=delay,
                )
                await self._sleep(delay)
                async with cursor.lock:
                    cursor.state = step_started(cursor.state, name, self.clock.now())
                    await self.save(cursor, f"retry:{name}")
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                reason = "deadline" if cursor.stop_reason else "cancelled"
                await self._record(definition, cursor, name, StepResult("cancelled", error=reason))
            raise
        await self._record(definition, cursor, name, result)
        if race is not None:
            mode, group = race
            status = cursor.state.steps[name].status
            if (mode == "first" and status == "succeeded") or (
                mode == "all" and status not in ("succeeded", "running", "pending")
            ):
                group.cancel_scope.cancel()  # first: the losers; all: fail fast

    async def _attempt(self, state: WorkflowState, name: str, timeout_s: float) -> StepResult:
        definition = self.definition(state)
        step = definition.step(name)
        assert step.tool is not None  # pure waits never reach the runner
        try:
            arguments = resolve_arguments(step, state)
        except KeyError as exc:
            return StepResult("error", error=f"argument {exc.args[0]}", retryable=False)
        with anyio.move_on_after(timeout_s) as guard:
            outcome = await self.executor.run_step(
                step.tool,
                arguments,
                idempotency_key=idempotency_key(state, name),
                timeout_s=timeout_s,
                request_id=state.session_id or state.id,
                customer=state.user,
                tenant=state.tenant,
            )
        if guard.cancelled_caught:
            return StepResult("timeout", error=f"no answer within {timeout_s:g} s")
        if outcome.ok:
            return StepResult("ok", output=outcome.output)
        status: Literal["error", "timeout"] = "timeout" if outcome.status == "timeout" else "error"
        return StepResult(
            status, error=outcome.error or outcome.status, retryable=outcome.may_retry
        )

    async def _record(
        self, definition: WorkflowDefinition, cursor: Cursor, name: str, result: StepResult
    ) -> None:
        async with cursor.lock:
            cursor.state = step_finished(definition, cursor.state, name, result, self.clock.now())
            record = cursor.state.steps[name]
            await self.save(cursor, f"step:{name}:{record.status}")
        self.emit(
            cursor.state,
            "workflow.step",
            step=name,
            tool=record.tool,
            status=record.status,
            attempts=record.attempts,
            duration_ms=record.duration_ms,
            error=record.error,
            output_digest=digest(record.output) if record.output is not None else None,
        )
