"""One long-lived thread per database running its calls, for async callers on hot paths.

The event loop's generic worker-thread pool costs its bookkeeping on every call (about 70 µs
on the reference machine). A store whose every request touches SQLite (the live sessions: a
read and a write per turn) instead sends its calls to one thread of its own, which runs them
in order and wakes the caller's loop when each is done (about 30 µs).
:meth:`SqliteDatabase.run` uses one too, so every store does. The event loop never waits on
disk either way, and the calls still take the database's lock, so other users of the same
:class:`SqliteDatabase` stay safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread

from hermes_desk.storage.sqlite import SqliteDatabase

__all__ = ["SqliteWorker"]

T = TypeVar("T")

_Job = tuple[
    Callable[[sqlite3.Connection], Any], bool, "asyncio.Future[Any]", asyncio.AbstractEventLoop
]


class SqliteWorker:
    """Run ``fn(conn)`` calls for async code on one dedicated thread.

    Args:
        db: the database whose connection (and lock) the calls use.
        name: the thread's name (shows in thread dumps).
    """

    def __init__(self, db: SqliteDatabase, *, name: str = "hermes-sqlite") -> None:
        self._db = db
        self._name = name
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False

    async def run(self, fn: Callable[[sqlite3.Connection], T], *, transaction: bool = False) -> T:
        """``fn(conn)`` on the worker thread, in ``BEGIN IMMEDIATE … COMMIT`` if
        ``transaction``; returns once it has run (and committed). A caller cancelled before its
        turn is skipped; one cancelled while its call runs does not wait for it."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on asyncio: the database's own worker-thread path
            return await self._db.run(fn, transaction=transaction)
        if self._closed:
            raise RuntimeError("the SQLite worker is closed")
        future: asyncio.Future[T] = loop.create_future()
        self._ensure_started()
        self._queue.put((fn, transaction, future, loop))
        return await future

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """A short read-only ``fn(conn)``, at once when the connection is free
        (:meth:`SqliteDatabase.read`), else queued behind the calls before it."""
        if self._closed:
            raise RuntimeError("the SQLite worker is closed")
        with self._db.free_connection() as conn:
            if conn is not None:
                return fn(conn)
        return await self.run(fn)

    async def aclose(self) -> None:
        """Finish the queued calls and stop the thread. Idempotent."""
        self._closed = True
        thread = self._thread
        if thread is None:
            return
        self._queue.put(None)
        await anyio.to_thread.run_sync(thread.join)
        self._thread = None

    def stop_soon(self) -> None:
        """Stop taking calls; the thread ends once the queued ones have run (no waiting)."""
        self._closed = True
        if self._thread is not None:
            self._queue.put(None)
            self._thread = None

    def _ensure_started(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                thread.start()
                self._thread = thread

    def _loop(self) -> None:
        db = self._db
        while True:
            job = self._queue.get()
            if job is None:
                return
            fn, transaction, future, loop = job
            if future.cancelled():  # its caller gave up before its turn: it never runs
                continue
            try:
                outcome: tuple[bool, Any] = (True, (db.transaction if transaction else db.call)(fn))
            except BaseException as exc:  # handed to the caller, who must always hear back
                outcome = (False, exc)
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
                loop.call_soon_threadsafe(_settle, future, outcome)


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():  # cancelled while its call ran
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
