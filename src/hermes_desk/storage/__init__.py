"""The one place that opens SQLite: WAL, busy timeout, migrations, async-safe access."""

from hermes_desk.storage.migrations import Migration, apply_migrations
from hermes_desk.storage.sqlite import SqliteDatabase, open_sqlite
from hermes_desk.storage.worker import SqliteWorker

__all__ = ["Migration", "SqliteDatabase", "SqliteWorker", "apply_migrations", "open_sqlite"]
