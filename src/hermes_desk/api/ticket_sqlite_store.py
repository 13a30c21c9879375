"""Used WebSocket tickets in SQLite (``<data_dir>/tickets.db``), shared by the workers of one
host: one row per used ticket id with its expiry; expired rows are dropped as new ones come.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from hermes_desk.storage import Migration, SqliteDatabase, apply_migrations

__all__ = ["MIGRATIONS", "SqliteTicketUseStore"]

MIGRATIONS: Sequence[Migration] = (
    Migration(
        "0001_ticket_uses",
        """
        CREATE TABLE IF NOT EXISTS ticket_uses (
            nonce       TEXT PRIMARY KEY,
            expires_at  REAL NOT NULL
        );
        CREATE INDEX IF NOT EXISTS ticket_uses_expiry ON ticket_uses (expires_at);
        """,
    ),
)


class SqliteTicketUseStore:
    """Used ticket ids in a SQLite file."""

    def __init__(self, path: str | Path) -> None:
        self._db = SqliteDatabase(path)
        self._db.call(lambda conn: apply_migrations(conn, "tickets", MIGRATIONS))

    async def use(self, nonce: str, *, expires_at: float, now: float) -> bool:
        if expires_at <= now:
            return False  # nothing to keep: an expired ticket is refused anyway

        def record(conn: sqlite3.Connection) -> bool:
            conn.execute("DELETE FROM ticket_uses WHERE expires_at <= ?", (now,))
            inserted = conn.execute(
                "INSERT OR IGNORE INTO ticket_uses (nonce, expires_at) VALUES (?, ?)",
                (nonce, expires_at),
            )
            return inserted.rowcount == 1

        # One transaction (BEGIN IMMEDIATE): of two workers using the same ticket, one inserts.
        return await self._db.run(record, transaction=True)

    async def ping(self) -> None:
        await self._db.ping()

    async def aclose(self) -> None:
        """Close the file. Idempotent."""
        self._db.close()
