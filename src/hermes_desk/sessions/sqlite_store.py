"""Live sessions in SQLite: the durable embedded default (spec D1: no acknowledged turn is lost).

Every ``save`` commits before it returns (WAL, ``synchronous = NORMAL``: a commit survives the
process being killed; see :mod:`hermes_desk.storage.sqlite`), so a turn the service answered is
on disk when the answer leaves, and a restart — after a clean stop or a ``kill -9`` — finds every
open session as it was. Several processes may share the file: the compare-and-set is one
``UPDATE … WHERE version = ?`` inside ``BEGIN IMMEDIATE``, so of two writers that read one
version exactly one writes.

Tables (migrations namespace ``session_store``)::

    live_sessions   id → owner, version, last_active, the session as JSON; a retired session
                    becomes a tombstone row (``retired_until`` set, transcript dropped) or goes
    session_owners  (tenant, user) → the id of the user's latest live session

The index ``live_sessions_owner`` lists a user's open sessions (``list_open``) without a scan.

``last_active`` and ``version`` are columns (``touch`` updates one column and leaves the JSON
alone); on load they override what the JSON says. All SQL runs on the store's own
:class:`~hermes_desk.storage.SqliteWorker` thread, never on the event loop.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import anyio.to_thread

from hermes_desk.clock import Clock, SystemClock
from hermes_desk.sessions.blob import dumps_blob, loads_blob
from hermes_desk.sessions.session import Session
from hermes_desk.sessions.store import SaveResult
from hermes_desk.storage import Migration, SqliteDatabase, SqliteWorker, apply_migrations

__all__ = ["MIGRATIONS", "SqliteSessionStore"]

MIGRATIONS: Sequence[Migration] = (
    Migration(
        "0001_live_sessions",
        """
        CREATE TABLE IF NOT EXISTS live_sessions (
            id            TEXT PRIMARY KEY,
            tenant        TEXT NOT NULL,
            user_id       TEXT NOT NULL,
            version       INTEGER NOT NULL,
            last_active   REAL NOT NULL,
            retired_until REAL,
            data          TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS live_sessions_idle
            ON live_sessions (last_active, id) WHERE retired_until IS NULL;
        CREATE INDEX IF NOT EXISTS live_sessions_tombstones
            ON live_sessions (retired_until) WHERE retired_until IS NOT NULL;
        CREATE TABLE IF NOT EXISTS session_owners (
            tenant     TEXT NOT NULL,
            user_id    TEXT NOT NULL,
            session_id TEXT NOT NULL,
            PRIMARY KEY (tenant, user_id)
        );
        """,
    ),
    Migration(
        "0002_open_sessions_per_owner",
        """
        CREATE INDEX IF NOT EXISTS live_sessions_owner
            ON live_sessions (tenant, user_id, last_active) WHERE retired_until IS NULL;
        """,
    ),
)

_LIVE = "retired_until IS NULL"


class SqliteSessionStore:
    """The embedded session store. ``SqliteSessionStore.open(path)`` owns its database.

    Args:
        db: the database (best a file of its own: the store's thread takes its lock per call).
        clock: time source for tombstone expiry (a ``FakeClock`` in tests).
        owns_db: close ``db`` in :meth:`aclose`.
    """

    def __init__(
        self, db: SqliteDatabase, *, clock: Clock | None = None, owns_db: bool = False
    ) -> None:
        self._db = db
        self._clock = clock or SystemClock()
        self._owns_db = owns_db
        self._worker = SqliteWorker(db, name="hermes-sessions")
        db.call(lambda conn: apply_migrations(conn, "session_store", MIGRATIONS))

    @classmethod
    def open(cls, path: str | Path, *, clock: Clock | None = None) -> SqliteSessionStore:
        return cls(SqliteDatabase(path), clock=clock, owns_db=True)

    @property
    def database(self) -> SqliteDatabase:
        return self._db

    async def save(self, session: Session, *, create: bool = False) -> SaveResult:
        expected = session.version
        data = session.to_dict()
        data["version"] = expected + 1
        row = (
            session.id,
            session.tenant,
            session.user,
            expected + 1,
            session.last_active,
            dumps_blob(data),
        )
        now = self._clock.now()

        def insert(conn: sqlite3.Connection) -> SaveResult:
            conn.execute(  # an expired tombstone no longer holds its id
                "DELETE FROM live_sessions WHERE id = ? AND retired_until <= ?", (session.id, now)
            )
            cursor = conn.execute(
                "INSERT INTO live_sessions (id, tenant, user_id, version, last_active, data)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                row,
            )
            if cursor.rowcount != 1:
                return SaveResult.TAKEN
            conn.execute(
                "INSERT INTO session_owners (tenant, user_id, session_id) VALUES (?, ?, ?)"
                " ON CONFLICT (tenant, user_id) DO UPDATE SET session_id = excluded.session_id",
                (session.tenant, session.user, session.id),
            )
            return SaveResult.WRITTEN

        def update(conn: sqlite3.Connection) -> SaveResult:
            cursor = conn.execute(
                "UPDATE live_sessions SET version = ?, last_active = ?, data = ?"
                f" WHERE id = ? AND version = ? AND {_LIVE}",
                (expected + 1, session.last_active, row[5], session.id, expected),
            )
            if cursor.rowcount == 1:
                return SaveResult.WRITTEN
            live = conn.execute(
                f"SELECT 1 FROM live_sessions WHERE id = ? AND {_LIVE}", (session.id,)
            ).fetchone()
            return SaveResult.STALE if live is not None else SaveResult.RETIRED

        # An update is one conditional statement, atomic on its own: no BEGIN … COMMIT around
        # it (two statements fewer, each a pass through the database's thread and the GIL on
        # every turn). When it matched nothing, the look-up tells a newer version (stale) from a
        # session retired meanwhile — either way the save failed.
        if create:
            result = await self._worker.run(insert, transaction=True)
        else:
            result = await self._worker.run(update)
        if result is SaveResult.WRITTEN:
            session.version = expected + 1
        return result

    async def load(self, session_id: str) -> Session | None:
        now = self._clock.now()

        def read(conn: sqlite3.Connection) -> Session | None:
            found = conn.execute(
                "SELECT version, last_active, retired_until, data FROM live_sessions WHERE id = ?",
                (session_id,),
            ).fetchone()
            if found is None or (found[2] is not None and found[2] <= now):
                return None
            session = Session.from_dict(loads_blob(found[3]))
            session.version = found[0]
            session.last_active = found[1]
            return session

        return await self._worker.read(read)

    async def touch(self, session: Session) -> bool:
        def renew(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                f"UPDATE live_sessions SET last_active = ? WHERE id = ? AND {_LIVE}",
                (session.last_active, session.id),
            )
            return cursor.rowcount == 1

        return await self._worker.run(renew)

    async def retire(self, session: Session, *, tombstone_s: float) -> bool:
        stone = session.to_dict()
        stone.update(status="closed", turns=[], short_term=[], open_contacts=[])
        blob = dumps_blob(stone)
        until = self._clock.now() + tombstone_s

        def remove(conn: sqlite3.Connection) -> bool:
            owner = conn.execute(
                f"SELECT tenant, user_id FROM live_sessions WHERE id = ? AND {_LIVE}",
                (session.id,),
            ).fetchone()
            if owner is None:
                return False
            if tombstone_s > 0:
                conn.execute(
                    "UPDATE live_sessions SET retired_until = ?, data = ?, version = version + 1"
                    " WHERE id = ?",
                    (until, blob, session.id),
                )
            else:
                conn.execute("DELETE FROM live_sessions WHERE id = ?", (session.id,))
            conn.execute(
                "DELETE FROM session_owners WHERE tenant = ? AND user_id = ? AND session_id = ?",
                (owner[0], owner[1], session.id),
            )
            return True

        return await self._worker.run(remove, transaction=True)

    async def find_open(self, tenant: str, user: str) -> str | None:
        def read(conn: sqlite3.Connection) -> str | None:
            found = conn.execute(
                "SELECT session_id FROM session_owners WHERE tenant = ? AND user_id = ?",
                (tenant, user),
            ).fetchone()
            return str(found[0]) if found is not None else None

        return await self._worker.run(read)

    async def list_open(self, tenant: str, user: str, limit: int = 20) -> list[Session]:
        def read(conn: sqlite3.Connection) -> list[Session]:
            rows = conn.execute(
                "SELECT version, last_active, data FROM live_sessions"
                f" WHERE tenant = ? AND user_id = ? AND {_LIVE}"
                " ORDER BY last_active DESC, id LIMIT ?",
                (tenant, user, limit),
            ).fetchall()
            found = []
            for version, last_active, data in rows:
                session = Session.from_dict(loads_blob(data))
                session.version, session.last_active = version, last_active
                found.append(session)
            return found

        return await self._worker.run(read)

    async def idle_before(self, cutoff: float, limit: int = 1000) -> list[str]:
        now = self._clock.now()

        def read(conn: sqlite3.Connection) -> list[str]:
            conn.execute("DELETE FROM live_sessions WHERE retired_until <= ?", (now,))
            rows = conn.execute(
                f"SELECT id FROM live_sessions WHERE {_LIVE} AND last_active <= ?"
                " ORDER BY last_active, id LIMIT ?",
                (cutoff, limit),
            ).fetchall()
            return [str(row[0]) for row in rows]

        return await self._worker.run(read, transaction=True)

    async def ping(self) -> None:
        await self._db.ping()

    async def aclose(self) -> None:
        """Finish queued calls, stop the store's thread, close the database if it owns it."""
        await self._worker.aclose()
        if self._owns_db:
            self._owns_db = False
            await anyio.to_thread.run_sync(self._db.close)  # the last close checkpoints the WAL
