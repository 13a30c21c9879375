import sqlite3
import threading
from pathlib import Path

import pytest

from hermes_desk.errors import BackendUnavailableError, ConfigError, MisuseError
from hermes_desk.storage import (
    Migration,
    SqliteDatabase,
    apply_migrations,
    apply_postgres_migrations,
    open_sqlite,
)
from hermes_desk.storage.redis import RedisConnection

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


async def _one_item(path: Path) -> SqliteDatabase:
    """A database with the demo migrations and one item."""
    db = SqliteDatabase(path)
    await db.run(lambda c: apply_migrations(c, "demo", MIGRATIONS))
    await db.run(lambda c: c.execute("INSERT INTO items (name) VALUES ('a')"), transaction=True)
    return db


@pytest.mark.anyio
async def test_a_read_runs_at_once_beside_a_write_in_progress_and_sees_the_last_commit(
    tmp_db_path: Path,
) -> None:
    db = await _one_item(tmp_db_path)
    caller = threading.get_ident()
    assert await db.read(lambda c: threading.get_ident()) == caller

    held, release = threading.Event(), threading.Event()

    def write_slowly(conn: sqlite3.Connection) -> None:  # a write in the middle of its transaction
        conn.execute("INSERT INTO items (name) VALUES ('b')")
        held.set()
        release.wait(10)

    def count(c: sqlite3.Connection) -> tuple[int, int]:
        return threading.get_ident(), c.execute("SELECT count(*) FROM items").fetchone()[0]

    holder = threading.Thread(target=db.transaction, args=(write_slowly,))
    holder.start()
    held.wait(10)
    # The database's connection is busy: the read goes on the read connection, at once, and
    # reads the last commit (not the write in progress).
    assert await db.read(count) == (caller, 1)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        await db.read(lambda c: c.execute("DELETE FROM items"))
    release.set()
    holder.join()
    assert await db.read(count) == (caller, 2), "a committed write is seen"
    db.close()


@pytest.mark.anyio
async def test_a_read_waits_its_turn_when_both_connections_are_busy(tmp_db_path: Path) -> None:
    db = await _one_item(tmp_db_path)
    caller = threading.get_ident()
    reading, writing, release = threading.Event(), threading.Event(), threading.Event()

    def read_slowly() -> None:  # another thread's read holds the read connection
        with db.free_connection() as conn:
            assert conn is not None
            reading.set()
            release.wait(10)

    def write_slowly(conn: sqlite3.Connection) -> None:
        writing.set()
        release.wait(10)

    threads = [
        threading.Thread(target=read_slowly),
        threading.Thread(target=db.transaction, args=(write_slowly,)),
    ]
    threads[0].start()
    reading.wait(10)
    threads[1].start()
    writing.wait(10)
    threading.Timer(0.2, release.set).start()
    # Never on the event loop while both are busy: queued, and answered once free.
    where, count = await db.read(
        lambda c: (threading.get_ident(), c.execute("SELECT count(*) FROM items").fetchone()[0])
    )
    for thread in threads:
        thread.join()
    assert where != caller and count == 1
    db.close()


def test_a_memory_database_reads_on_its_own_connection() -> None:
    # A second ":memory:" connection would be another, empty database.
    db = SqliteDatabase(":memory:")
    db.call(lambda c: c.execute("CREATE TABLE t (x)"))
    db.call(lambda c: c.execute("INSERT INTO t VALUES (1)"))
    with db.free_connection() as conn:
        assert conn is not None and conn.execute("SELECT x FROM t").fetchone()[0] == 1
    db.close()


@pytest.mark.anyio
async def test_out_of_wal_mode_reads_leave_the_event_loop(tmp_db_path: Path) -> None:
    # Out of WAL a read waits for another process's writer (up to the busy timeout): never on
    # the event loop. Leaving WAL also needs the read connection closed.
    db = await _one_item(tmp_db_path)
    caller = threading.get_ident()

    def where(c: sqlite3.Connection) -> tuple[int, int]:
        return threading.get_ident(), c.execute("SELECT count(*) FROM items").fetchone()[0]

    assert await db.read(where) == (caller, 1)
    assert await db.set_journal_mode("delete") == "delete"
    with db.free_connection() as conn:
        assert conn is None
    thread, count = await db.read(where)
    assert thread != caller and count == 1
    assert await db.set_journal_mode("WAL") == "wal"
    assert await db.read(where) == (caller, 1)
    db.close()


@pytest.mark.anyio
async def test_a_refused_journal_switch_keeps_reads_beside_writes(tmp_db_path: Path) -> None:
    # Leaving WAL needs the file to itself: another connection's open read refuses the switch,
    # the file stays in WAL, and so do reads on the caller's thread.
    db = SqliteDatabase(tmp_db_path, busy_timeout_ms=50)
    await db.run(lambda c: apply_migrations(c, "demo", MIGRATIONS))
    other = open_sqlite(tmp_db_path)
    other.execute("BEGIN")
    other.execute("SELECT count(*) FROM items").fetchone()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        await db.set_journal_mode("delete")
    other.execute("ROLLBACK")
    other.close()
    assert db.call(lambda c: c.execute("PRAGMA journal_mode").fetchone()[0]) == "wal"
    with db.free_connection() as conn:
        assert conn is not None, "the file is still in WAL: reads stay beside writes"
    db.close()


@pytest.mark.anyio
async def test_an_unknown_journal_mode_is_refused_and_changes_nothing(tmp_db_path: Path) -> None:
    db = SqliteDatabase(tmp_db_path)
    with pytest.raises(MisuseError, match="unknown SQLite journal mode 'wal; DROP TABLE x'"):
        await db.set_journal_mode("wal; DROP TABLE x")
    assert db.call(lambda c: c.execute("PRAGMA journal_mode").fetchone()[0]) == "wal"
    with db.free_connection() as conn:
        assert conn is not None
    db.close()


def test_a_migration_list_naming_one_step_twice_is_refused(tmp_db_path: Path) -> None:
    conn = open_sqlite(tmp_db_path)
    twice = [MIGRATIONS[0], Migration("001_items", "CREATE TABLE other (x);")]
    with pytest.raises(ConfigError, match="repeat a name"):
        apply_migrations(conn, "demo", twice)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "items" not in tables and "other" not in tables, "nothing applied"
    conn.close()


@pytest.mark.anyio
async def test_sqlite_ping_answers_then_fails_once_closed(tmp_db_path: Path) -> None:
    db = SqliteDatabase(tmp_db_path)
    await db.ping()
    db.close()
    db.close()  # a second close does nothing
    with pytest.raises(BackendUnavailableError, match="closed"):
        await db.ping()


PG_MIGRATIONS = [
    Migration("001_items", "CREATE TABLE items (id SERIAL PRIMARY KEY, name TEXT NOT NULL);"),
    Migration(
        "002_log",
        """CREATE TABLE log (item_id INTEGER, note TEXT);
CREATE FUNCTION items_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO log (item_id, note) VALUES (NEW.id, 'added');
  RETURN NEW;
END $$;
CREATE TRIGGER items_log AFTER INSERT ON items FOR EACH ROW EXECUTE FUNCTION items_log();""",
    ),
]


@pytest.mark.anyio
@pytest.mark.postgres
async def test_postgres_migrations_use_the_same_runner_and_table(postgres_dsn: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as conn:
        assert await apply_postgres_migrations(conn, "demo", PG_MIGRATIONS) == [
            "001_items",
            "002_log",
        ]
        assert await apply_postgres_migrations(conn, "demo", PG_MIGRATIONS) == []
        await conn.execute("INSERT INTO items (name) VALUES ('a')")
        cur = await conn.execute("SELECT note FROM log")
        assert await cur.fetchall() == [("added",)]
        cur = await conn.execute("SELECT namespace, name FROM schema_migrations ORDER BY name")
        assert await cur.fetchall() == [("demo", "001_items"), ("demo", "002_log")]
        broken = [Migration("003_bad", "CREATE TABLE ok (x int); CREATE TABLE ok (x int);")]
        with pytest.raises(psycopg.errors.DuplicateTable):
            await apply_postgres_migrations(conn, "demo", [*PG_MIGRATIONS, *broken])
        cur = await conn.execute(
            "SELECT to_regclass('ok') IS NULL, count(*) FROM schema_migrations"
        )
        assert await cur.fetchone() == (True, 2), "a failed migration leaves nothing behind"


@pytest.mark.anyio
async def test_redis_connection_translates_a_refused_connection() -> None:
    redis = RedisConnection("redis://127.0.0.1:1/0", what="Redis test store")
    with pytest.raises(BackendUnavailableError, match="Redis test store unreachable"):
        await redis.ping()
    await redis.aclose()
    await redis.aclose()  # idempotent


@pytest.mark.anyio
@pytest.mark.redis
async def test_redis_connection_pings_a_live_server(redis_url: str) -> None:
    redis = RedisConnection(redis_url, what="Redis test store")
    await redis.ping()
    assert await redis.call(redis.client.set("hd:test", "é")) is True
    assert await redis.call(redis.client.get("hd:test")) == "é", "responses are decoded"
    await redis.aclose()
