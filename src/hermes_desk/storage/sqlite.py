"""SQLite connections configured once: WAL, busy timeout, foreign keys.

The article's sketch opened a connection per call without WAL or a busy timeout, and ran it
inside ``async def``. Here one connection per database file is shared behind a lock, and async
callers go through :meth:`SqliteDatabase.run`, which moves the work to a thread of the
database's own (:class:`~hermes_desk.storage.worker.SqliteWorker`) so the event loop never
blocks on disk — and no call pays the generic worker-thread pool's bookkeeping. Short keyed
reads (:meth:`SqliteDatabase.read`) run on the caller's thread, on a second, read-only
connection, beside whatever the thread is writing — in WAL mode only, where a read never waits
for a writer.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import anyio.to_thread

from hermes_desk.errors import BackendUnavailableError, MisuseError

if TYPE_CHECKING:
    from hermes_desk.storage.worker import SqliteWorker

__all__ = ["SqliteDatabase", "open_sqlite"]

T = TypeVar("T")

BUSY_TIMEOUT_MS = 5_000
_JOURNAL_MODES = frozenset({"delete", "truncate", "persist", "memory", "wal", "off"})


def open_sqlite(
    path: str | Path, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS, read_only: bool = False
) -> sqlite3.Connection:
    """Open (creating folders as needed) a SQLite file in WAL mode with a busy timeout.

    ``read_only``: a connection that only reads (``query_only``) and leaves the file's journal
    mode to the connection that writes (a database switched out of WAL stays so)."""
    target = str(path)
    if target != ":memory:":
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        target, timeout=busy_timeout_ms / 1000, check_same_thread=False, isolation_level=None
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    if read_only:
        conn.execute("PRAGMA query_only = ON")
        return conn
    if target != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


class SqliteDatabase:
    """A shared connection, a lock, and explicit transactions.

    ``call`` runs a function with the connection in the calling thread; ``run`` does the same in
    a worker thread for async code. ``transaction`` wraps the function in BEGIN IMMEDIATE …
    COMMIT (ROLLBACK on error), which is what makes read-modify-write steps atomic.
    """

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> None:
        self.path = str(path)
        self._busy_timeout_ms = busy_timeout_ms
        self._conn = open_sqlite(path, busy_timeout_ms=busy_timeout_ms)
        self._lock = threading.RLock()
        self._worker: SqliteWorker | None = None
        # A second connection for the short reads of async callers (file databases only: a
        # second ":memory:" connection is another database), opened on first use.
        self._reader: sqlite3.Connection | None = None
        self._reader_lock = threading.Lock()
        self._closed = False
        # Reads on the caller's thread only where they never wait for a writer: WAL (a file on
        # which WAL could not be set stays in its old mode), or a database of this process alone.
        self._quick_reads = self._reads_beside_writes(
            self._conn.execute("PRAGMA journal_mode").fetchone()[0]
        )

    def call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            return fn(self._conn)

    def transaction(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            return result

    async def run(self, fn: Callable[[sqlite3.Connection], T], *, transaction: bool = False) -> T:
        """``fn(conn)`` off the event loop (in a transaction if ``transaction``). On asyncio the
        calls go, in order, to the database's own thread; a caller cancelled before its call
        started is skipped. Elsewhere (trio) they go to anyio's worker threads."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            runner = self.transaction if transaction else self.call
            return await anyio.to_thread.run_sync(runner, fn)
        worker = self._worker
        if worker is None:
            from hermes_desk.storage.worker import SqliteWorker

            worker = self._worker = SqliteWorker(self, name=f"hermes-sqlite-{Path(self.path).name}")
        return await worker.run(fn, transaction=transaction)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """A short read-only ``fn(conn)``: run at once on the caller's thread when a
        connection is free (:meth:`free_connection`), else queued like :meth:`run`.

        In WAL mode a read never waits for a writer (it reads the last committed state), and a
        keyed look-up of a few rows from the page cache costs microseconds — less than the two
        thread hand-offs :meth:`run` pays (measured: CPU per turn, docs/benchmarks.md "Load").
        A connection busy with another call is never waited for on the event loop. Writes, and
        reads that scan, go through :meth:`run`."""
        with self.free_connection() as conn:
            if conn is not None:
                return fn(conn)
        return await self.run(fn)

    @contextmanager
    def free_connection(self) -> Iterator[sqlite3.Connection | None]:
        """A connection to read with, held, if one is free now; else ``None`` (no waiting).

        First the read connection: the database's own is held by its thread for as long as a
        write takes — waits for the interpreter's lock included — and a read that found it held
        went to the thread behind the write (measured: about one session look-up in two per
        turn). In WAL mode the read connection reads the last commit, as the database's own
        does between calls; a write whose caller has been answered is committed, so it is
        seen. Then the database's own connection, as before.

        Always ``None`` out of WAL mode (:meth:`set_journal_mode`): there a read waits for a
        writer of another process, for up to the busy timeout, which the event loop must not."""
        if not self._quick_reads:
            yield None
            return
        if self._reader_lock.acquire(blocking=False):
            try:
                reader = self._reader or self._open_reader()
                if reader is not None:
                    yield reader
                    return
            finally:
                self._reader_lock.release()
        if not self._lock.acquire(blocking=False):
            yield None
            return
        try:
            yield self._conn
        finally:
            self._lock.release()

    async def set_journal_mode(self, mode: str) -> str:
        """Switch the file's journal mode (``wal``, ``delete``…) and give the mode now in
        effect. Short reads stop running on the caller's thread first, and the read connection
        is closed (leaving WAL needs the file to itself); they run there again once the mode is
        WAL."""
        if mode.lower() not in _JOURNAL_MODES:
            raise MisuseError(
                f"unknown SQLite journal mode {mode!r}: one of {sorted(_JOURNAL_MODES)}"
            )
        self._quick_reads = False
        self._close_reader()
        try:
            now = await self.run(lambda c: c.execute(f"PRAGMA journal_mode = {mode}").fetchone()[0])
        except Exception:
            # A switch refused (another connection reading, say) leaves the mode as it was;
            # quick reads follow the mode in effect, not the one asked for.
            with suppress(Exception):
                kept = await self.run(lambda c: c.execute("PRAGMA journal_mode").fetchone()[0])
                self._quick_reads = self._reads_beside_writes(kept)
            raise
        self._quick_reads = self._reads_beside_writes(now)
        return str(now)

    def _reads_beside_writes(self, journal_mode: str) -> bool:
        return self.path == ":memory:" or str(journal_mode).lower() == "wal"

    def _close_reader(self) -> None:
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def _open_reader(self) -> sqlite3.Connection | None:
        if self.path == ":memory:" or self._closed:
            return None
        self._reader = open_sqlite(self.path, busy_timeout_ms=self._busy_timeout_ms, read_only=True)
        return self._reader

    async def ping(self) -> None:
        """One ``SELECT 1`` off the event loop; BackendUnavailableError if the file cannot be
        read (closed, deleted folder, locked beyond the busy timeout)."""
        try:
            await self.run(lambda conn: conn.execute("SELECT 1").fetchone())
        except sqlite3.Error as exc:
            raise BackendUnavailableError(f"SQLite {self.path}: {exc}") from exc

    def close(self) -> None:
        """Close the connection (and stop the database's thread). Idempotent."""
        if self._worker is not None:
            self._worker.stop_soon()
            self._worker = None
        with self._lock:
            self._closed = True
            self._conn.close()
        self._close_reader()
