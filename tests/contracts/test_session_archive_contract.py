"""Every session archive honours the same contract: SQLite (the default) and real PostgreSQL
(several workers): idempotent writes, pending rows settled or discarded, owner-only reads,
personal numbers masked on the way in, a lost server a retryable error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hermes_desk.config import SessionSettings
from hermes_desk.errors import BackendUnavailableError
from hermes_desk.masking import Masking
from hermes_desk.sessions import Session, Turn, build_session_archive
from hermes_desk.storage import SqliteDatabase

pytestmark = pytest.mark.anyio

PHONE = "13812345678"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def archive(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    database = SqliteDatabase(tmp_path / "hermes.db")
    if request.param == "postgres":
        settings = SessionSettings(
            archive="postgres", archive_postgres_dsn=request.getfixturevalue("postgres_dsn")
        )
    else:
        settings = SessionSettings()
    built = build_session_archive(settings, database=database, masking=Masking())
    yield built
    await built.aclose()
    database.close()


def _session(sid: str, user: str = "alice", tenant: str = "t1") -> Session:
    session = Session(sid, tenant, user, created_at=10.0, last_active=20.0)
    session.turns += [
        Turn("user", f"我的订单还没到，手机{PHONE}", ts=11.0),
        Turn("agent", "正在为您查询", ts=12.0),
    ]
    session.slots["order_id"] = "123456789012"
    session.short_term.append({"key": "contact_preference", "value": "sms"})
    return session


async def test_archive_once_and_read_back_only_for_the_owner(archive: Any) -> None:
    await archive.ping()
    assert await archive.archive(_session("ses_1"), "closed", ended_at=30.0)
    assert not await archive.archive(_session("ses_1"), "expired", ended_at=99.0)
    await archive.archive(_session("ses_2"), "expired", ended_at=40.0)
    record = await archive.get("t1", "alice", "ses_1")
    assert record is not None
    assert record["reason"] == "closed" and record["ended_at"] == 30.0
    assert record["slots"] == {"order_id": "123456789012"}
    assert record["short_term"] == [{"key": "contact_preference", "value": "sms"}]
    assert PHONE not in str(record["transcript"]), "personal numbers are masked on the way in"
    assert await archive.get("t1", "mallory", "ses_1") is None
    assert await archive.get("t2", "alice", "ses_1") is None
    assert await archive.session("t1", "mallory", "ses_1") is None
    listed = await archive.list_for_user("t1", "alice")
    assert [r["session_id"] for r in listed] == ["ses_2", "ses_1"]
    assert "transcript" not in listed[0]
    ended = await archive.session("t1", "alice", "ses_1")
    assert ended is not None and ended.status == "closed" and len(ended.turns) == 2


async def test_pending_rows_are_replaced_settled_or_discarded(archive: Any) -> None:
    assert await archive.archive(_session("ses_p"), "closed", ended_at=30.0, pending=True)
    assert await archive.archive(_session("ses_p"), "expired", ended_at=31.0, pending=True)
    [(session, reason)] = await archive.unsettled()
    assert session.id == "ses_p" and reason == "expired"
    await archive.settle("ses_p")
    assert await archive.unsettled() == []
    assert not await archive.archive(_session("ses_p"), "closed", ended_at=50.0, pending=True)
    await archive.discard("ses_p")  # settled rows stay
    assert (await archive.get("t1", "alice", "ses_p")) is not None

    await archive.archive(_session("ses_q"), "closed", ended_at=60.0, pending=True)
    await archive.discard("ses_q")
    assert await archive.get("t1", "alice", "ses_q") is None


async def test_the_summary_is_replaced_and_masked(archive: Any) -> None:
    await archive.archive(_session("ses_s"), "closed", ended_at=30.0)
    await archive.set_summary("ses_s", f"客户来电查询，回拨 {PHONE}")
    await archive.set_summary("ses_unknown", "nothing happens")
    record = await archive.get("t1", "alice", "ses_s")
    assert record is not None and record["summary"].startswith("客户来电查询")
    assert PHONE not in record["summary"]


@pytest.mark.postgres
async def test_an_unreachable_postgresql_is_a_retryable_error(tmp_path: Path) -> None:
    database = SqliteDatabase(tmp_path / "hermes.db")
    settings = SessionSettings(
        archive="postgres",
        archive_postgres_dsn="postgresql://127.0.0.1:1/test?connect_timeout=1",
    )
    archive = build_session_archive(settings, database=database, masking=Masking())
    try:
        with pytest.raises(BackendUnavailableError):
            await archive.get("t1", "alice", "ses_1")
    finally:
        await archive.aclose()
        database.close()
