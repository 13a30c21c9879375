"""Memory on SQLite: WAL, busy timeout, upserts, every change in one IMMEDIATE transaction.

All methods are ``async`` and run their SQL off the event loop, so it never waits on disk: reads
through :meth:`hermes_desk.storage.SqliteDatabase.run`, writes and changes on the store's
:class:`~hermes_desk.memory.sqlite_writer.GroupCommitWriter` thread (one ``BEGIN IMMEDIATE``
transaction per write, or per group of writes that queued up together).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from pathlib import Path

from hermes_desk.errors import NotFoundError
from hermes_desk.memory.fact import Fact, FactStatus, LongTermTag, TagStatus, canonical_json
from hermes_desk.memory.sqlite_writer import GroupCommitWriter
from hermes_desk.memory.store import (
    FACT_COLUMNS,
    ChangePlan,
    SweepPlan,
    WritePlan,
    fact_from_row,
    fact_params,
    facts_and_tags_sql,
    tag_from_row,
)
from hermes_desk.memory.transitions import AddTag, Delete, Outcome, Save
from hermes_desk.storage import Migration, SqliteDatabase, apply_migrations

__all__ = ["MIGRATIONS", "SqliteMemoryStore"]

MIGRATIONS = (
    Migration("0001_facts_and_tags", facts_and_tags_sql(json_type="TEXT", float_type="REAL")),
)

_COLUMNS = ", ".join(FACT_COLUMNS)
_UPSERT = (
    f"INSERT INTO memory_facts ({_COLUMNS}) VALUES ({', '.join('?' * len(FACT_COLUMNS))}) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in FACT_COLUMNS if c != "id")
)
_ADD_TAG = (
    "INSERT INTO memory_tags (tenant, user_id, tag, value, status, source_fact_id, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, user_id, tag) DO NOTHING"
)
_ACTIVE_OF_KEY = (
    f"SELECT {_COLUMNS} FROM memory_facts"
    " WHERE tenant = ? AND user_id = ? AND key = ? AND status = 'active'"
)


def _apply(conn: sqlite3.Connection, outcome: Outcome) -> Outcome:
    for op in outcome.ops:
        if isinstance(op, Save):
            conn.execute(_UPSERT, fact_params(op.fact))
        elif isinstance(op, Delete):
            conn.execute("DELETE FROM memory_facts WHERE id = ?", (op.fact_id,))
        elif isinstance(op, AddTag):
            t = op.tag
            conn.execute(
                _ADD_TAG,
                (t.tenant, t.user_id, t.tag, canonical_json(t.value), t.status.value,
                 t.source_fact_id, t.created_at),
            )  # fmt: skip
    return outcome


def _active_of_key(conn: sqlite3.Connection, tenant: str, user_id: str, key: str) -> Fact | None:
    row = conn.execute(_ACTIVE_OF_KEY, (tenant, user_id, key)).fetchone()
    return fact_from_row(row) if row else None


class SqliteMemoryStore:
    """The embedded memory store. ``SqliteMemoryStore.open(path)`` owns its database."""

    def __init__(self, db: SqliteDatabase, *, owns_db: bool = False) -> None:
        self._db = db
        self._owns_db = owns_db
        self._writer = GroupCommitWriter(db)
        db.call(lambda conn: apply_migrations(conn, "memory", MIGRATIONS))

    @classmethod
    def open(cls, path: str | Path) -> SqliteMemoryStore:
        return cls(SqliteDatabase(path), owns_db=True)

    @property
    def database(self) -> SqliteDatabase:
        return self._db

    async def write(self, tenant: str, user_id: str, key: str, plan: WritePlan) -> Outcome:
        def tx(conn: sqlite3.Connection) -> Outcome:
            return _apply(conn, plan(_active_of_key(conn, tenant, user_id, key)))

        return await self._writer.run(tx)

    async def change(self, tenant: str, user_id: str, fact_id: str, plan: ChangePlan) -> Outcome:
        def tx(conn: sqlite3.Connection) -> Outcome:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM memory_facts WHERE id = ? AND tenant = ? AND user_id = ?",
                (fact_id, tenant, user_id),
            ).fetchone()
            if row is None:
                raise NotFoundError(f"no memory fact {fact_id!r}", fact_id=fact_id)
            fact = fact_from_row(row)
            current = _active_of_key(conn, tenant, user_id, fact.key)
            if current is not None and current.id == fact.id:
                current = None
            return _apply(conn, plan(fact, current))

        return await self._writer.run(tx)

    async def facts(
        self,
        tenant: str,
        user_id: str,
        statuses: Collection[FactStatus] | None = None,
        *,
        limit: int = 1000,
    ) -> list[Fact]:
        sql = f"SELECT {_COLUMNS} FROM memory_facts WHERE tenant = ? AND user_id = ?"
        params: list[object] = [tenant, user_id]
        if statuses is not None:
            wanted = [FactStatus(s).value for s in statuses]
            sql += f" AND status IN ({', '.join('?' * len(wanted))})"
            params.extend(wanted)
        sql += " ORDER BY updated_at DESC LIMIT ?"
        params.append(limit)

        def read(conn: sqlite3.Connection) -> list[Fact]:
            return [fact_from_row(r) for r in conn.execute(sql, params)]

        return await self._db.read(read)

    async def pending(self, *, limit: int = 500) -> list[Fact]:
        def read(conn: sqlite3.Connection) -> list[Fact]:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memory_facts WHERE status = 'pending'"
                " ORDER BY created_at LIMIT ?",
                (limit,),
            )
            return [fact_from_row(r) for r in rows]

        return await self._db.run(read)

    async def sweep(self, now: float, plan: SweepPlan, *, limit: int = 1000) -> list[Outcome]:
        def tx(conn: sqlite3.Connection) -> list[Outcome]:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memory_facts"
                " WHERE status = 'active' AND valid_until <= ? ORDER BY valid_until LIMIT ?",
                (now, limit),
            ).fetchall()
            done: list[Outcome] = []
            for row in rows:
                outcome = plan(fact_from_row(row))
                if outcome is not None:
                    done.append(_apply(conn, outcome))
            return done

        return await self._db.run(tx, transaction=True)

    async def tags(self, tenant: str, user_id: str) -> list[LongTermTag]:
        def read(conn: sqlite3.Connection) -> list[LongTermTag]:
            rows = conn.execute(
                "SELECT * FROM memory_tags WHERE tenant = ? AND user_id = ? ORDER BY tag",
                (tenant, user_id),
            )
            return [tag_from_row(r) for r in rows]

        return await self._db.run(read)

    async def review_tag(
        self, tenant: str, user_id: str, tag: str, *, approve: bool, now: float
    ) -> LongTermTag | None:
        def tx(conn: sqlite3.Connection) -> LongTermTag | None:
            key = (tenant, user_id, tag)
            where = " WHERE tenant = ? AND user_id = ? AND tag = ?"
            if conn.execute("SELECT 1 FROM memory_tags" + where, key).fetchone() is None:
                raise NotFoundError(f"no long-term tag {tag!r}", tag=tag)
            if not approve:
                conn.execute("DELETE FROM memory_tags" + where, key)
                return None
            conn.execute(
                "UPDATE memory_tags SET status = ?, reviewed_at = ?" + where,
                (TagStatus.APPROVED.value, now, *key),
            )
            return tag_from_row(conn.execute("SELECT * FROM memory_tags" + where, key).fetchone())

        return await self._db.run(tx, transaction=True)

    async def ping(self) -> None:
        await self._db.ping()

    async def aclose(self) -> None:
        """Finish queued writes, stop the writer thread, close the database if it owns it.
        Idempotent."""
        await self._writer.aclose()
        if self._owns_db:
            self._owns_db = False
            self._db.close()
