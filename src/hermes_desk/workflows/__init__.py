"""Workflows (the article's Multi-Call Protocol): phased multi-step orchestration.

Definitions are data (:mod:`.definition`), a pure state machine decides (:mod:`.machine`), a
runner does the I/O and snapshots after every step (:mod:`.runner`, :mod:`.snapshot`), a
watchdog fails or escalates what overstays its deadline, and :class:`WorkflowService` is the
facade the API and the turn pipeline use.
"""

from hermes_desk.workflows.definition import (
    InputSpec,
    Phase,
    RetryPolicy,
    Step,
    WorkflowDefinition,
    load_workflow_dir,
    load_workflow_file,
)
from hermes_desk.workflows.executor import (
    CallableStepExecutor,
    LocalTool,
    StepExecutor,
    StepOutcome,
)
from hermes_desk.workflows.machine import WITHDRAWN_BY_CUSTOMER, StepRecord, WorkflowState
from hermes_desk.workflows.runner import Cursor, WorkflowRunner
from hermes_desk.workflows.service import WorkflowService
from hermes_desk.workflows.snapshot import (
    SCHEMA_VERSION,
    Snapshot,
    SnapshotInfo,
    decode_state,
    encode_state,
)
from hermes_desk.workflows.sqlite_store import SqliteSnapshotStore
from hermes_desk.workflows.store import InMemorySnapshotStore, SnapshotStore, build_snapshot_store
from hermes_desk.workflows.view import WorkflowView
from hermes_desk.workflows.watchdog import Watchdog, WatchdogReport

__all__ = [
    "SCHEMA_VERSION",
    "WITHDRAWN_BY_CUSTOMER",
    "CallableStepExecutor",
    "Cursor",
    "InMemorySnapshotStore",
    "InputSpec",
    "LocalTool",
    "Phase",
    "RetryPolicy",
    "Snapshot",
    "SnapshotInfo",
    "SnapshotStore",
    "SqliteSnapshotStore",
    "Step",
    "StepExecutor",
    "StepOutcome",
    "StepRecord",
    "Watchdog",
    "WatchdogReport",
    "WorkflowDefinition",
    "WorkflowRunner",
    "WorkflowService",
    "WorkflowState",
    "WorkflowView",
    "build_snapshot_store",
    "decode_state",
    "encode_state",
    "load_workflow_dir",
    "load_workflow_file",
]
