"""Where workflow snapshots live: the :class:`SnapshotStore` boundary, the in-process store and
the builder. Backends: ``sqlite_store`` (the embedded default) and ``redis_store`` (several
workers); every one passes ``tests/contracts/test_snapshot_store_contract.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from hermes_desk.clock import Clock
from hermes_desk.config import WorkflowSettings
from hermes_desk.errors import ConflictError
from hermes_desk.workflows.snapshot import Snapshot, SnapshotInfo

__all__ = ["InMemorySnapshotStore", "SnapshotStore", "build_snapshot_store"]


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

    async def ping(self) -> None:
        """Return when the backend answers; raise (``BackendUnavailableError`` …) otherwise."""
        ...

    async def aclose(self) -> None:
        """Release what the store holds. Idempotent."""
        ...


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

    async def ping(self) -> None:
        """Always answers: the snapshots are in this process."""

    async def aclose(self) -> None:
        """Nothing to release."""


def build_snapshot_store(
    settings: WorkflowSettings, *, data_dir: Path, clock: Clock | None = None
) -> SnapshotStore:
    """The store ``settings.snapshot_store`` names: SQLite at ``<data_dir>/workflows.db``
    (default) or Redis at ``settings.redis_url``."""
    if settings.snapshot_store == "redis":
        from hermes_desk.workflows.redis_store import RedisSnapshotStore

        return RedisSnapshotStore(settings.redis_url)
    from hermes_desk.workflows.sqlite_store import SqliteSnapshotStore

    return SqliteSnapshotStore(Path(data_dir) / "workflows.db", clock=clock)
