"""Proposals in SQLite (the embedded default): they survive a restart or a kill -9.

A status change is ``UPDATE … WHERE id = ? AND status = ?`` (and, for a decision or an
amendment, the revision read): the row count says who won.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from hermes_desk.actions.proposal import Proposal, ProposalStatus, ran_at
from hermes_desk.storage import Migration, SqliteDatabase, apply_migrations

__all__ = ["MIGRATIONS", "SqliteProposalStore"]

MIGRATIONS: Sequence[Migration] = (
    Migration(
        "0001_proposals",
        """
        CREATE TABLE IF NOT EXISTS proposals (
            id          TEXT PRIMARY KEY,
            session_id  TEXT,
            status      TEXT NOT NULL,
            expires_at  REAL NOT NULL,
            created_at  REAL NOT NULL,
            data        TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS proposals_session ON proposals (session_id, created_at);
        CREATE INDEX IF NOT EXISTS proposals_due ON proposals (status, expires_at);
        """,
    ),
    # A customer's writes that ran, in any session: what an earlier contact did for them. The
    # columns are the stored proposal's own fields (a write runs once; they never change after).
    Migration(
        "0002_proposals_customer",
        """
        ALTER TABLE proposals ADD COLUMN customer TEXT;
        ALTER TABLE proposals ADD COLUMN ran_at REAL;
        UPDATE proposals
           SET customer = json_extract(data, '$.tenant') || '/' || json_extract(data, '$.user'),
               ran_at = coalesce(json_extract(data, '$.executed_at'),
                                 json_extract(data, '$.decided_at'), created_at)
         WHERE status = 'executed';
        CREATE INDEX IF NOT EXISTS proposals_customer ON proposals (customer, ran_at)
            WHERE customer IS NOT NULL;
        """,
    ),
)


class SqliteProposalStore:
    """Proposals in a SQLite file of their own (``<data_dir>/actions.db``)."""

    def __init__(self, path: str | Path) -> None:
        self._db = SqliteDatabase(path)
        self._db.call(lambda conn: apply_migrations(conn, "actions", MIGRATIONS))

    async def add(self, proposal: Proposal) -> bool:
        row = (
            proposal.id,
            proposal.session_id,
            proposal.status,
            proposal.expires_at,
            proposal.created_at,
            json.dumps(proposal.to_dict(), ensure_ascii=False),
        )

        def insert(conn: sqlite3.Connection) -> int:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO proposals "
                "(id, session_id, status, expires_at, created_at, data) VALUES (?, ?, ?, ?, ?, ?)",
                row,
            )
            return cursor.rowcount

        return await self._db.run(insert) == 1

    async def get(self, proposal_id: str) -> Proposal | None:
        rows = await self._db.run(
            lambda conn: conn.execute(
                "SELECT data FROM proposals WHERE id = ?", (proposal_id,)
            ).fetchall()
        )
        return _proposals(rows)[0] if rows else None

    async def replace(
        self, proposal: Proposal, *, expected: ProposalStatus, revision: int | None = None
    ) -> bool:
        data = json.dumps(proposal.to_dict(), ensure_ascii=False)

        ran = proposal.status == "executed"
        customer = f"{proposal.tenant}/{proposal.user}" if ran else None
        finished = ran_at(proposal) if ran else None

        def update(conn: sqlite3.Connection) -> int:
            if revision is None:
                cursor = conn.execute(
                    "UPDATE proposals SET status = ?, data = ?, customer = ?, ran_at = ? "
                    "WHERE id = ? AND status = ?",
                    (proposal.status, data, customer, finished, proposal.id, expected),
                )
            else:  # a proposal stored before revisions were kept is revision 0
                cursor = conn.execute(
                    "UPDATE proposals SET status = ?, data = ?, customer = ?, ran_at = ? "
                    "WHERE id = ? AND status = ? "
                    "AND coalesce(json_extract(data, '$.revision'), 0) = ?",
                    (proposal.status, data, customer, finished, proposal.id, expected, revision),
                )
            return cursor.rowcount

        return await self._db.run(update) == 1

    async def for_session(self, session_id: str) -> list[Proposal]:
        rows = await self._db.read(
            lambda conn: conn.execute(
                "SELECT data FROM proposals WHERE session_id = ? ORDER BY created_at",
                (session_id,),
            ).fetchall()
        )
        return _proposals(rows)

    async def executed_for(
        self, tenant: str, user: str, *, since: float, limit: int = 20
    ) -> list[Proposal]:
        rows = await self._db.read(
            lambda conn: conn.execute(
                "SELECT data FROM proposals WHERE customer = ? AND ran_at >= ? "
                "ORDER BY ran_at DESC LIMIT ?",
                (f"{tenant}/{user}", since, limit),
            ).fetchall()
        )
        return _proposals(rows)

    async def due(self, now: float, limit: int = 100) -> list[Proposal]:
        rows = await self._db.run(
            lambda conn: conn.execute(
                "SELECT data FROM proposals WHERE status = 'proposed' AND expires_at <= ? "
                "ORDER BY expires_at LIMIT ?",
                (now, limit),
            ).fetchall()
        )
        return _proposals(rows)

    async def executing(self, limit: int = 100) -> list[Proposal]:
        rows = await self._db.run(
            lambda conn: conn.execute(
                "SELECT data FROM proposals WHERE status = 'executing' "
                "ORDER BY json_extract(data, '$.decided_at') LIMIT ?",
                (limit,),
            ).fetchall()
        )
        return _proposals(rows)

    async def ping(self) -> None:
        await self._db.ping()

    async def aclose(self) -> None:
        """Close the database. Idempotent."""
        self._db.close()


def _proposals(rows: Sequence[sqlite3.Row]) -> list[Proposal]:
    return [Proposal.from_dict(json.loads(row["data"])) for row in rows]
