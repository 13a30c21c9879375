"""The SQLite archive: idempotent writes, owner-only reads, repeatable migrations."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_desk.sessions import Session, SqliteSessionArchive, Turn, summarize
from hermes_desk.storage import SqliteDatabase

pytestmark = pytest.mark.anyio


def _session(sid: str, user: str = "alice") -> Session:
    session = Session(sid, "t1", user, created_at=10.0, last_active=20.0)
    session.turns += [
        Turn("user", "我的订单还没到", ts=11.0),
        Turn("agent", "正在为您查询", ts=12.0),
    ]
    session.slots["order_id"] = "123456789012"
    return session


async def test_archive_once_and_read_back_only_for_the_owner(tmp_db_path: Path) -> None:
    db = SqliteDatabase(tmp_db_path)
    try:
        archive = SqliteSessionArchive(db)
        assert await archive.archive(_session("ses_1"), "closed", ended_at=30.0)
        assert not await archive.archive(_session("ses_1"), "expired", ended_at=99.0)
        await archive.archive(_session("ses_2"), "expired", ended_at=40.0)
        record = await archive.get("t1", "alice", "ses_1")
        assert record is not None
        assert record["reason"] == "closed" and record["ended_at"] == 30.0
        assert record["transcript"][0] == {"role": "user", "text": "我的订单还没到", "ts": 11.0}
        assert record["slots"] == {"order_id": "123456789012"}
        assert await archive.get("t1", "mallory", "ses_1") is None
        assert await archive.get("t2", "alice", "ses_1") is None
        listed = await archive.list_for_user("t1", "alice")
        assert [r["session_id"] for r in listed] == ["ses_2", "ses_1"]
        assert "transcript" not in listed[0]
    finally:
        db.close()
    reopened = SqliteDatabase(tmp_db_path)  # migrations run again without harm
    try:
        assert await SqliteSessionArchive(reopened).get("t1", "alice", "ses_2") is not None
    finally:
        reopened.close()


def test_summary_names_the_state_and_the_asks() -> None:
    text = summarize(_session("ses_1"))
    assert "2 turns" in text and "order_id=123456789012" in text and "我的订单还没到" in text
    assert len(summarize(_session("s"), max_chars=20)) == 20
