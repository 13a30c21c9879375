import threading
from pathlib import Path

import pytest

from hermes_desk.storage import Migration, SqliteDatabase, apply_migrations, open_sqlite

MIGRATIONS = [
    Migration("001_items", "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"),
    Migration(
        "002_log",
        """CREATE TABLE log (item_id INTEGER, note TEXT);
CREATE TRIGGER items_log AFTER INSERT ON items BEGIN
  INSERT INTO log (item_id, note) VALUES (new.id, 'added');
END;""",
    ),
]


def test_open_sqlite_uses_wal_and_busy_timeout(tmp_db_path: Path) -> None:
    conn = open_sqlite(tmp_db_path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    conn.close()


def test_migrations_apply_once_in_order(tmp_db_path: Path) -> None:
    conn = open_sqlite(tmp_db_path)
    assert apply_migrations(conn, "demo", MIGRATIONS) == ["001_items", "002_log"]
    assert apply_migrations(conn, "demo", MIGRATIONS) == []
    conn.execute("INSERT INTO items (name) VALUES ('a')")
    assert conn.execute("SELECT note FROM log").fetchone()[0] == "added"
    conn.close()


def test_failed_migration_rolls_back_and_is_not_recorded(tmp_db_path: Path) -> None:
    conn = open_sqlite(tmp_db_path)
    broken = [Migration("001_bad", "CREATE TABLE ok (x);\nCREATE TABLE ok (x);")]
    with pytest.raises(Exception, match="already exists"):
        apply_migrations(conn, "bad", broken)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "ok" not in tables
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == 0
    conn.close()


def test_transaction_rolls_back_on_error(tmp_db_path: Path) -> None:
    db = SqliteDatabase(tmp_db_path)
    db.call(lambda c: apply_migrations(c, "demo", MIGRATIONS))

    def fail(conn):  # type: ignore[no-untyped-def]
        conn.execute("INSERT INTO items (name) VALUES ('x')")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        db.transaction(fail)
    assert db.call(lambda c: c.execute("SELECT COUNT(*) FROM items").fetchone()[0]) == 0
    db.close()


def test_concurrent_writers_do_not_lose_rows(tmp_db_path: Path) -> None:
    db = SqliteDatabase(tmp_db_path)
    db.call(lambda c: apply_migrations(c, "demo", MIGRATIONS))

    def writer(n: int) -> None:
        for i in range(50):
            db.transaction(
                lambda c, i=i: c.execute("INSERT INTO items (name) VALUES (?)", (f"{n}-{i}",))
            )

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert db.call(lambda c: c.execute("SELECT COUNT(*) FROM items").fetchone()[0]) == 200
    db.close()


@pytest.mark.anyio
async def test_async_run_goes_through_a_worker_thread(tmp_db_path: Path) -> None:
    db = SqliteDatabase(tmp_db_path)
    await db.run(lambda c: apply_migrations(c, "demo", MIGRATIONS))
    caller = threading.get_ident()
    seen = await db.run(lambda c: threading.get_ident())
    assert seen != caller
    db.close()
