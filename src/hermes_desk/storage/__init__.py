"""What the stores share: SQLite (WAL, busy timeout, async-safe access), the migration runner of
SQLite and PostgreSQL, and the Redis connection preamble (``storage.redis``, imported by the
Redis stores only)."""

from hermes_desk.storage.migrations import Migration, apply_migrations, apply_postgres_migrations
from hermes_desk.storage.sqlite import SqliteDatabase, open_sqlite
from hermes_desk.storage.worker import SqliteWorker

__all__ = [
    "Migration",
    "SqliteDatabase",
    "SqliteWorker",
    "apply_migrations",
    "apply_postgres_migrations",
    "open_sqlite",
]
