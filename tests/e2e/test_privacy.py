"""Personal numbers never rest in clear (spec D3): a conversation full of them, then every store
searched for the raw values.

The service runs over real HTTP and a real WebSocket, on the embedded defaults (SQLite files)
and on Redis + PostgreSQL. The customer gives phones, an ID-card number, bank cards, e-mail
addresses and an SMS code; the agent reads a phone out; a password reset runs to its end. Then
every SQLite table in the data folder, every Redis key (name and value), every PostgreSQL table,
every log record, every event and every API answer is searched: the raw values are nowhere —
except, while the password reset waits for its code, in that running workflow's own state.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import connect

from hermes_desk.api.access_log import log_config
from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread

KEY = "privacy-test-key-0123456789"
USER = "u1001"
PHONE = "13800138000"  # u1001's registered phone (the password reset needs it)
PHONE_SPOKEN = "139 1234 5678"
PHONE_DIGITS = "13912345678"
ID_CARD = "110101199003071234"
BANK_CARD = "6222021234567890123"
CARD_SPOKEN = "4111 1111 1111 1111"
EMAIL = "zhang.san@example.com"
EMAIL_EN = "li.si@example.org"
PASSWORD = "Hx7vq2024!"  # customers type the password they want; no tool takes one

CONVERSATION = [
    f"我的身份证号是{ID_CARD}，银行卡号{BANK_CARD}，有问题发邮件到{EMAIL}",
    f"我要投诉，你们的快递员太差了，我的电话是{PHONE_SPOKEN}",
    f"My e-mail is {EMAIL_EN} and my card is {CARD_SPOKEN}, where is order 202405201234?",
    f"新密码我想设成{PASSWORD}",
]
AGENT_LINE = f"好的，您的手机号{PHONE_DIGITS}和邮箱{EMAIL}我已经记下了"


def _raw_values(code: str) -> dict[str, re.Pattern[str]]:
    values = {
        "phone": PHONE,
        "spoken phone": PHONE_DIGITS,
        "id card": ID_CARD,
        "bank card": BANK_CARD,
        "card read in fours": CARD_SPOKEN.replace(" ", ""),
        "sms code": code,
    }
    found = {name: re.compile(rf"(?<!\d){v}(?!\d)") for name, v in values.items()}
    found["spoken phone (grouped)"] = re.compile(re.escape(PHONE_SPOKEN))
    found["card (grouped)"] = re.compile(re.escape(CARD_SPOKEN))
    found["e-mail"] = re.compile(re.escape(EMAIL))
    found["english e-mail"] = re.compile(re.escape(EMAIL_EN))
    found["password"] = re.compile(re.escape(PASSWORD))
    return found


def _leaks(where: str, text: str, patterns: dict[str, re.Pattern[str]]) -> list[str]:
    """Each value found in ``text``, named with where and the text around it (so a failure
    shows what held it)."""
    found = []
    for name, pattern in patterns.items():
        if match := pattern.search(text):
            around = text[max(0, match.start() - 80) : match.end() + 80]
            found.append(f"{name} in {where}: …{around}…")
    return found


# Fields no text reaches: an event's time (a float) and the digests (``ids.digest``: 16 hex
# characters, some a letter, so no card or phone number passes for one) of arguments, outputs
# and values. A six-digit SMS code can still appear in their digits by chance (one in a million
# per field, about ten such runs of six digits per conversation), so they are left out.
_CHANCE_DIGITS = re.compile(r'"(?:at": ?\d+\.\d+|[a-z_]*_digest": ?"(?=[0-9]*[a-f])[0-9a-f]{16}")')


def _without_chance_digits(text: str) -> str:
    return _CHANCE_DIGITS.sub('"…": null', text)


def _workflow_state(where: str) -> bool:
    """Whether ``where`` is a workflow snapshot: SQLite ``workflows`` table or Redis
    ``hermes:wf:<id>`` key (the snapshot stores)."""
    return where.endswith(":workflows") or where.startswith("redis key hermes:wf:")


def _printed_by_serve(record: logging.LogRecord) -> bool:
    """Whether ``serve``'s logging configuration prints ``record`` (its logger's level, or the
    last-resort handler's WARNING for loggers it does not configure)."""
    loggers: dict[str, Any] = log_config()["loggers"]  # type: ignore[assignment]
    names = [n for n in loggers if record.name == n or record.name.startswith(n + ".")]
    if not names:
        return record.levelno >= logging.WARNING
    level = logging.getLevelName(loggers[max(names, key=len)]["level"])
    return record.levelno >= int(level)


def _sqlite_text(data_dir: Path) -> dict[str, str]:
    """Every row of every table of every SQLite database under ``data_dir``, as text."""
    found: dict[str, str] = {}
    for path in sorted(data_dir.rglob("*.db")):
        conn = sqlite3.connect(path)
        try:
            tables = [
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            for table in tables:
                rows = conn.execute(f'SELECT * FROM "{table}"').fetchall()
                found[f"{path.name}:{table}"] = json.dumps(rows, ensure_ascii=False, default=str)
        finally:
            conn.close()
    return found


def _redis_text(url: str) -> dict[str, str]:
    import redis

    client = redis.Redis.from_url(url)
    found: dict[str, str] = {}
    try:
        for key in client.scan_iter(count=500):
            kind = client.type(key).decode()
            value: Any
            if kind == "string":
                value = client.get(key)
            elif kind == "hash":
                value = client.hgetall(key)
            elif kind == "list":
                value = client.lrange(key, 0, -1)
            elif kind == "set":
                value = client.smembers(key)
            elif kind == "zset":
                value = client.zrange(key, 0, -1, withscores=True)
            else:
                value = kind
            name = key.decode(errors="replace")
            found[f"redis key {name}"] = name + " " + repr(value)
    finally:
        client.close()
    return found


def _postgres_text(dsn: str) -> dict[str, str]:
    import psycopg

    found: dict[str, str] = {}
    with psycopg.connect(dsn) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema()"
        ).fetchall()
        for schema, table in tables:
            rows = conn.execute(f'SELECT t::text FROM "{schema}"."{table}" t').fetchall()
            found[f"postgres {table}"] = " ".join(r[0] for r in rows)
    return found


def _settings(
    data_dir: Path, backend_url: str, backends: str, redis_url: str, dsn: str
) -> Settings:
    settings: dict[str, Any] = {
        "service": {
            "data_dir": data_dir,
            "backend_url": backend_url,
            "api_keys": {KEY: "acme"},
            "access_log": True,
        },
        "workflows": {"watchdog_interval_s": 3600},
    }
    if backends == "redis+postgres":
        settings["sessions"] = {"store": "redis", "redis_url": redis_url}
        settings["workflows"] |= {"snapshot_store": "redis", "redis_url": redis_url}
        settings["actions"] = {"store": "redis", "redis_url": redis_url}
        settings["tools"] = {"breaker": {"store": "redis", "redis_url": redis_url}}
        settings["memory"] = {"store": "postgres", "postgres_dsn": dsn}
    return Settings(**settings)


@pytest.fixture(params=["embedded", "redis+postgres"])
def backends(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, str]]:
    if request.param == "embedded":
        yield "embedded", "", ""
        return
    yield (
        "redis+postgres",
        request.getfixturevalue("redis_url"),
        request.getfixturevalue("postgres_dsn"),
    )


def _stores(data_dir: Path, kind: str, redis_url: str, dsn: str) -> dict[str, str]:
    found = _sqlite_text(data_dir)
    if kind == "redis+postgres":
        found |= _redis_text(redis_url)
        found |= _postgres_text(dsn)
    return found


async def _ws_turn(url: str, sid: str, ticket: str, text: str) -> list[dict[str, Any]]:
    """One customer segment over the session socket; the frames it brought back."""
    ws_url = (
        url.replace("http://", "ws://") + f"/v1/sessions/{sid}/ws?user_id={USER}&ticket={ticket}"
    )
    frames: list[dict[str, Any]] = []
    async with connect(ws_url) as socket:
        frames.append(json.loads(await socket.recv()))
        assert frames[0]["type"] == "ready", frames[0]
        message = {"type": "segment", "speaker": "customer", "text": text, "final": True}
        await socket.send(json.dumps(message, ensure_ascii=False))
        with anyio.fail_after(60):
            while not frames or frames[-1]["type"] != "assist":
                frames.append(json.loads(await socket.recv()))
    return frames


def test_no_store_log_or_event_keeps_a_personal_number_in_clear(
    tmp_path: Path,
    backend_url: str,
    backends: tuple[str, str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    kind, redis_url, dsn = backends
    for name in (None, "hermes_desk", "hermes_desk.events", "hermes_desk.access"):
        caplog.set_level(logging.DEBUG, logger=name)  # whatever an earlier test set them to
    data_dir = tmp_path / "data"
    settings = _settings(data_dir, backend_url, kind, redis_url, dsn)
    httpx.delete(f"{backend_url}/_faults")
    app = create_app(settings)
    answers: list[Any] = []
    headers = {"x-api-key": KEY}
    with (
        serve_in_thread(app) as url,
        httpx.Client(base_url=url, headers=headers, timeout=60) as client,
    ):

        def call(method: str, path: str, **kw: Any) -> Any:
            response = client.request(method, path, **kw)
            assert response.status_code < 300, response.text
            answers.append(response.json())
            return response.json()

        def turn(text: str, speaker: str = "customer") -> Any:
            body = {"user_id": USER, "text": text, "speaker": speaker}
            return call("POST", f"/v1/sessions/{sid}/turns", json=body)

        sid = call("POST", "/v1/sessions", json={"user_id": USER})["session_id"]
        first = turn(f"我忘记密码了，手机号{PHONE}")
        assert first["workflow"]["waiting_for"] == "sms_code"
        code = httpx.get(f"{backend_url}/sms/outbox/{PHONE}").json()["code"]
        raw = _raw_values(code)

        # While the reset waits for its code, the clear phone is in its state and only there.
        stores = _stores(data_dir, kind, redis_url, dsn)
        holding = sorted(where for where, text in stores.items() if PHONE in text)
        assert holding, "the running workflow keeps the phone its next steps need"
        assert all(_workflow_state(where) for where in holding), holding

        for text in CONVERSATION:
            turn(text)
        turn(AGENT_LINE, speaker="agent")
        ticket = call("POST", f"/v1/sessions/{sid}/ws-ticket", json={"user_id": USER})["ticket"]
        # The reset's own phone again (a different one would restart the reset with it).
        frames = anyio.run(_ws_turn, url, sid, ticket, f"我的新邮箱是{EMAIL}，手机{PHONE}")
        answers.extend(frames)
        verified = turn(f"验证码是{code}")
        [proposal] = [p for p in verified["proposals"] if p["status"] == "proposed"]
        approved = call(
            "POST",
            f"/v1/proposals/{proposal['id']}/approve",
            json={"user_id": USER, "agent_id": "agent-7"},
        )
        assert approved["status"] == "executed", approved
        view = call("GET", f"/v1/sessions/{sid}", params={"user_id": USER})
        assert [w["status"] for w in view["workflows"]] == ["completed"]
        call("GET", f"/v1/sessions/{sid}/summary", params={"user_id": USER, "kind": "transfer"})
        call("DELETE", f"/v1/sessions/{sid}", params={"user_id": USER})
        summary = call("GET", f"/v1/sessions/{sid}/summary", params={"user_id": USER})
        events = [e.to_dict() for e in app.state.runtime.events.events()]

    # The conversation did happen, with its numbers read (masked) where they are shown.
    assert "139****5678" in json.dumps(answers, ensure_ascii=False)
    assert summary["text"] and summary["confirmed"] is False
    leaks: list[str] = []
    for where, text in _stores(data_dir, kind, redis_url, dsn).items():
        leaks += _leaks(where, text, raw)
    printed = [r for r in caplog.records if _printed_by_serve(r)]
    assert any(r.name == "hermes_desk.events" for r in printed)
    for record in printed:
        leaks += _leaks(f"log {record.name}", _without_chance_digits(record.getMessage()), raw)
    shown = _without_chance_digits(json.dumps(events, ensure_ascii=False, default=str))
    leaks += _leaks("events", shown, raw)
    for index, answer in enumerate(answers):
        leaks += _leaks(f"answer {index}", json.dumps(answer, ensure_ascii=False), raw)
    # Nor in the files' bytes (free pages, a write-ahead log) once the service has stopped.
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file() and "models" not in p.parts):
        leaks += _leaks(f"file {path.name}", path.read_bytes().decode("utf-8", "replace"), raw)
    assert leaks == [], "\n".join(leaks)
    # Access logs name routes, not customers or keys.
    access = [r.getMessage() for r in caplog.records if r.name == "hermes_desk.access"]
    assert any("/v1/sessions/{session_id}/turns" in line for line in access), access[:5]
    logged = "\n".join(r.getMessage() for r in printed)
    assert KEY not in logged and USER not in logged
    assert not [line for line in access if USER in line or "ticket=" in line]
