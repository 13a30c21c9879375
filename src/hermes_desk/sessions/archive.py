"""The session archive: what a conversation leaves behind when it closes or expires (spec S1).

One row per session in SQL: owner, times, why it ended, the transcript (JSON), the final slots
(dialogue state), the short-term facts and a summary. Writing is idempotent (the first archive
of a session wins), so a retried hook never duplicates a row.

The session manager writes the row *before* it retires the session, marked pending, and settles
it once the destroy hooks (short-term facts to memory, …) have run. A process killed in between
leaves a pending row: :meth:`SessionArchive.unsettled` hands it back, with the session as it
ended, so the hooks run after the restart instead of never. A pending row is replaced by a later
pending write of the same session (a close that did not take effect, then the real one).

Personal numbers are masked in everything the archive keeps (spec D3): the transcript, the
slots, the short-term facts and the summary go through the tenant's masker on the way in, so
the archive holds no clear phone, ID-card or bank-card number or e-mail address even when a
caller hands it a session that was never masked.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from hermes_desk.config import SessionSettings
from hermes_desk.masking import Masking
from hermes_desk.sessions.session import Session, Turn
from hermes_desk.storage import Migration, SqliteDatabase, apply_migrations

__all__ = [
    "MIGRATIONS",
    "SessionArchive",
    "SqliteSessionArchive",
    "archive_insert",
    "archive_row",
    "build_session_archive",
    "record_of",
    "session_of",
    "summarize",
]

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
    Migration(
        "0002_session_archive_hooks",
        # Rows written before this migration had their hooks run with them: settled.
        "ALTER TABLE session_archive ADD COLUMN hooks_done INTEGER NOT NULL DEFAULT 1;",
    ),
)


class SessionArchive(Protocol):
    """Where closed and expired sessions are kept."""

    async def archive(
        self, session: Session, reason: str, *, ended_at: float, pending: bool = False
    ) -> bool:
        """Store ``session``; False when it was already archived (and settled). ``pending``: its
        destroy hooks have yet to run (:meth:`settle` when they have)."""
        ...

    async def settle(self, session_id: str) -> None:
        """Record that the session's destroy hooks ran."""
        ...

    async def discard(self, session_id: str) -> None:
        """Drop the session's pending row (its end did not take effect here)."""
        ...

    async def unsettled(self, limit: int = 1000) -> list[tuple[Session, str]]:
        """Archived sessions whose hooks have not run, as they ended, with why they ended."""
        ...

    async def get(self, tenant: str, user: str, session_id: str) -> dict[str, Any] | None:
        """The archived record, only for its owner."""
        ...

    async def list_for_user(self, tenant: str, user: str, limit: int = 20) -> list[dict[str, Any]]:
        """The user's archived sessions, newest first, without transcripts."""
        ...

    async def session(self, tenant: str, user: str, session_id: str) -> Session | None:
        """The archived session as it ended (masked), only for its owner."""
        ...

    async def set_summary(self, session_id: str, summary: str) -> None:
        """Replace the archived summary (the after-contact summary, once written or confirmed)."""
        ...

    async def ping(self) -> None:
        """Return when the backend answers; raise (``BackendUnavailableError`` …) otherwise."""
        ...

    async def aclose(self) -> None:
        """Release what the archive holds. Idempotent."""
        ...


def build_session_archive(
    settings: SessionSettings, *, database: SqliteDatabase, masking: Masking
) -> SessionArchive:
    """The archive ``settings.archive`` names: the service's SQLite database (default) or
    PostgreSQL (several workers on several machines)."""
    if settings.archive == "postgres":
        from hermes_desk.sessions.postgres_archive import PostgresSessionArchive

        return PostgresSessionArchive(settings.archive_postgres_dsn, masking=masking)
    return SqliteSessionArchive(database, masking=masking)


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


def archive_row(
    session: Session, reason: str, ended_at: float, pending: bool, masking: Masking
) -> tuple[Any, ...]:
    """The archive row of ``session``, masked, in the columns of :func:`archive_insert`."""
    mask = masking.for_tenant(session.tenant)
    return (
        session.id,
        session.tenant,
        session.user,
        session.created_at,
        ended_at,
        reason,
        len(session.turns),
        _dumps(mask.data([t.to_dict() for t in session.turns])),
        _dumps(mask.data(session.slots)),
        _dumps(mask.data(session.short_term)),
        mask.text(session.summary or summarize(session)),
        0 if pending else 1,
    )


def archive_insert(placeholder: str, pending: bool) -> str:
    """The idempotent insert, for SQLite (``?``) and PostgreSQL (``%s``): the first settled
    archive of a session wins; a pending row is replaced by a later pending write."""
    on_conflict = (
        "DO UPDATE SET ended_at = excluded.ended_at, reason = excluded.reason,"
        " turn_count = excluded.turn_count, transcript = excluded.transcript,"
        " slots = excluded.slots, short_term = excluded.short_term,"
        " summary = excluded.summary WHERE session_archive.hooks_done = 0"
        if pending
        else "DO NOTHING"
    )
    values = ", ".join([placeholder] * 12)
    return (
        "INSERT INTO session_archive (session_id, tenant, user_id, created_at, ended_at,"
        " reason, turn_count, transcript, slots, short_term, summary, hooks_done)"
        f" VALUES ({values}) ON CONFLICT (session_id) {on_conflict}"
    )


class SqliteSessionArchive:
    """The archive in the service's SQLite database (migrations namespace ``sessions``)."""

    def __init__(self, db: SqliteDatabase, *, masking: Masking | None = None) -> None:
        self._db = db
        self._masking = masking or Masking()
        db.call(lambda conn: apply_migrations(conn, "sessions", MIGRATIONS))

    async def archive(
        self, session: Session, reason: str, *, ended_at: float, pending: bool = False
    ) -> bool:
        row = archive_row(session, reason, ended_at, pending, self._masking)

        def write(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(archive_insert("?", pending), row)
            return cursor.rowcount == 1

        return await self._db.run(write, transaction=True)

    async def settle(self, session_id: str) -> None:
        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE session_archive SET hooks_done = 1 WHERE session_id = ?", (session_id,)
            )

        await self._db.run(write, transaction=True)

    async def discard(self, session_id: str) -> None:
        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "DELETE FROM session_archive WHERE session_id = ? AND hooks_done = 0",
                (session_id,),
            )

        await self._db.run(write, transaction=True)

    async def unsettled(self, limit: int = 1000) -> list[tuple[Session, str]]:
        def read(conn: sqlite3.Connection) -> list[tuple[Session, str]]:
            rows = conn.execute(
                "SELECT * FROM session_archive WHERE hooks_done = 0 ORDER BY ended_at LIMIT ?",
                (limit,),
            ).fetchall()
            return [(session_of(row), str(row["reason"])) for row in rows]

        return await self._db.run(read)

    async def get(self, tenant: str, user: str, session_id: str) -> dict[str, Any] | None:
        def read(conn: sqlite3.Connection) -> dict[str, Any] | None:
            found = conn.execute(
                "SELECT * FROM session_archive WHERE session_id = ? AND tenant = ? AND user_id = ?",
                (session_id, tenant, user),
            ).fetchone()
            return record_of(found, full=True) if found is not None else None

        return await self._db.run(read)

    async def list_for_user(self, tenant: str, user: str, limit: int = 20) -> list[dict[str, Any]]:
        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = conn.execute(
                "SELECT * FROM session_archive WHERE tenant = ? AND user_id = ?"
                " ORDER BY ended_at DESC LIMIT ?",
                (tenant, user, limit),
            ).fetchall()
            return [record_of(row, full=False) for row in rows]

        return await self._db.run(read)

    async def session(self, tenant: str, user: str, session_id: str) -> Session | None:
        def read(conn: sqlite3.Connection) -> Session | None:
            found = conn.execute(
                "SELECT * FROM session_archive WHERE session_id = ? AND tenant = ? AND user_id = ?",
                (session_id, tenant, user),
            ).fetchone()
            return session_of(found) if found is not None else None

        return await self._db.run(read)

    async def set_summary(self, session_id: str, summary: str) -> None:
        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE session_archive SET summary = ? WHERE session_id = ?",
                (summary, session_id),
            )

        tenant = await self._db.run(
            lambda conn: conn.execute(
                "SELECT tenant FROM session_archive WHERE session_id = ?", (session_id,)
            ).fetchone()
        )
        if tenant is None:
            return
        summary = self._masking.for_tenant(str(tenant["tenant"])).text(summary)
        await self._db.run(write, transaction=True)

    async def ping(self) -> None:
        await self._db.ping()

    async def aclose(self) -> None:
        """Nothing to release: the database is the service's, closed with it."""


def record_of(row: Mapping[str, Any] | sqlite3.Row, *, full: bool) -> dict[str, Any]:
    """An archive row as the API shows it (transcript and short-term facts when ``full``)."""
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


def session_of(row: Mapping[str, Any] | sqlite3.Row) -> Session:
    """The session as it ended, from its archive row."""
    return Session(
        id=row["session_id"],
        tenant=row["tenant"],
        user=row["user_id"],
        created_at=row["created_at"],
        last_active=row["ended_at"],
        status="closed",
        turns=[Turn.from_dict(t) for t in json.loads(row["transcript"])],
        slots=json.loads(row["slots"]),
        short_term=json.loads(row["short_term"]),
        summary=row["summary"],
        closed_at=row["ended_at"],
    )
