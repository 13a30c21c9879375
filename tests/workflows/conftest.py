from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_desk.config import WorkflowSettings
from hermes_desk.workflows import SqliteSnapshotStore, WorkflowService

from .helpers import Tools, build


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def tools() -> Tools:
    return Tools()


@pytest.fixture
def settings() -> WorkflowSettings:
    return WorkflowSettings(step_timeout_s=2.0, max_retries=2, retry_backoff_s=0.0)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteSnapshotStore]:
    snapshots = SqliteSnapshotStore(tmp_path / "snapshots.db")
    yield snapshots
    anyio.run(snapshots.aclose)


@pytest.fixture
def make_service(
    tools: Tools, store: SqliteSnapshotStore, settings: WorkflowSettings
) -> Callable[..., WorkflowService]:
    def make(definitions: Any, **kwargs: Any) -> WorkflowService:
        return build(
            definitions,
            tools,
            kwargs.pop("store", store),
            kwargs.pop("settings", settings),
            **kwargs,
        )

    return make
