"""The workflows facade the service and the turn pipeline use.

``async with WorkflowService(...) as workflows:`` opens a task group that owns every drive and
the watchdog; a drive never belongs to a request, so a request that gives up (W7) does not cancel
the workflow it started. :meth:`start` and :meth:`provide_input` wait (up to ``settle_wait_s``)
until the workflow waits for the customer or ends, then return its view. :meth:`recover`, called
at startup, resumes every unfinished workflow from its snapshot (after a crash or kill -9).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import anyio
import anyio.abc

from hermes_desk.clock import Clock, SystemClock
from hermes_desk.config import WorkflowSettings
from hermes_desk.errors import ConflictError, NotFoundError, ValidationError
from hermes_desk.events import EventSink, MemorySink
from hermes_desk.ids import new_id
from hermes_desk.masking import Masking
from hermes_desk.workflows.definition import WorkflowDefinition
from hermes_desk.workflows.executor import StepExecutor
from hermes_desk.workflows.machine import (
    APPROVAL_PREFIX,
    WITHDRAWN_BY_CUSTOMER,
    WorkflowState,
    approval_slot,
    new_workflow,
    provide_input,
    resolve_arguments,
    supersede,
)
from hermes_desk.workflows.runner import Cursor, Superseded, WorkflowRunner
from hermes_desk.workflows.snapshot import Snapshot
from hermes_desk.workflows.store import SnapshotStore
from hermes_desk.workflows.view import WorkflowView
from hermes_desk.workflows.watchdog import Watchdog

__all__ = ["ApprovalRequest", "WorkflowService"]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A workflow step that waits for an agent to approve its write."""

    workflow_id: str
    workflow: str
    step: str
    tool: str
    arguments: dict[str, Any]
    tenant: str
    user: str
    session_id: str | None
    round: int


_logger = logging.getLogger(__name__)


class _Drive:
    def __init__(self, cursor: Cursor) -> None:
        self.cursor = cursor
        self.settled = anyio.Event()


class WorkflowService:
    """Start, feed, look at and recover workflows.

    Args:
        definitions: workflow definitions by name (from the pack).
        executor: how steps reach tools.
        store: where snapshots go (SQLite by default, Redis for several workers).
        settings: the ``workflows`` settings section.
        clock: injected time; the system clock by default.
        events: where ``workflow.*`` events go.
        settle_wait_s: how long ``start``/``provide_input`` wait for the workflow to settle.
        watchdog: run the watchdog loop inside the service (off in tests that sweep by hand).
    """

    def __init__(
        self,
        *,
        definitions: Mapping[str, WorkflowDefinition],
        executor: StepExecutor,
        store: SnapshotStore,
        settings: WorkflowSettings | None = None,
        clock: Clock | None = None,
        events: EventSink | None = None,
        settle_wait_s: float = 20.0,
        watchdog: bool = True,
        masking: Masking | None = None,
    ) -> None:
        self.settings = settings or WorkflowSettings()
        # An ended workflow's snapshot is masked (spec D3); a running one keeps clear values.
        self.masking = masking or Masking()
        self.clock = clock or SystemClock()
        self.events = events or MemorySink()
        self.definitions = dict(definitions)
        self.store = store
        self.runner = WorkflowRunner(
            definitions=self.definitions,
            executor=executor,
            store=store,
            clock=self.clock,
            settings=self.settings,
            events=self.events,
            masking=self.masking,
        )
        self.settle_wait_s = settle_wait_s
        retry_budget = self.settings.step_timeout_s + self.settings.retry_backoff_s * 4
        self.watchdog = Watchdog(
            store=store,
            definitions=self.definitions,
            clock=self.clock,
            events=self.events,
            ttl_s=self.settings.snapshot_ttl_s,
            stale_after_s=retry_budget * (self.settings.max_retries + 2),
            stop_local=self._stop_local,
            is_local=self.drives_locally,
            adopt=self._adopt,
            masking=self.masking,
        )
        self._run_watchdog = watchdog
        self._drives: dict[str, _Drive] = {}
        self._group: anyio.abc.TaskGroup | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    async def __aenter__(self) -> WorkflowService:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        if self._run_watchdog:
            self._group.start_soon(self.watchdog.run, self.settings.watchdog_interval_s)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        group, self._group = self._group, None
        if group is None:
            return None
        # Stopping the service cancels the drives: each records its steps as cancelled and
        # follows on_failure, so nothing is left "running" without a snapshot saying so.
        group.cancel_scope.cancel()
        return await group.__aexit__(exc_type, exc, tb)

    def _spawn(self, cursor: Cursor) -> _Drive:
        if self._group is None:
            raise ConflictError("the workflow service is not running (use 'async with')")
        drive = _Drive(cursor)
        self._drives[cursor.state.id] = drive
        self._group.start_soon(self._drive, drive)
        return drive

    async def _drive(self, drive: _Drive) -> None:
        workflow_id = drive.cursor.state.id
        try:
            await self.runner.drive(drive.cursor)
        except Superseded:
            pass  # another worker owns it now
        except Exception:  # a bug or a store outage must not take the service down
            _logger.exception("workflow %s: drive failed", workflow_id)
        finally:
            self._drives.pop(workflow_id, None)
            drive.settled.set()

    async def _settle(self, drive: _Drive, wait_s: float | None) -> WorkflowView:
        with anyio.move_on_after(self.settle_wait_s if wait_s is None else wait_s):
            await drive.settled.wait()
        history = await self.store.history(drive.cursor.state.id)
        return WorkflowView.of(drive.cursor.state, seq=drive.cursor.seq, history=history)

    def drives_locally(self, workflow_id: str) -> bool:
        return workflow_id in self._drives

    def _stop_local(self, workflow_id: str) -> bool:
        drive = self._drives.get(workflow_id)
        if drive is None:
            return False
        drive.cursor.stop_for_deadline()
        return True

    async def _adopt(self, snapshot: Snapshot) -> None:
        if snapshot.workflow_id not in self._drives:
            self._spawn(Cursor(snapshot.state(), snapshot.seq))

    # -- API ---------------------------------------------------------------------------------

    async def start(
        self,
        name: str,
        inputs: Mapping[str, Any],
        *,
        tenant: str,
        user: str,
        session_id: str | None = None,
        wait_s: float | None = None,
    ) -> WorkflowView:
        """Start workflow ``name`` and run it until it waits or ends (or ``wait_s`` passes).

        Raises:
            NotFoundError: no workflow of that name.
            ValidationError: a required input is missing.
        """
        definition = self.definitions.get(name)
        if definition is None:
            raise NotFoundError(f"no workflow named '{name}'", known=sorted(self.definitions))
        generated = {
            key: secrets.token_urlsafe(12)
            for key, spec in definition.inputs.items()
            if spec.generate == "secret"
        }
        try:
            state = new_workflow(
                definition,
                workflow_id=new_id("wf"),
                inputs=inputs,
                tenant=tenant,
                user=user,
                session_id=session_id,
                now=self.clock.now(),
                deadline_s=self.settings.deadline_s,
                secrets=generated,
            )
        except KeyError as exc:
            raise ValidationError(
                f"workflow '{name}' needs the input '{exc.args[0]}'", field=exc.args[0]
            ) from exc
        cursor = Cursor(state, 0)
        await self.runner.save(cursor, "created")
        self.runner.emit(state, "workflow.started", inputs=sorted(state.inputs))
        return await self._settle(self._spawn(cursor), wait_s)

    async def provide_input(
        self,
        workflow_id: str,
        slots: Mapping[str, Any],
        *,
        tenant: str | None = None,
        user: str | None = None,
        wait_s: float | None = None,
    ) -> WorkflowView:
        """Give a waiting workflow the slot it waits for and run it on (on this worker).

        A workflow that is not waiting, or slots without the awaited one, change nothing: the
        current view comes back. An agent's approval is not a slot anyone may bring: it comes
        only through :meth:`decide`.

        Raises:
            ValidationError: a slot names an approval.
        """
        refused = sorted(name for name in slots if name.startswith(APPROVAL_PREFIX))
        if refused:
            raise ValidationError(
                "approvals are given through the proposal, not as input", field=refused[0]
            )
        return await self._provide(workflow_id, slots, tenant, user, wait_s)

    async def restart(
        self,
        workflow_id: str,
        inputs: Mapping[str, Any],
        *,
        tenant: str,
        user: str,
        reason: str = "restarted: the customer asked again",
        wait_s: float | None = None,
    ) -> WorkflowView:
        """End a workflow that waits for the customer and start the same workflow again, with
        its inputs updated by ``inputs`` (a new phone number) — "send me a new code", a second
        request with other details. The inputs stay inside the service (never in a view).

        Raises:
            NotFoundError: unknown, or another tenant's or customer's.
            ConflictError: it is not waiting for the customer (running, ended, or waiting for an
                agent's approval).
        """
        state = await self._end_waiting(workflow_id, tenant, user, reason, "superseded")
        definition = self.definitions[state.name]
        kept = {
            name: value
            for name, value in state.inputs.items()
            if name in definition.inputs and definition.inputs[name].generate is None
        }
        return await self.start(
            state.name,
            {**kept, **inputs},
            tenant=tenant,
            user=user,
            session_id=state.session_id,
            wait_s=wait_s,
        )

    async def withdraw(
        self, workflow_id: str, *, tenant: str, user: str, reason: str = WITHDRAWN_BY_CUSTOMER
    ) -> WorkflowView:
        """End a workflow that waits for the customer because they took the request back ("不用
        重置了" while the reset waits for the code): it fails with ``reason`` and nothing after
        the wait runs (``workflow.withdrawn``).

        Raises:
            NotFoundError: unknown, or another tenant's or customer's.
            ConflictError: it is not waiting for the customer (a write waiting for an agent is
                withdrawn through its proposal).
        """
        await self._end_waiting(workflow_id, tenant, user, reason, "withdrawn")
        return await self.get(workflow_id, tenant=tenant, user=user)

    async def _end_waiting(
        self, workflow_id: str, tenant: str, user: str, reason: str, kind: str
    ) -> WorkflowState:
        """End a workflow waiting for the customer (``workflow.<kind>``); its state before."""
        snapshot = await self._load(workflow_id, tenant, user)
        state = snapshot.state()
        waiting = state.waiting_for or ""
        if state.status != "waiting_input" or waiting.startswith(APPROVAL_PREFIX):
            raise ConflictError(f"workflow {workflow_id} is not waiting for the customer")
        ended = supersede(state, self.clock.now(), reason)
        try:
            await self.runner.save(Cursor(ended, snapshot.seq), kind)
        except Superseded as exc:
            raise ConflictError(f"workflow {workflow_id} changed meanwhile; try again") from exc
        self.runner.emit(ended, f"workflow.{kind}", reason=reason)
        return state

    async def decide(
        self,
        workflow_id: str,
        step: str,
        decision: Mapping[str, Any],
        *,
        tenant: str | None = None,
        user: str | None = None,
        wait_s: float | None = None,
    ) -> WorkflowView:
        """Hand an agent's decision on a write step (``decision``: approved, rejected or expired;
        ``agent_id``; ``arguments`` to run with; ``reason``) to the workflow waiting for it."""
        return await self._provide(
            workflow_id, {approval_slot(step): dict(decision)}, tenant, user, wait_s
        )

    async def awaiting_approval(self, workflow_id: str) -> ApprovalRequest | None:
        """The write step the workflow waits to have approved, with the arguments it would run
        with, or ``None``."""
        snapshot = await self.store.load(workflow_id)
        if snapshot is None:
            return None
        state = snapshot.state()
        slot = state.waiting_for or ""
        if state.status != "waiting_input" or not slot.startswith(APPROVAL_PREFIX):
            return None
        definition = self.definitions[state.name]
        step = definition.step(slot[len(APPROVAL_PREFIX) :])
        assert step.tool is not None  # a definition rule: approval steps have a tool
        return ApprovalRequest(
            workflow_id=state.id,
            workflow=state.name,
            step=step.name,
            tool=step.tool,
            arguments=resolve_arguments(step, state),
            tenant=state.tenant,
            user=state.user,
            session_id=state.session_id,
            round=snapshot.seq,
        )

    async def _provide(
        self,
        workflow_id: str,
        slots: Mapping[str, Any],
        tenant: str | None,
        user: str | None,
        wait_s: float | None,
    ) -> WorkflowView:
        for _ in range(3):
            snapshot = await self._load(workflow_id, tenant, user)
            state = snapshot.state()
            updated, accepted = provide_input(
                self.definitions[state.name], state, slots, self.clock.now()
            )
            drive = self._drives.get(workflow_id)
            if accepted and drive is not None:
                # This worker is still moving it (resuming it after a restart, say) towards the
                # wait the snapshot records: let it get there, then take the input.
                with anyio.move_on_after(self.settle_wait_s):
                    await drive.settled.wait()
                continue
            if not accepted:
                history = await self.store.history(workflow_id)
                return WorkflowView.of(state, seq=snapshot.seq, history=history)
            cursor = Cursor(updated, snapshot.seq)
            try:
                await self.runner.save(cursor, "input")
            except Superseded:
                continue  # another turn or worker moved it: look again
            self.runner.emit(updated, "workflow.input", slots=sorted(slots))
            return await self._settle(self._spawn(cursor), wait_s)
        raise ConflictError(f"workflow {workflow_id} keeps changing; try again")

    async def get(
        self, workflow_id: str, *, tenant: str | None = None, user: str | None = None
    ) -> WorkflowView:
        """The workflow's current view, with its snapshot history.

        Raises:
            NotFoundError: unknown, expired, or another tenant's or customer's.
        """
        drive = self._drives.get(workflow_id)
        snapshot = await self._load(workflow_id, tenant, user)
        history = await self.store.history(workflow_id)
        if drive is not None and drive.cursor.seq >= snapshot.seq:
            return WorkflowView.of(drive.cursor.state, seq=drive.cursor.seq, history=history)
        return WorkflowView.of(snapshot.state(), seq=snapshot.seq, history=history)

    async def find_waiting(self, session_id: str) -> WorkflowView | None:
        """The session's newest workflow that waits for the customer, if any."""
        for snapshot in await self.store.by_session(session_id):
            if snapshot.status == "waiting_input":
                return WorkflowView.of(snapshot.state(), seq=snapshot.seq)
        return None

    async def for_session(self, session_id: str) -> list[WorkflowView]:
        """Every workflow of a session, newest first (for the console)."""
        return [
            WorkflowView.of(s.state(), seq=s.seq) for s in await self.store.by_session(session_id)
        ]

    async def recover(self) -> list[str]:
        """Resume every pending or running workflow from its last snapshot. Returns their ids.

        Waiting workflows need nothing: the next turn with the slot resumes them. Completed steps
        are never run again; a step caught in flight runs again with the same idempotency key,
        so the backend answers it from its record instead of doing it twice.
        """
        resumed: list[str] = []
        for snapshot in await self.store.active(limit=100_000):
            if (
                snapshot.status in ("pending", "running")
                and snapshot.workflow_id not in self._drives
            ):
                self._spawn(Cursor(snapshot.state(), snapshot.seq))
                resumed.append(snapshot.workflow_id)
        if resumed:
            _logger.info("resumed %d workflows from their snapshots", len(resumed))
        return resumed

    async def wait_settled(self, workflow_id: str, wait_s: float | None = None) -> WorkflowView:
        """Wait for a local drive to settle (tests, the kill test); the view either way."""
        drive = self._drives.get(workflow_id)
        if drive is not None:
            return await self._settle(drive, wait_s)
        return await self.get(workflow_id)

    async def _load(
        self, workflow_id: str, tenant: str | None, user: str | None = None
    ) -> Snapshot:
        snapshot = await self.store.load(workflow_id)
        if snapshot is None:
            raise NotFoundError(f"no workflow {workflow_id}")
        state = snapshot.state()
        if (tenant is not None and state.tenant != tenant) or (
            user is not None and state.user != user
        ):
            raise NotFoundError(f"no workflow {workflow_id}")
        return snapshot
