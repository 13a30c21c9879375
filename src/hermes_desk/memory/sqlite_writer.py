"""One writer thread per SQLite memory store, committing queued write transactions in groups.

A write handed to a generic worker-thread pool pays the pool's bookkeeping on every call, and
concurrent writers each pay a full ``BEGIN IMMEDIATE … COMMIT``. Here every write goes to one
long-lived thread. When it finds several writes waiting, it runs them in one transaction, each
inside its own savepoint: a write that raises is rolled back alone, the others commit together,
and no caller hears back before the commit that holds its write. A lone write is a plain
``BEGIN IMMEDIATE``, its statements, ``COMMIT`` — WAL and the busy timeout stay as configured on
the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from hermes_desk.storage import SqliteDatabase

__all__ = ["GroupCommitWriter"]

T = TypeVar("T")

_Job = tuple[Callable[[sqlite3.Connection], Any], "asyncio.Future[Any]", asyncio.AbstractEventLoop]
_STOP = object()


class GroupCommitWriter:
    """Run write transactions on one thread, several per commit when they queue up.

    Args:
        db: the database whose connection (and lock) the writes use; reads may keep using it.
        max_group: the most writes one commit carries (bounds how long readers wait).
    """

    def __init__(self, db: SqliteDatabase, *, max_group: int = 64) -> None:
        self._db = db
        self._max_group = max_group
        self._queue: queue.SimpleQueue[_Job | object] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` in a write transaction and return its result once committed."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on asyncio: the database's own worker-thread path
            return await self._db.run(fn, transaction=True)
        future: asyncio.Future[T] = loop.create_future()
        self._ensure_started()
        self._queue.put((fn, future, loop))
        return await future

    async def aclose(self) -> None:
        """Finish the queued writes and stop the thread. Idempotent."""
        thread = self._thread
        if thread is None:
            return
        self._queue.put(_STOP)
        await asyncio.to_thread(thread.join)
        self._thread = None

    def _ensure_started(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                thread = threading.Thread(
                    target=self._loop, name="hermes-memory-writer", daemon=True
                )
                thread.start()
                self._thread = thread

    def _loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            group: list[_Job] = [first]  # type: ignore[list-item]
            stop = False
            while len(group) < self._max_group:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP:
                    stop = True
                    break
                group.append(more)  # type: ignore[arg-type]
            # a caller cancelled before its turn: its write never starts
            group = [job for job in group if not job[1].cancelled()]
            if group:
                results = self._db.call(lambda conn, g=group: _commit(conn, g))  # type: ignore[misc]
                _settle(group, results)
            if stop:
                return


def _commit(conn: sqlite3.Connection, group: list[_Job]) -> list[tuple[bool, Any]]:
    """Run the group in one transaction; per-write savepoints when there are several."""
    results: list[tuple[bool, Any]] = []
    try:
        conn.execute("BEGIN IMMEDIATE")
        if len(group) == 1:
            results.append((True, group[0][0](conn)))
        else:
            for fn, _future, _loop in group:
                conn.execute("SAVEPOINT write")
                try:
                    results.append((True, fn(conn)))
                except Exception as exc:  # this write alone is undone
                    conn.execute("ROLLBACK TO write")
                    results.append((False, exc))
                conn.execute("RELEASE write")
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return [(False, exc)] * len(group)
    return results


def _settle(group: list[_Job], results: list[tuple[bool, Any]]) -> None:
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
    for (_fn, future, loop), (ok, value) in zip(group, results, strict=True):
        by_loop.setdefault(loop, []).append((future, ok, value))
    for loop, items in by_loop.items():
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
            loop.call_soon_threadsafe(_resolve, items)


def _resolve(items: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    for future, ok, value in items:
        if future.done():  # cancelled while its write ran
            continue
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
