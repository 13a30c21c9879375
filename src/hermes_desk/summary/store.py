"""Summaries as they are kept: one per (session, kind), next to the session archive.

The after-contact summary is written when the session ends (closed or expired) and replaced when
the agent confirms an edited one; a transfer summary is written when it is asked for. Both live
in the service's SQLite database (migrations namespace ``summaries``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hermes_desk.storage import Migration, SqliteDatabase, apply_migrations
from hermes_desk.summary.facts import SummaryKind

__all__ = ["MIGRATIONS", "SqliteSummaryStore", "Summary"]

MIGRATIONS: Sequence[Migration] = (
    Migration(
        "0001_contact_summaries",
        """
        CREATE TABLE IF NOT EXISTS contact_summaries (
            session_id   TEXT NOT NULL,
            kind         TEXT NOT NULL,
            tenant       TEXT NOT NULL,
            user_id      TEXT NOT NULL,
            language     TEXT NOT NULL,
            text         TEXT NOT NULL,
            source       TEXT NOT NULL,
            proposed     TEXT NOT NULL,
            disposition  TEXT NOT NULL,
            choices      TEXT NOT NULL,
            facts        TEXT NOT NULL,
            confirmed    INTEGER NOT NULL DEFAULT 0,
            confirmed_by TEXT,
            confirmed_at REAL,
            written_at   REAL NOT NULL,
            PRIMARY KEY (session_id, kind)
        );
        """,
    ),
)


@dataclass(frozen=True, slots=True)
class Summary:
    """A contact's summary and disposition.

    Attributes:
        source: who wrote ``text``: ``offline`` or the model chain link (``model:<link>``),
            ``agent`` once the agent edited it.
        proposed: the disposition the service proposed; ``disposition`` the one chosen (the
            proposed one until the agent confirms another).
        choices: the pack's dispositions, id → label in the summary's language.
        facts: what the summary was written from (masked).
    """

    session_id: str
    kind: SummaryKind
    tenant: str
    user: str
    language: str
    text: str
    source: str
    proposed: str
    disposition: str
    choices: dict[str, str]
    facts: dict[str, Any] = field(default_factory=dict)
    confirmed: bool = False
    confirmed_by: str | None = None
    confirmed_at: float | None = None
    written_at: float = 0.0

    def confirm(self, *, agent_id: str, text: str, disposition: str, at: float) -> Summary:
        edited = text != self.text
        return replace(
            self,
            text=text,
            source="agent" if edited else self.source,
            disposition=disposition,
            confirmed=True,
            confirmed_by=agent_id,
            confirmed_at=at,
        )

    def to_dict(self) -> dict[str, Any]:
        """The API's view."""
        return {
            "session_id": self.session_id,
            "kind": self.kind,
            "language": self.language,
            "text": self.text,
            "source": self.source,
            "disposition": {
                "proposed": self.proposed,
                "chosen": self.disposition,
                "choices": list(self.choices),
                "labels": dict(self.choices),
            },
            "confirmed": self.confirmed,
            "confirmed_by": self.confirmed_by,
            "confirmed_at": self.confirmed_at,
            "facts": self.facts,
        }


class SqliteSummaryStore:
    """Summaries in the service's SQLite database."""

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db
        db.call(lambda conn: apply_migrations(conn, "summaries", MIGRATIONS))

    async def put(self, summary: Summary, *, keep_confirmed: bool = False) -> Summary:
        """Store ``summary``; with ``keep_confirmed``, a confirmed one already there stays (and
        is returned)."""
        row = (
            summary.session_id,
            summary.kind,
            summary.tenant,
            summary.user,
            summary.language,
            summary.text,
            summary.source,
            summary.proposed,
            summary.disposition,
            json.dumps(summary.choices, ensure_ascii=False),
            json.dumps(summary.facts, ensure_ascii=False, default=str),
            int(summary.confirmed),
            summary.confirmed_by,
            summary.confirmed_at,
            summary.written_at,
        )
        guard = " WHERE contact_summaries.confirmed = 0" if keep_confirmed else ""

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO contact_summaries (session_id, kind, tenant, user_id, language, text,"
                " source, proposed, disposition, choices, facts, confirmed, confirmed_by,"
                " confirmed_at, written_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (session_id, kind) DO UPDATE SET language = excluded.language,"
                " text = excluded.text, source = excluded.source, proposed = excluded.proposed,"
                " disposition = excluded.disposition, choices = excluded.choices,"
                " facts = excluded.facts, confirmed = excluded.confirmed,"
                " confirmed_by = excluded.confirmed_by, confirmed_at = excluded.confirmed_at,"
                f" written_at = excluded.written_at{guard}",
                row,
            )

        await self._db.run(write, transaction=True)
        stored = await self.get(summary.tenant, summary.user, summary.session_id, summary.kind)
        return stored or summary

    async def get(
        self, tenant: str, user: str, session_id: str, kind: SummaryKind
    ) -> Summary | None:
        """The stored summary, only for its owner."""

        def read(conn: sqlite3.Connection) -> sqlite3.Row | None:
            found: sqlite3.Row | None = conn.execute(
                "SELECT * FROM contact_summaries WHERE session_id = ? AND kind = ?"
                " AND tenant = ? AND user_id = ?",
                (session_id, kind, tenant, user),
            ).fetchone()
            return found

        row = await self._db.run(read)
        return _summary(row) if row is not None else None


def _summary(row: sqlite3.Row) -> Summary:
    return Summary(
        session_id=row["session_id"],
        kind=row["kind"],
        tenant=row["tenant"],
        user=row["user_id"],
        language=row["language"],
        text=row["text"],
        source=row["source"],
        proposed=row["proposed"],
        disposition=row["disposition"],
        choices=dict(json.loads(row["choices"])),
        facts=json.loads(row["facts"]),
        confirmed=bool(row["confirmed"]),
        confirmed_by=row["confirmed_by"],
        confirmed_at=row["confirmed_at"],
        written_at=row["written_at"],
    )
