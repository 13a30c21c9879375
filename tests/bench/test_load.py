"""The load harness: a short smoke load on one worker (embedded defaults) through Locust, and the
checks it rests on — the lost-turn detector, the write counter, the profile reader, the grown
demo data and the load balancer's configuration. Nothing here looks at a latency."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_desk.bench.load import (
    LoadStep,
    check_transcripts,
    ledger_records,
    per_hour,
    profile_top,
    run_load,
    window_figures,
    window_table,
    writes_executed,
)
from hermes_desk.bench.load_cluster import DEPLOY, LoadBalancer, make_customers, shared_store_env
from hermes_desk.sessions import Session, SqliteSessionArchive, Turn
from hermes_desk.storage import SqliteDatabase


@pytest.mark.slow
def test_a_smoke_load_on_one_worker_answers_every_turn_and_loses_none(
    tmp_path: Path, pack_model_dir: Path
) -> None:
    figures = run_load(
        steps=[LoadStep(users=6, duration_s=30)],
        stores="embedded",
        think=(0.5, 0.2),
        approve_think=(0.3, 0.1),
        customers=40,
        model_dir=pack_model_dir,
        workdir=tmp_path,
        window_s=10,
        progress=lambda line: None,
    )
    step = figures["steps"][0]
    assert step["turns_answered"] > 0, step
    assert step["request_failures"] == 0, step["failure_examples"]
    assert step["turn_failures"] == 0
    assert step["conversations_abandoned"] == 0
    assert step["turns_checked"] == step["turns_answered"]
    assert step["lost_turns"] == 0, step["lost_examples"]
    assert step["lost_in_conversation_check"] == 0
    assert figures["lost_turns"] == 0
    assert figures["writes_executed_twice"] == 0, figures["writes_executed_twice_examples"]
    assert step["conversations_closed"] > 0
    assert set(step["p50_ms_by"]) >= {"http", "ws"}, "both transports carried conversations"
    assert step["password_resets_completed"] == step["password_resets"], "code read, approved"
    assert step["worker_cpu_s"] > 0
    windows = step["windows"]
    assert len(windows) >= 2, "a 30 s step in 10 s windows reports its windows"
    assert sum(w["turns"] for w in windows) <= step["turns_answered"]
    assert sum(w["turns"] for w in windows) > 0
    for window in windows:
        assert window["turn_failures"] == 0
        assert window["worker_rss_mib"] > 0
        assert window["worker_fds"] > 0
        assert window["redis_used_memory_mib"] is None, "embedded stores: no Redis to measure"
    assert set(step["growth_per_hour"]) == {"worker_rss_mib", "worker_fds", "redis_mib",
                                            "postgres_mib"}  # fmt: skip
    assert step["growth_per_hour"]["worker_rss_mib"] is not None
    assert "| window |" in window_table(step)


def _archived(tmp_path: Path, turns: list[Turn]) -> Path:
    path = tmp_path / "hermes.db"
    db = SqliteDatabase(path)
    archive = SqliteSessionArchive(db)
    session = Session(
        id="ses_1", tenant="default", user="u1", created_at=1.0, last_active=2.0, turns=turns
    )
    import asyncio

    asyncio.run(archive.archive(session, "closed", ended_at=2.0))
    db.close()
    return path


def test_an_answered_turn_missing_from_the_archived_transcript_is_counted_lost(
    tmp_path: Path,
) -> None:
    database = _archived(tmp_path, [Turn("user", "你好"), Turn("agent", "您好")])
    records = [
        {"kind": "turn", "session": "ses_1", "user": "u1", "index": 0, "text": "你好"},
        {"kind": "turn", "session": "ses_1", "user": "u1", "index": 2, "text": "查订单"},
        {"kind": "closed", "session": "ses_1"},
    ]
    checked, lost = check_transcripts(records, "http://127.0.0.1:9", database)
    assert checked == 2
    assert len(lost) == 1 and "查订单" in lost[0]


@pytest.mark.postgres
def test_with_the_shared_stores_the_transcripts_are_read_from_the_postgres_archive(
    tmp_path: Path, postgres_dsn: str
) -> None:
    import asyncio

    from hermes_desk.sessions.postgres_archive import PostgresSessionArchive

    async def archive() -> None:
        store = PostgresSessionArchive(postgres_dsn)
        turns = [Turn("user", "你好"), Turn("agent", "您好")]
        session = Session(
            id="ses_pg", tenant="default", user="u1", created_at=1.0, last_active=2.0, turns=turns
        )
        await store.archive(session, "closed", ended_at=2.0)
        await store.aclose()

    asyncio.run(archive())
    records = [
        {"kind": "turn", "session": "ses_pg", "user": "u1", "index": 0, "text": "你好"},
        {"kind": "turn", "session": "ses_pg", "user": "u1", "index": 2, "text": "查订单"},
    ]
    # No SQLite archive at all: the rows are found in PostgreSQL, and the missing turn is lost.
    checked, lost = check_transcripts(
        records, "http://127.0.0.1:9", tmp_path / "none.db", archive_dsn=postgres_dsn
    )
    assert checked == 2
    assert len(lost) == 1 and "查订单" in lost[0]


def test_a_turn_kept_at_another_index_is_lost_too(tmp_path: Path) -> None:
    database = _archived(tmp_path, [Turn("user", "查订单"), Turn("agent", "好的")])
    records = [{"kind": "turn", "session": "ses_1", "user": "u1", "index": 1, "text": "查订单"}]
    assert check_transcripts(records, "http://127.0.0.1:9", database)[1] != []


def test_writes_are_counted_per_endpoint_and_key() -> None:
    log = [
        {"endpoint": "create_ticket", "idempotency_key": "k1", "outcome": "executed"},
        {"endpoint": "create_ticket", "idempotency_key": "k1", "outcome": "replayed"},
        {"endpoint": "create_ticket", "idempotency_key": "k2", "outcome": "executed"},
        {"endpoint": "create_ticket", "idempotency_key": "k2", "outcome": "executed"},
        {"endpoint": "get_order", "idempotency_key": None, "outcome": "executed"},
    ]
    counted = writes_executed(log)
    assert counted[("create_ticket", "k1")] == 1
    assert counted[("create_ticket", "k2")] == 2
    assert ("get_order", None) not in counted


def test_profile_top_reads_collapsed_stacks(tmp_path: Path) -> None:
    raw = tmp_path / "profile.txt"
    raw.write_text(
        "main (app.py:1);turn (hermes_desk/pipeline.py:5);read (hermes_desk/nlu.py:9) 6\n"
        "main (app.py:1);turn (hermes_desk/pipeline.py:5);call (httpx/_client.py:3) 3\n"
        "main (app.py:1);idle (loop.py:2) 1\n",
        encoding="utf-8",
    )
    top = profile_top(raw)
    own = dict(top["self"])
    under = dict(top["total"])
    assert own["read (hermes_desk/nlu.py)"] == 60.0
    assert own["call (httpx/_client.py)"] == 30.0
    assert under["turn (hermes_desk/pipeline.py)"] == 90.0
    assert "main (app.py)" not in under, "a frame under every sample says nothing"


def test_grown_demo_data_gives_every_customer_a_phone_and_orders_of_their_own() -> None:
    data, customers = make_customers(30)
    phones = [c["phone"] for c in customers]
    assert len(set(phones)) == 30
    users = {u["user_id"]: u for u in data["users"]}
    orders = {o["order_id"]: o for o in data["orders"]}
    shipments = {s["order_id"] for s in data["shipments"]}
    for customer in customers:
        assert users[customer["user"]]["phone"] == customer["phone"]
        for order in customer["orders"]:
            assert orders[order]["user_id"] == customer["user"]
            assert order in shipments
    assert len({u["phone"] for u in data["users"]}) == len(data["users"]), "phones stay unique"


def test_the_load_balancer_runs_the_repository_config_with_this_runs_ports(
    tmp_path: Path,
) -> None:
    balancer = LoadBalancer(tmp_path, port=18000)
    main = balancer.render([18001, 18002])
    site = (main.parent / "hermes-desk.conf").read_text(encoding="utf-8")
    assert "server 127.0.0.1:18001" in site and "server 127.0.0.1:18002" in site
    assert "8003" not in site
    assert "listen 127.0.0.1:18000;" in site
    assert "include hermes-desk.conf;" in main.read_text(encoding="utf-8")
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else "")
    if not nginx:
        pytest.skip("nginx is not installed: the rendered configuration is not syntax-checked")
    checked = subprocess.run(
        [nginx, "-t", "-p", str(main.parent), "-c", str(main)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr


def test_the_shared_store_settings_come_from_the_deploy_env_file() -> None:
    env = shared_store_env("redis://127.0.0.1:6390/0", "postgresql://127.0.0.1:5440/x")
    assert env["HERMES_SESSIONS__STORE"] == "redis"
    assert env["HERMES_WORKFLOWS__SNAPSHOT_STORE"] == "redis"
    assert env["HERMES_ACTIONS__STORE"] == "redis"
    assert env["HERMES_TOOLS__BREAKER__STORE"] == "redis"
    assert env["HERMES_MEMORY__STORE"] == "postgres"
    assert env["HERMES_SESSIONS__REDIS_URL"] == "redis://127.0.0.1:6390/0"
    assert env["HERMES_MEMORY__POSTGRES_DSN"] == "postgresql://127.0.0.1:5440/x"
    assert (DEPLOY / "redis.conf").read_text(encoding="utf-8").count("appendfsync always") == 1


def test_a_window_counts_the_turns_answered_inside_it_only() -> None:
    records = [
        {"kind": "turn", "at": 99.0, "ms": 500.0},
        {"kind": "turn", "at": 100.0, "ms": 10.0},
        {"kind": "turn", "at": 104.0, "ms": 20.0},
        {"kind": "turn", "at": 105.0, "ms": 30.0},
        {"kind": "fail", "at": 106.0},
        {"kind": "closed", "at": 107.0},
        {"kind": "turn", "at": 110.0, "ms": 900.0},
    ]
    figures = window_figures(records, 100.0, 110.0)
    assert figures["turns"] == 3
    assert figures["turns_per_s"] == 0.3
    assert figures["p50_ms"] == 20.0 and figures["p95_ms"] == 30.0
    assert figures["turn_failures"] == 1
    assert window_figures(records, 300.0, 400.0)["p95_ms"] is None


def test_growth_per_hour_is_the_slope_over_the_windows() -> None:
    assert per_hour([(300.0, 100.0), (600.0, 101.0), (900.0, 102.0)]) == 12.0
    assert per_hour([(300.0, 5.0), (600.0, 5.0)]) == 0.0
    assert per_hour([(300.0, 5.0)]) is None, "one window says nothing about growth"


def test_a_ledger_read_while_it_is_written_leaves_the_unfinished_line(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_text('{"kind": "turn", "at": 1, "ms": 2}\n{"kind": "tu', encoding="utf-8")
    assert ledger_records(ledger, partial=True) == [{"kind": "turn", "at": 1, "ms": 2}]
    with pytest.raises(ValueError):
        ledger_records(ledger)


_BROWSER_CLIENT = """
import sys

import gevent
from websocket import WebSocketException, create_connection

from hermes_desk.bench.locustfile import BrowserSocket  # Locust's gevent patches the sockets

url = sys.argv[1]
plain = create_connection(url, timeout=10)
browser = BrowserSocket(create_connection(url, timeout=10))
gevent.sleep(5.0)  # nobody reads: the server's pings wait on the plain socket
try:
    plain.send('{"type": "hello"}')
    answer = plain.recv()  # "" once the server has closed it
except (OSError, WebSocketException):
    answer = ""
print("plain", answer or "closed")
browser.send({"type": "hello"})
print("browser", browser.recv(5.0)["type"])
browser.close()
"""


def test_a_simulated_agent_answers_the_server_s_pings_while_it_waits(tmp_path: Path) -> None:
    """The server closes a socket whose pong is late (uvicorn: 20 s); the simulated agent's
    socket answers at once, as a browser's does, however long the agent waits."""
    import asyncio
    import threading

    from websockets.asyncio.server import ServerConnection, serve

    async def echo(connection: ServerConnection) -> None:
        async for message in connection:
            await connection.send(message)

    ready = threading.Event()
    stop: asyncio.Future[None] | None = None
    port = 0

    async def main() -> None:
        nonlocal stop, port
        stop = asyncio.get_running_loop().create_future()
        async with serve(echo, "127.0.0.1", 0, ping_interval=0.5, ping_timeout=2.0) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            ready.set()
            await stop

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        script = tmp_path / "client.py"
        script.write_text(_BROWSER_CLIENT)
        done = subprocess.run(
            [sys.executable, str(script), f"ws://127.0.0.1:{port}/"],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        loop.call_soon_threadsafe(lambda: stop is not None and stop.set_result(None))
        thread.join(10)
        loop.close()
    lines = done.stdout.splitlines()
    assert lines[0] == "plain closed", done.stdout + done.stderr
    assert lines[1] == "browser hello", done.stdout + done.stderr
