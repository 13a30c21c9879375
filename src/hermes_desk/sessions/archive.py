"""The session archive: what a conversation leaves behind when it closes or expires (spec S1).

One row per session in SQL: owner, times, why it ended, the transcript (JSON), the final slots
(dialogue state), the short-term facts and a summary. Writing is idempotent (the first archive
of a session wins), so a retried hook never duplicates a row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any, Protocol

from hermes_desk.sessions.session import Session
from hermes_desk.storage import Migration, SqliteDatabase, apply_migrations

__all__ = ["MIGRATIONS", "SessionArchive", "SqliteSessionArchive", "summarize"]

MIGRATIONS: Sequence[Migration] = (
    Migration(
        "0001_session_archive",
        """
        CREATE TABLE IF NOT EXISTS session_archive (
            session_id  TEXT PRIMARY KEY,
            tenant      TEXT NOT NULL,
            user_id     TEXT NOT NULL,
            created_at  REAL NOT NULL,
            ended_at    REAL NOT NULL,
            reason      TEXT NOT NULL,
            turn_count  INTEGER NOT NULL,
            transcript  TEXT NOT NULL,
            slots       TEXT NOT NULL,
            short_term  TEXT NOT NULL,
            summary     TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS session_archive_owner
            ON session_archive (tenant, user_id, ended_at);
        """,
    ),
)


class SessionArchive(Protocol):
    """Where closed and expired sessions are kept."""

    async def archive(self, session: Session, reason: str, *, ended_at: float) -> bool:
        """Store ``session``; False when it was already archived."""
        ...

    async def get(self, tenant: str, user: str, session_id: str) -> dict[str, Any] | None:
        """The archived record, only for its owner."""
        ...

    async def list_for_user(self, tenant: str, user: str, limit: int = 20) -> list[dict[str, Any]]:
        """The user's archived sessions, newest first, without transcripts."""
        ...


def summarize(session: Session, *, max_chars: int = 280) -> str:
    """A deterministic extractive summary: turn counts, the dialogue state, first and last ask."""
    users = [t.text for t in session.turns if t.role == "user"]
    parts = [f"{len(session.turns)} turns ({len(users)} from the customer)"]
    if session.slots:
        state = ", ".join(f"{k}={v}" for k, v in sorted(session.slots.items()))
        parts.append(f"state: {state}")
    if users:
        parts.append(f"first: {users[0]}")
        if len(users) > 1:
            parts.append(f"last: {users[-1]}")
    text = "; ".join(parts)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class SqliteSessionArchive:
    """The archive in the service's SQLite database (migrations namespace ``sessions``)."""

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db
        db.call(lambda conn: apply_migrations(conn, "sessions", MIGRATIONS))

    async def archive(self, session: Session, reason: str, *, ended_at: float) -> bool:
        row = (
            session.id,
            session.tenant,
            session.user,
            session.created_at,
            ended_at,
            reason,
            len(session.turns),
            _dumps([t.to_dict() for t in session.turns]),
            _dumps(session.slots),
            _dumps(session.short_term),
            session.summary or summarize(session),
        )

        def write(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "INSERT INTO session_archive (session_id, tenant, user_id, created_at, ended_at,"
                " reason, turn_count, transcript, slots, short_term, summary)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING",
                row,
            )
            return cursor.rowcount == 1

        return await self._db.run(write, transaction=True)

    async def get(self, tenant: str, user: str, session_id: str) -> dict[str, Any] | None:
        def read(conn: sqlite3.Connection) -> dict[str, Any] | None:
            found = conn.execute(
                "SELECT * FROM session_archive WHERE session_id = ? AND tenant = ? AND user_id = ?",
                (session_id, tenant, user),
            ).fetchone()
            return _record(found, full=True) if found is not None else None

        return await self._db.run(read)

    async def list_for_user(self, tenant: str, user: str, limit: int = 20) -> list[dict[str, Any]]:
        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = conn.execute(
                "SELECT * FROM session_archive WHERE tenant = ? AND user_id = ?"
                " ORDER BY ended_at DESC LIMIT ?",
                (tenant, user, limit),
            ).fetchall()
            return [_record(row, full=False) for row in rows]

        return await self._db.run(read)


def _record(row: sqlite3.Row, *, full: bool) -> dict[str, Any]:
    record: dict[str, Any] = {
        "session_id": row["session_id"],
        "tenant": row["tenant"],
        "user": row["user_id"],
        "created_at": row["created_at"],
        "ended_at": row["ended_at"],
        "reason": row["reason"],
        "turn_count": row["turn_count"],
        "slots": json.loads(row["slots"]),
        "summary": row["summary"],
    }
    if full:
        record["transcript"] = json.loads(row["transcript"])
        record["short_term"] = json.loads(row["short_term"])
    return record
