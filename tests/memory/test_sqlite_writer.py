"""The SQLite group-commit writer: one thread, per-write savepoints, nothing lost or half-done."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from anyio import wait_all_tasks_blocked
from anyio.abc import TaskStatus
from anyio.lowlevel import checkpoint

from hermes_desk.memory.sqlite_writer import GroupCommitWriter
from hermes_desk.storage import SqliteDatabase

pytestmark = pytest.mark.anyio


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[SqliteDatabase]:
    database = SqliteDatabase(tmp_path / "w.db")
    database.call(lambda c: c.execute("CREATE TABLE t (v INTEGER PRIMARY KEY)"))
    yield database
    database.close()


def insert(value: int) -> object:
    def fn(conn: sqlite3.Connection) -> int:
        assert conn.in_transaction
        conn.execute("INSERT INTO t VALUES (?)", (value,))
        return value

    return fn


def values(db: SqliteDatabase) -> list[int]:
    return [r[0] for r in db.call(lambda c: c.execute("SELECT v FROM t ORDER BY v").fetchall())]


class Gate:
    """A write that holds the writer thread inside its transaction until opened."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.open = threading.Event()

    def __call__(self, conn: sqlite3.Connection) -> str:
        self.entered.set()
        self.open.wait(10)
        return "gate"


async def test_a_lone_write_commits_and_returns_its_result(db: SqliteDatabase) -> None:
    writer = GroupCommitWriter(db)
    assert await writer.run(insert(1)) == 1  # type: ignore[arg-type]
    assert values(db) == [1]
    await writer.aclose()


async def test_queued_writes_commit_together_and_a_failure_is_undone_alone(
    db: SqliteDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_desk.memory import sqlite_writer

    groups: list[int] = []
    commit = sqlite_writer._commit

    def counting_commit(conn: sqlite3.Connection, group: list[Any]) -> list[tuple[bool, Any]]:
        groups.append(len(group))
        return commit(conn, group)

    monkeypatch.setattr(sqlite_writer, "_commit", counting_commit)
    writer = GroupCommitWriter(db)
    gate = Gate()
    results: dict[str, object] = {}

    async def write(name: str, fn: object) -> None:
        try:
            results[name] = await writer.run(fn)  # type: ignore[arg-type]
        except Exception as exc:
            results[name] = exc

    def fails(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t VALUES (99)")
        raise ValueError("this write fails after writing")

    async with anyio.create_task_group() as tg:
        tg.start_soon(write, "gate", gate)
        await anyio.to_thread.run_sync(gate.entered.wait, 10)
        tg.start_soon(write, "a", insert(1))
        tg.start_soon(write, "bad", fails)
        tg.start_soon(write, "b", insert(2))
        await wait_all_tasks_blocked()  # all three wait behind the gate: one group
        gate.open.set()
    assert results["gate"] == "gate" and results["a"] == 1 and results["b"] == 2
    assert isinstance(results["bad"], ValueError)
    assert values(db) == [1, 2]
    assert groups == [1, 3]  # the gate alone, then the three queued writes in one commit
    await writer.aclose()


async def test_a_failing_lone_write_rolls_back(db: SqliteDatabase) -> None:
    writer = GroupCommitWriter(db)

    def fails(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t VALUES (5)")
        raise KeyError("no")

    with pytest.raises(KeyError):
        await writer.run(fails)
    assert values(db) == []
    assert await writer.run(insert(6)) == 6  # type: ignore[arg-type]
    await writer.aclose()


async def test_a_write_cancelled_before_its_turn_never_runs(db: SqliteDatabase) -> None:
    writer = GroupCommitWriter(db)
    gate = Gate()
    ran: list[int] = []

    def tracked(conn: sqlite3.Connection) -> None:
        ran.append(1)
        conn.execute("INSERT INTO t VALUES (7)")

    async def cancelled_write(*, task_status: TaskStatus[anyio.CancelScope]) -> None:
        with anyio.CancelScope() as scope:
            task_status.started(scope)
            await writer.run(tracked)

    async with anyio.create_task_group() as tg:
        tg.start_soon(writer.run, gate)
        await anyio.to_thread.run_sync(gate.entered.wait, 10)
        scope = await tg.start(cancelled_write)
        await wait_all_tasks_blocked()
        scope.cancel()
        await checkpoint()
        await wait_all_tasks_blocked()
        gate.open.set()
    await writer.run(insert(8))  # type: ignore[arg-type]
    assert ran == [] and values(db) == [8]
    await writer.aclose()


async def test_close_finishes_queued_writes(db: SqliteDatabase) -> None:
    writer = GroupCommitWriter(db)
    async with anyio.create_task_group() as tg:
        for v in range(20):
            tg.start_soon(writer.run, insert(v))
        await wait_all_tasks_blocked()
        await writer.aclose()
    assert values(db) == list(range(20))
    await writer.aclose()  # a second close does nothing
