"""The session archive in PostgreSQL, for several workers (``sessions.archive: postgres``).

The same rows, the same idempotent writes and owner-only reads as the SQLite archive
(:mod:`hermes_desk.sessions.archive`), so a conversation closed on one worker is read back on
any other, and a pending row left by a worker killed mid-close is settled by whichever starts.
"""

from __future__ import annotations

from typing import Any

from hermes_desk.masking import Masking
from hermes_desk.sessions.archive import archive_insert, archive_row, record_of, session_of
from hermes_desk.sessions.session import Session
from hermes_desk.storage import Migration
from hermes_desk.storage.postgres import PostgresPool

__all__ = ["MIGRATIONS", "PostgresSessionArchive"]

MIGRATIONS = (
    Migration(
        "0001_session_archive",
        """
        CREATE TABLE IF NOT EXISTS session_archive (
            session_id  TEXT PRIMARY KEY,
            tenant      TEXT NOT NULL,
            user_id     TEXT NOT NULL,
            created_at  DOUBLE PRECISION NOT NULL,
            ended_at    DOUBLE PRECISION NOT NULL,
            reason      TEXT NOT NULL,
            turn_count  INTEGER NOT NULL,
            transcript  TEXT NOT NULL,
            slots       TEXT NOT NULL,
            short_term  TEXT NOT NULL,
            summary     TEXT NOT NULL,
            hooks_done  INTEGER NOT NULL DEFAULT 1
        );
        CREATE INDEX IF NOT EXISTS session_archive_owner
            ON session_archive (tenant, user_id, ended_at);
        CREATE INDEX IF NOT EXISTS session_archive_unsettled
            ON session_archive (ended_at) WHERE hooks_done = 0;
        """,
    ),
)

_OWNED = "SELECT * FROM session_archive WHERE session_id = %s AND tenant = %s AND user_id = %s"


class PostgresSessionArchive:
    """Closed and expired sessions in PostgreSQL (``pip install 'hermes-desk[postgres]'``)."""

    def __init__(self, dsn: str, *, masking: Masking | None = None) -> None:
        self._db = PostgresPool(
            dsn, what="PostgreSQL session archive", namespace="sessions", migrations=MIGRATIONS
        )
        self._masking = masking or Masking()

    async def archive(
        self, session: Session, reason: str, *, ended_at: float, pending: bool = False
    ) -> bool:
        row = archive_row(session, reason, ended_at, pending, self._masking)
        async with self._db.connection() as conn:
            cursor = await conn.execute(archive_insert("%s", pending), row)
            return cursor.rowcount == 1

    async def settle(self, session_id: str) -> None:
        async with self._db.connection() as conn:
            await conn.execute(
                "UPDATE session_archive SET hooks_done = 1 WHERE session_id = %s", (session_id,)
            )

    async def discard(self, session_id: str) -> None:
        async with self._db.connection() as conn:
            await conn.execute(
                "DELETE FROM session_archive WHERE session_id = %s AND hooks_done = 0",
                (session_id,),
            )

    async def unsettled(self, limit: int = 1000) -> list[tuple[Session, str]]:
        async with self._db.connection() as conn:
            cursor = await conn.execute(
                "SELECT * FROM session_archive WHERE hooks_done = 0 ORDER BY ended_at LIMIT %s",
                (limit,),
            )
            rows = await cursor.fetchall()
        return [(session_of(row), str(row["reason"])) for row in rows]

    async def get(self, tenant: str, user: str, session_id: str) -> dict[str, Any] | None:
        found = await self._owned(tenant, user, session_id)
        return record_of(found, full=True) if found is not None else None

    async def list_for_user(self, tenant: str, user: str, limit: int = 20) -> list[dict[str, Any]]:
        async with self._db.connection() as conn:
            cursor = await conn.execute(
                "SELECT * FROM session_archive WHERE tenant = %s AND user_id = %s"
                " ORDER BY ended_at DESC LIMIT %s",
                (tenant, user, limit),
            )
            rows = await cursor.fetchall()
        return [record_of(row, full=False) for row in rows]

    async def session(self, tenant: str, user: str, session_id: str) -> Session | None:
        found = await self._owned(tenant, user, session_id)
        return session_of(found) if found is not None else None

    async def set_summary(self, session_id: str, summary: str) -> None:
        async with self._db.connection() as conn:
            cursor = await conn.execute(
                "SELECT tenant FROM session_archive WHERE session_id = %s", (session_id,)
            )
            found = await cursor.fetchone()
            if found is None:
                return
            masked = self._masking.for_tenant(str(found["tenant"])).text(summary)
            await conn.execute(
                "UPDATE session_archive SET summary = %s WHERE session_id = %s",
                (masked, session_id),
            )

    async def ping(self) -> None:
        await self._db.ping()

    async def aclose(self) -> None:
        """Close the pool. Idempotent."""
        await self._db.aclose()

    async def _owned(self, tenant: str, user: str, session_id: str) -> dict[str, Any] | None:
        async with self._db.connection() as conn:
            cursor = await conn.execute(_OWNED, (session_id, tenant, user))
            found: dict[str, Any] | None = await cursor.fetchone()
        return found
