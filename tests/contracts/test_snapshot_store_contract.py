"""Every SnapshotStore backend honours the same contract: in-process, SQLite, real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_desk.errors import ConflictError
from hermes_desk.testing import FakeClock
from hermes_desk.workflows import (
    InMemorySnapshotStore,
    Snapshot,
    SqliteSnapshotStore,
    WorkflowDefinition,
)
from hermes_desk.workflows.machine import new_workflow

pytestmark = pytest.mark.anyio

DEFINITION = WorkflowDefinition.model_validate(
    {"name": "wf", "phases": [{"name": "p", "steps": [{"name": "s", "tool": "t"}]}]}
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def backend(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Any, Callable[[float], Any]]]:
    """A store and a way to let ``seconds`` pass for its TTLs."""
    clock = FakeClock()
    store: Any
    if request.param == "memory":
        store = InMemorySnapshotStore(clock=clock.now)
    elif request.param == "sqlite":
        store = SqliteSnapshotStore(tmp_path / "s.db", clock=clock)
    else:
        from hermes_desk.workflows.redis_store import RedisSnapshotStore

        url = request.getfixturevalue("redis_url")
        store = RedisSnapshotStore(url, prefix="test:")

    async def wait(seconds: float) -> None:
        if request.param == "redis":
            await anyio.sleep(seconds)  # Redis expires on its own clock
        else:
            clock.advance(seconds)

    yield store, wait
    await store.aclose()


def snap(
    workflow_id: str = "wf_1",
    *,
    seq: int = 1,
    status: str = "running",
    session: str | None = "s1",
    at: float = 1000.0,
) -> Snapshot:
    state = new_workflow(
        DEFINITION,
        workflow_id=workflow_id,
        inputs={"phone": "13800138000"},
        tenant="t",
        user="u",
        session_id=session,
        now=at,
        deadline_s=60,
    )
    state.status = status  # type: ignore[assignment]
    return Snapshot.of(state, seq=seq, saved_at=at + seq, reason=f"r{seq}")


async def test_save_then_load_round_trips(backend: Any) -> None:
    store, _ = backend
    await store.save(snap(), expected_seq=None, ttl_s=60)
    loaded = await store.load("wf_1")
    assert loaded is not None
    assert (loaded.seq, loaded.status, loaded.session_id, loaded.reason) == (
        1,
        "running",
        "s1",
        "r1",
    )
    state = loaded.state()
    assert state.inputs == {"phone": "13800138000"} and state.deadline_at == 1060
    assert await store.load("wf_unknown") is None


async def test_compare_and_set_refuses_a_stale_writer(backend: Any) -> None:
    store, _ = backend
    await store.save(snap(seq=1), expected_seq=None, ttl_s=60)
    with pytest.raises(ConflictError):
        await store.save(snap(seq=1), expected_seq=None, ttl_s=60)  # "new" but it exists
    await store.save(snap(seq=2), expected_seq=1, ttl_s=60)
    with pytest.raises(ConflictError):
        await store.save(snap(seq=2), expected_seq=1, ttl_s=60)  # someone moved on
    loaded = await store.load("wf_1")
    assert loaded is not None and loaded.seq == 2


async def test_history_lists_every_snapshot_in_order(backend: Any) -> None:
    store, _ = backend
    for seq in (1, 2, 3):
        await store.save(snap(seq=seq), expected_seq=seq - 1 or None, ttl_s=60)
    history = await store.history("wf_1")
    assert [(h.seq, h.reason) for h in history] == [(1, "r1"), (2, "r2"), (3, "r3")]
    assert await store.history("wf_unknown") == []


async def test_active_lists_only_unfinished_workflows(backend: Any) -> None:
    store, _ = backend
    await store.save(snap("wf_run", status="running"), expected_seq=None, ttl_s=60)
    await store.save(snap("wf_wait", status="waiting_input"), expected_seq=None, ttl_s=60)
    await store.save(snap("wf_done", status="running"), expected_seq=None, ttl_s=60)
    await store.save(snap("wf_done", seq=2, status="completed"), expected_seq=1, ttl_s=60)
    active = {s.workflow_id for s in await store.active()}
    assert active == {"wf_run", "wf_wait"}


async def test_by_session_finds_the_sessions_workflows_newest_first(backend: Any) -> None:
    store, _ = backend
    await store.save(snap("wf_old", at=100), expected_seq=None, ttl_s=60)
    await store.save(snap("wf_new", at=200), expected_seq=None, ttl_s=60)
    await store.save(snap("wf_other", session="s2"), expected_seq=None, ttl_s=60)
    assert [s.workflow_id for s in await store.by_session("s1")] == ["wf_new", "wf_old"]
    assert await store.by_session("nobody") == []


async def test_snapshots_expire_after_their_ttl(backend: Any) -> None:
    store, wait = backend
    await store.save(snap(), expected_seq=None, ttl_s=0.3)
    assert await store.load("wf_1") is not None
    await wait(0.6)
    assert await store.load("wf_1") is None
    assert await store.active() == []
    assert await store.by_session("s1") == []
    # An expired workflow id can be written afresh.
    await store.save(snap(), expected_seq=None, ttl_s=60)
    assert [h.seq for h in await store.history("wf_1")] == [1]


async def test_ping_answers_and_aclose_is_idempotent(
    backend: tuple[Any, Callable[[float], Any]],
) -> None:
    store, _ = backend
    await store.ping()
    await store.save(snap(), expected_seq=None, ttl_s=60)
    await store.aclose()
    await store.aclose()  # a second close does nothing (and neither does the fixture's)
