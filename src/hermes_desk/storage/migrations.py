"""Ordered, named, idempotent schema migrations, one namespace per module."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Migration", "apply_migrations"]


@dataclass(frozen=True)
class Migration:
    name: str
    sql: str


def apply_migrations(
    conn: sqlite3.Connection, namespace: str, migrations: Sequence[Migration]
) -> list[str]:
    """Apply the migrations of ``namespace`` not yet applied, in order. Returns their names."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " namespace TEXT NOT NULL, name TEXT NOT NULL, applied_at REAL NOT NULL,"
        " PRIMARY KEY (namespace, name))"
    )
    done = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM schema_migrations WHERE namespace = ?", (namespace,)
        )
    }
    applied: list[str] = []
    for migration in migrations:
        if migration.name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(migration.sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (namespace, name, applied_at) VALUES (?, ?, ?)",
                (namespace, migration.name, time.time()),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(migration.name)
    return applied


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
