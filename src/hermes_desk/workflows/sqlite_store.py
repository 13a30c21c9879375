"""The default snapshot store: a SQLite file (WAL), one row per snapshot, one row per workflow.

``workflows`` holds the current snapshot of each workflow (status, session, seq, expiry) so that
recovery and look-ups by session are index scans; ``workflow_snapshots`` keeps every version for
the history view. A save is one ``BEGIN IMMEDIATE`` transaction: compare the seq, write both.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_desk.clock import Clock, SystemClock
from hermes_desk.errors import ConflictError
from hermes_desk.storage import Migration, SqliteDatabase, apply_migrations
from hermes_desk.workflows.snapshot import Snapshot, SnapshotInfo

__all__ = ["MIGRATIONS", "SqliteSnapshotStore"]

MIGRATIONS = (
    Migration(
        "0001_snapshots",
        """
        CREATE TABLE workflows (
            id TEXT PRIMARY KEY,
            seq INTEGER NOT NULL,
            status TEXT NOT NULL,
            session_id TEXT,
            deadline_at REAL,
            saved_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            reason TEXT NOT NULL,
            data TEXT NOT NULL
        );
        CREATE INDEX workflows_status ON workflows (status, saved_at);
        CREATE INDEX workflows_session ON workflows (session_id, saved_at);
        CREATE INDEX workflows_expiry ON workflows (expires_at);
        CREATE TABLE workflow_snapshots (
            workflow_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            saved_at REAL NOT NULL,
            reason TEXT NOT NULL,
            status TEXT NOT NULL,
            PRIMARY KEY (workflow_id, seq)
        );
        """,
    ),
)

_COLUMNS = "id, seq, saved_at, reason, status, session_id, deadline_at, data"
_ACTIVE = ("pending", "running", "waiting_input")


class SqliteSnapshotStore:
    """Snapshots in a SQLite file. Expired rows are hidden at once and purged on save."""

    def __init__(
        self,
        path: str | Path | SqliteDatabase,
        *,
        clock: Clock | None = None,
        purge_every: int = 500,
    ) -> None:
        self._db = path if isinstance(path, SqliteDatabase) else SqliteDatabase(path)
        self._owns_db = not isinstance(path, SqliteDatabase)
        self._clock = clock or SystemClock()
        self._purge_every = purge_every
        self._saves = 0
        self._db.call(lambda conn: apply_migrations(conn, "workflows", MIGRATIONS))

    async def save(self, snapshot: Snapshot, *, expected_seq: int | None, ttl_s: float) -> None:
        now = self._clock.now()
        self._saves += 1
        purge = self._saves % self._purge_every == 0

        def write(conn: sqlite3.Connection) -> None:
            row = conn.execute(
                "SELECT seq, expires_at FROM workflows WHERE id = ?", (snapshot.workflow_id,)
            ).fetchone()
            stored = row["seq"] if row is not None and row["expires_at"] > now else None
            if stored != expected_seq:
                raise ConflictError(
                    f"workflow {snapshot.workflow_id} moved on (seq {stored}, expected "
                    f"{expected_seq})"
                )
            if row is not None and stored is None:  # expired: start its history afresh
                conn.execute(
                    "DELETE FROM workflow_snapshots WHERE workflow_id = ?", (snapshot.workflow_id,)
                )
            conn.execute(
                "INSERT INTO workflows (id, seq, status, session_id, deadline_at, saved_at,"
                " expires_at, reason, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, status = excluded.status,"
                " session_id = excluded.session_id, deadline_at = excluded.deadline_at,"
                " saved_at = excluded.saved_at, expires_at = excluded.expires_at,"
                " reason = excluded.reason, data = excluded.data",
                (
                    snapshot.workflow_id,
                    snapshot.seq,
                    snapshot.status,
                    snapshot.session_id,
                    snapshot.deadline_at,
                    snapshot.saved_at,
                    now + ttl_s,
                    snapshot.reason,
                    snapshot.data,
                ),
            )
            conn.execute(
                "INSERT OR REPLACE INTO workflow_snapshots (workflow_id, seq, saved_at, reason,"
                " status) VALUES (?, ?, ?, ?, ?)",
                (
                    snapshot.workflow_id,
                    snapshot.seq,
                    snapshot.saved_at,
                    snapshot.reason,
                    snapshot.status,
                ),
            )
            if purge:
                _purge(conn, now)

        await self._db.run(write, transaction=True)

    async def load(self, workflow_id: str) -> Snapshot | None:
        now = self._clock.now()
        rows = await self._db.read(  # keyed look-ups: on the loop when the connection is free
            lambda conn: conn.execute(
                f"SELECT {_COLUMNS} FROM workflows WHERE id = ? AND expires_at > ?",
                (workflow_id, now),
            ).fetchall()
        )
        return _snapshot(rows[0]) if rows else None

    async def history(self, workflow_id: str) -> list[SnapshotInfo]:
        now = self._clock.now()

        def read(conn: sqlite3.Connection) -> list[sqlite3.Row]:
            alive = conn.execute(
                "SELECT 1 FROM workflows WHERE id = ? AND expires_at > ?", (workflow_id, now)
            ).fetchone()
            if alive is None:
                return []
            return conn.execute(
                "SELECT seq, saved_at, reason, status FROM workflow_snapshots"
                " WHERE workflow_id = ? ORDER BY seq",
                (workflow_id,),
            ).fetchall()

        rows = await self._db.read(read)
        return [SnapshotInfo(r["seq"], r["saved_at"], r["reason"], r["status"]) for r in rows]

    async def active(self, *, limit: int = 1000) -> list[Snapshot]:
        now = self._clock.now()
        rows = await self._db.run(
            lambda conn: conn.execute(
                f"SELECT {_COLUMNS} FROM workflows WHERE status IN (?, ?, ?) AND expires_at > ?"
                " ORDER BY saved_at LIMIT ?",
                (*_ACTIVE, now, limit),
            ).fetchall()
        )
        return [_snapshot(r) for r in rows]

    async def by_session(self, session_id: str) -> list[Snapshot]:
        now = self._clock.now()
        rows = await self._db.read(
            lambda conn: conn.execute(
                f"SELECT {_COLUMNS} FROM workflows WHERE session_id = ? AND expires_at > ?"
                " ORDER BY saved_at DESC, seq DESC",
                (session_id, now),
            ).fetchall()
        )
        return [_snapshot(r) for r in rows]

    def purge_expired(self) -> int:
        """Delete expired workflows and their history now. Returns how many went."""
        now = self._clock.now()
        return self._db.transaction(lambda conn: _purge(conn, now))

    async def ping(self) -> None:
        await self._db.ping()

    async def aclose(self) -> None:
        """Close the database if this store opened it. Idempotent."""
        if self._owns_db:
            self._owns_db = False
            self._db.close()


def _purge(conn: sqlite3.Connection, now: float) -> int:
    conn.execute(
        "DELETE FROM workflow_snapshots WHERE workflow_id IN"
        " (SELECT id FROM workflows WHERE expires_at <= ?)",
        (now,),
    )
    return conn.execute("DELETE FROM workflows WHERE expires_at <= ?", (now,)).rowcount


def _snapshot(row: sqlite3.Row) -> Snapshot:
    return Snapshot(
        workflow_id=row["id"],
        seq=row["seq"],
        saved_at=row["saved_at"],
        reason=row["reason"],
        status=row["status"],
        session_id=row["session_id"],
        deadline_at=row["deadline_at"],
        data=row["data"],
    )
