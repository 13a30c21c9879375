"""Snapshots: the persisted form of a workflow, versioned, behind a small store interface.

A snapshot is the whole :class:`~hermes_desk.workflows.machine.WorkflowState` as JSON with a
``schema_version``. Old versions are upgraded on load by the functions in ``_UPCASTERS`` (one per
version step), so a snapshot written by an older release still resumes. ``seq`` grows by one per
save; a store refuses a save whose ``expected_seq`` is not the stored one (compare-and-set), which
keeps two workers from driving the same workflow.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from hermes_desk.errors import ConflictError, ValidationError
from hermes_desk.workflows.machine import ACTIVE_STATUSES, WorkflowState

__all__ = [
    "SCHEMA_VERSION",
    "InMemorySnapshotStore",
    "Snapshot",
    "SnapshotInfo",
    "SnapshotStore",
    "decode_state",
    "encode_state",
]

SCHEMA_VERSION = 1

# version n → function turning a version-n state dict into a version n+1 one.
_UPCASTERS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One saved version of a workflow."""

    workflow_id: str
    seq: int
    saved_at: float
    reason: str
    status: str
    session_id: str | None
    deadline_at: float | None
    data: str  # JSON document with ``schema_version`` and ``state``

    @classmethod
    def of(cls, state: WorkflowState, *, seq: int, saved_at: float, reason: str) -> Snapshot:
        return cls(
            workflow_id=state.id,
            seq=seq,
            saved_at=saved_at,
            reason=reason,
            status=state.status,
            session_id=state.session_id,
            deadline_at=state.deadline_at,
            data=encode_state(state),
        )

    def state(self) -> WorkflowState:
        return decode_state(self.data)

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_STATUSES


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """What ``history`` returns: which snapshots were taken, when and why (no data)."""

    seq: int
    saved_at: float
    reason: str
    status: str


def encode_state(state: WorkflowState) -> str:
    # pydantic's serializer writes the state; only the envelope is assembled here.
    return '{"schema_version":' + str(SCHEMA_VERSION) + ',"state":' + state.model_dump_json() + "}"


def decode_state(data: str | bytes) -> WorkflowState:
    """Parse a snapshot document of any known schema version.

    Raises:
        ValidationError: the document is not a snapshot, or comes from a newer release.
    """
    try:
        document = json.loads(data)
        version = int(document["schema_version"])
        state = document["state"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValidationError(f"not a workflow snapshot: {exc}") from exc
    if version > SCHEMA_VERSION:
        raise ValidationError(
            f"snapshot schema_version {version} is newer than this release ({SCHEMA_VERSION})",
            schema_version=version,
        )
    while version < SCHEMA_VERSION:
        state = _UPCASTERS[version](state)
        version += 1
    return WorkflowState.model_validate(state)


class SnapshotStore(Protocol):
    """Where workflow snapshots live. Every backend passes the same contract suite."""

    async def save(self, snapshot: Snapshot, *, expected_seq: int | None, ttl_s: float) -> None:
        """Store ``snapshot`` as the current one, and keep it in the history.

        ``expected_seq`` is the seq the caller loaded (``None`` for a new workflow).

        Raises:
            ConflictError: the stored seq is not ``expected_seq`` (another worker moved on).
        """
        ...

    async def load(self, workflow_id: str) -> Snapshot | None:
        """The current snapshot, or ``None`` (unknown or expired)."""
        ...

    async def history(self, workflow_id: str) -> list[SnapshotInfo]:
        """Every snapshot taken of the workflow, oldest first."""
        ...

    async def active(self, *, limit: int = 1000) -> list[Snapshot]:
        """Current snapshots of workflows that are not finished (pending, running, waiting)."""
        ...

    async def by_session(self, session_id: str) -> list[Snapshot]:
        """Current snapshots of the workflows of a session, newest first."""
        ...

    async def close(self) -> None: ...


class InMemorySnapshotStore:
    """The in-process store: the test double, and enough for a single short-lived process."""

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        self._current: dict[str, tuple[Snapshot, float]] = {}
        self._history: dict[str, list[SnapshotInfo]] = {}
        self._lock = threading.Lock()
        self._now = clock

    def _alive(self, item: tuple[Snapshot, float]) -> bool:
        return self._now is None or item[1] > self._now()

    async def save(self, snapshot: Snapshot, *, expected_seq: int | None, ttl_s: float) -> None:
        with self._lock:
            current = self._current.get(snapshot.workflow_id)
            stored = current[0].seq if current and self._alive(current) else None
            if stored != expected_seq:
                raise ConflictError(
                    f"workflow {snapshot.workflow_id} moved on (seq {stored}, expected "
                    f"{expected_seq})"
                )
            if current is not None and stored is None:  # expired: its history goes with it
                self._history.pop(snapshot.workflow_id, None)
            expires = (self._now() if self._now else snapshot.saved_at) + ttl_s
            self._current[snapshot.workflow_id] = (snapshot, expires)
            self._history.setdefault(snapshot.workflow_id, []).append(
                SnapshotInfo(snapshot.seq, snapshot.saved_at, snapshot.reason, snapshot.status)
            )

    async def load(self, workflow_id: str) -> Snapshot | None:
        with self._lock:
            item = self._current.get(workflow_id)
            return item[0] if item and self._alive(item) else None

    async def history(self, workflow_id: str) -> list[SnapshotInfo]:
        with self._lock:
            item = self._current.get(workflow_id)
            if item is None or not self._alive(item):
                return []
            return list(self._history.get(workflow_id, []))

    async def active(self, *, limit: int = 1000) -> list[Snapshot]:
        with self._lock:
            items = [s for s, e in self._current.values() if s.active and self._alive((s, e))]
        return sorted(items, key=lambda s: s.saved_at)[:limit]

    async def by_session(self, session_id: str) -> list[Snapshot]:
        with self._lock:
            items = [
                s
                for s, e in self._current.values()
                if s.session_id == session_id and self._alive((s, e))
            ]
        return sorted(items, key=lambda s: (s.saved_at, s.seq), reverse=True)

    async def close(self) -> None:
        return None
