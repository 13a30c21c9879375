"""Suggestion feedback in SQLite (the embedded default), in a file of its own.

One row per suggestion and event (primary key ``tenant, session_id, turn_index, event``); the
report is one ``GROUP BY``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from hermes_desk.feedback.record import SuggestionEvent
from hermes_desk.storage import Migration, SqliteDatabase, apply_migrations

__all__ = ["MIGRATIONS", "SqliteFeedbackStore"]

MIGRATIONS: Sequence[Migration] = (
    Migration(
        "0001_suggestion_feedback",
        """
        CREATE TABLE IF NOT EXISTS suggestion_feedback (
            tenant      TEXT NOT NULL,
            session_id  TEXT NOT NULL,
            turn_index  INTEGER NOT NULL,
            event       TEXT NOT NULL,
            intent      TEXT NOT NULL,
            kind        TEXT NOT NULL,
            at          REAL NOT NULL,
            data        TEXT NOT NULL,
            PRIMARY KEY (tenant, session_id, turn_index, event)
        );
        CREATE INDEX IF NOT EXISTS suggestion_feedback_counts
            ON suggestion_feedback (tenant, intent, kind);
        """,
    ),
)


class SqliteFeedbackStore:
    """Suggestion feedback in ``<data_dir>/feedback.db``."""

    def __init__(self, path: str | Path) -> None:
        self._db = SqliteDatabase(path)
        self._db.call(lambda conn: apply_migrations(conn, "feedback", MIGRATIONS))

    async def put(self, event: SuggestionEvent) -> bool:
        return (await self.put_many([event]))[0]

    async def put_many(self, events: Sequence[SuggestionEvent]) -> list[bool]:
        rows = [
            (
                event.tenant, event.session_id, event.turn_index, event.event, event.intent,
                event.kind, event.at, json.dumps(event.to_dict(), ensure_ascii=False),
            )
            for event in events
        ]  # fmt: skip

        def upsert(conn: sqlite3.Connection) -> list[bool]:
            firsts = []
            for row in rows:
                found = conn.execute(
                    "SELECT 1 FROM suggestion_feedback "
                    "WHERE tenant = ? AND session_id = ? AND turn_index = ? AND event = ?",
                    row[:4],
                ).fetchone()
                conn.execute(
                    "INSERT OR REPLACE INTO suggestion_feedback "
                    "(tenant, session_id, turn_index, event, intent, kind, at, data) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
                firsts.append(found is None)
            return firsts

        if not rows:
            return []
        # One transaction: the existence checks and the writes.
        return await self._db.run(upsert, transaction=True)

    async def for_session(self, tenant: str, session_id: str) -> list[SuggestionEvent]:
        rows = await self._db.run(
            lambda conn: conn.execute(
                "SELECT data FROM suggestion_feedback WHERE tenant = ? AND session_id = ? "
                "ORDER BY turn_index, event",
                (tenant, session_id),
            ).fetchall()
        )
        return [SuggestionEvent.from_dict(json.loads(row["data"])) for row in rows]

    async def counts(self, tenant: str) -> list[tuple[str, str, int]]:
        rows = await self._db.run(
            lambda conn: conn.execute(
                "SELECT intent, kind, COUNT(*) AS n FROM suggestion_feedback WHERE tenant = ? "
                "GROUP BY intent, kind ORDER BY intent, kind",
                (tenant,),
            ).fetchall()
        )
        return [(row["intent"], row["kind"], int(row["n"])) for row in rows]

    async def ping(self) -> None:
        await self._db.ping()

    async def aclose(self) -> None:
        """Close the database. Idempotent."""
        self._db.close()
