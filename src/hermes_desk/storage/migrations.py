"""Ordered, named, idempotent schema migrations, one namespace per store, for SQLite and PostgreSQL.

Each store lists its schema as :class:`Migration` records (its only schema source) and hands them
to the runner of its dialect: :func:`apply_migrations` on a :mod:`sqlite3` connection,
:func:`apply_postgres_migrations` on a psycopg ``AsyncConnection`` (autocommit). Both keep the
same ``schema_migrations`` table — ``(namespace, name, applied_at)`` — apply the migrations of the
namespace not yet recorded, in list order, each in its own transaction with its record, and
return the names they applied. PostgreSQL takes an advisory lock first, so several workers
starting at once migrate once.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_desk.errors import ConfigError

__all__ = ["Migration", "apply_migrations", "apply_postgres_migrations"]


@dataclass(frozen=True)
class Migration:
    """One schema step. ``name`` is recorded once applied; never change a released one's SQL."""

    name: str
    sql: str


_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " namespace TEXT NOT NULL, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL,"
    " PRIMARY KEY (namespace, name))"
)
_DONE = "SELECT name FROM schema_migrations WHERE namespace = {p}"
_RECORD = "INSERT INTO schema_migrations (namespace, name, applied_at) VALUES ({p}, {p}, {p})"
_PG_LOCK = 0x68646D67  # "hdmg": one migrating worker at a time


def _todo(
    namespace: str, migrations: Sequence[Migration], done: Collection[str]
) -> list[Migration]:
    """The migrations not yet applied, in order; a list naming one migration twice is refused."""
    names = [m.name for m in migrations]
    if len(set(names)) != len(names):
        raise ConfigError(f"migrations of {namespace!r} repeat a name: {names}")
    return [m for m in migrations if m.name not in done]


def apply_migrations(
    conn: sqlite3.Connection, namespace: str, migrations: Sequence[Migration]
) -> list[str]:
    """Apply the SQLite migrations of ``namespace`` not yet applied, in order; their names.

    ``conn`` is in autocommit mode (``isolation_level=None``, as
    :func:`~hermes_desk.storage.open_sqlite` opens it): each migration runs in its own
    ``BEGIN IMMEDIATE … COMMIT`` with its record, and a failing one is rolled back whole.
    """
    conn.execute(_TABLE)
    done = {row[0] for row in conn.execute(_DONE.format(p="?"), (namespace,))}
    applied: list[str] = []
    for migration in _todo(namespace, migrations, done):
        conn.execute("BEGIN IMMEDIATE")
        try:
            if (
                conn.execute(  # another process may have applied it since we looked
                    _DONE.format(p="?") + " AND name = ?", (namespace, migration.name)
                ).fetchone()
                is None
            ):
                for statement in _statements(migration.sql):
                    conn.execute(statement)
                conn.execute(_RECORD.format(p="?"), (namespace, migration.name, time.time()))
                applied.append(migration.name)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return applied


async def apply_postgres_migrations(
    conn: Any, namespace: str, migrations: Sequence[Migration]
) -> list[str]:
    """Apply the PostgreSQL migrations of ``namespace`` not yet applied, in order; their names.

    ``conn`` is a psycopg ``AsyncConnection`` in autocommit mode. Everything runs in one
    transaction under an advisory lock: all the pending migrations apply, or none.
    """
    applied: list[str] = []
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK,))
        await conn.execute(_TABLE)
        cur = await conn.execute(_DONE.format(p="%s"), (namespace,))
        done = {_first(row) for row in await cur.fetchall()}
        for migration in _todo(namespace, migrations, done):
            await conn.execute(migration.sql)  # a whole script: no parameters, $$ bodies intact
            await conn.execute(_RECORD.format(p="%s"), (namespace, migration.name, time.time()))
            applied.append(migration.name)
    return applied


def _first(row: Any) -> str:
    """The first column of a row from any psycopg row factory (tuple or dict)."""
    return str(next(iter(row.values())) if isinstance(row, dict) else row[0])


def _statements(sql: str) -> list[str]:
    """Split a script into complete statements (triggers with inner ``;`` stay whole)."""
    statements: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
