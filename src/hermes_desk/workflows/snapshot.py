"""Snapshots: the persisted form of a workflow, versioned (its stores: :mod:`.store`).

A snapshot is the whole :class:`~hermes_desk.workflows.machine.WorkflowState` as JSON with a
``schema_version``. Old versions are upgraded on load by the functions in ``_UPCASTERS`` (one per
version step), so a snapshot written by an older release still resumes. ``seq`` grows by one per
save; a store refuses a save whose ``expected_seq`` is not the stored one (compare-and-set), which
keeps two workers from driving the same workflow.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermes_desk.errors import ValidationError
from hermes_desk.masking import Masking
from hermes_desk.workflows.machine import ACTIVE_STATUSES, WorkflowState

__all__ = [
    "SCHEMA_VERSION",
    "Snapshot",
    "SnapshotInfo",
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
    def of(
        cls,
        state: WorkflowState,
        *,
        seq: int,
        saved_at: float,
        reason: str,
        masking: Masking | None = None,
    ) -> Snapshot:
        """The snapshot of ``state``. With ``masking``, a workflow that has ended keeps no
        clear personal numbers: its inputs and step results are masked (spec D3) — only a
        running workflow holds the values its steps need."""
        data = encode_state(state)
        if masking is not None and state.status not in ACTIVE_STATUSES:
            data = masking.for_tenant(state.tenant).json(data)
        return cls(
            workflow_id=state.id,
            seq=seq,
            saved_at=saved_at,
            reason=reason,
            status=state.status,
            session_id=state.session_id,
            deadline_at=state.deadline_at,
            data=data,
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
