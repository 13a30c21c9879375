"""Pick the snapshot store the settings ask for."""

from __future__ import annotations

from pathlib import Path

from hermes_desk.clock import Clock
from hermes_desk.config import WorkflowSettings
from hermes_desk.workflows.snapshot import SnapshotStore

__all__ = ["open_snapshot_store"]


def open_snapshot_store(
    settings: WorkflowSettings, *, sqlite_path: str | Path, clock: Clock | None = None
) -> SnapshotStore:
    """SQLite at ``sqlite_path`` (default) or Redis at ``settings.redis_url``."""
    if settings.snapshot_store == "redis":
        from hermes_desk.workflows.redis_snapshots import RedisSnapshotStore

        return RedisSnapshotStore(settings.redis_url)
    from hermes_desk.workflows.sqlite_snapshots import SqliteSnapshotStore

    return SqliteSnapshotStore(sqlite_path, clock=clock)
