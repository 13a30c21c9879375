"""The watchdog: no workflow stays "running" (or waiting) forever.

Every ``watchdog_interval_s`` it scans the active snapshots. A workflow past its deadline is failed
or escalated (its definition's ``on_deadline``) with a ``workflow.deadline_exceeded`` event; one
driven in this process is stopped through ``stop_local`` (which returns False when it is not
local) so its drive records the deadline itself. A running workflow whose snapshot has not
moved for ``stale_after_s`` and that no local drive owns (its worker died) is handed to
``adopt``, which resumes it here.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import anyio

from hermes_desk.clock import Clock
from hermes_desk.errors import ConflictError, HermesError
from hermes_desk.events import Event, EventSink
from hermes_desk.masking import Masking
from hermes_desk.workflows.definition import WorkflowDefinition
from hermes_desk.workflows.machine import expire
from hermes_desk.workflows.snapshot import Snapshot
from hermes_desk.workflows.store import SnapshotStore

__all__ = ["Watchdog", "WatchdogReport"]

_logger = logging.getLogger(__name__)


@dataclass
class WatchdogReport:
    expired: list[str] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)


class Watchdog:
    def __init__(
        self,
        *,
        store: SnapshotStore,
        definitions: Mapping[str, WorkflowDefinition],
        clock: Clock,
        events: EventSink,
        ttl_s: float,
        stale_after_s: float,
        stop_local: Callable[[str], bool],
        is_local: Callable[[str], bool],
        adopt: Callable[[Snapshot], Awaitable[None]] | None = None,
        masking: Masking | None = None,
    ) -> None:
        self._store = store
        self._definitions = definitions
        self._clock = clock
        self._events = events
        self._ttl_s = ttl_s
        self._stale_after_s = stale_after_s
        self._stop_local = stop_local
        self._is_local = is_local
        self._adopt = adopt
        self._masking = masking

    async def sweep(self) -> WatchdogReport:
        """One pass over the active workflows."""
        report = WatchdogReport()
        now = self._clock.now()
        for snapshot in await self._store.active():
            if snapshot.deadline_at is not None and now >= snapshot.deadline_at:
                if self._stop_local(snapshot.workflow_id) or await self._expire(snapshot, now):
                    report.expired.append(snapshot.workflow_id)
            elif (
                self._adopt is not None
                and snapshot.status in ("running", "pending")
                and now - snapshot.saved_at >= self._stale_after_s
                and not self._is_local(snapshot.workflow_id)
            ):
                await self._adopt(snapshot)
                report.adopted.append(snapshot.workflow_id)
        return report

    async def _expire(self, snapshot: Snapshot, now: float) -> bool:
        state = snapshot.state()
        definition = self._definitions.get(state.name)
        if definition is None:
            return False
        expired = expire(definition, state, now)
        try:
            await self._store.save(
                Snapshot.of(
                    expired,
                    seq=snapshot.seq + 1,
                    saved_at=now,
                    reason="deadline",
                    masking=self._masking,
                ),
                expected_seq=snapshot.seq,
                ttl_s=self._ttl_s,
            )
        except ConflictError:
            return False  # it moved meanwhile; the next pass looks again
        data = {
            "workflow_id": state.id,
            "workflow": state.name,
            "status": expired.status,
            "was": state.status,
            "phase": state.phase,
        }
        self._events.emit(
            Event("workflow.deadline_exceeded", state.session_id or state.id, now, data)
        )
        return True

    async def run(self, interval_s: float) -> None:
        """Sweep forever (until cancelled); a failing pass is logged, never fatal."""
        while True:
            try:
                await self.sweep()
            except HermesError as exc:
                _logger.warning("workflow watchdog pass failed: %s", exc.message)
            await anyio.sleep(interval_s)
