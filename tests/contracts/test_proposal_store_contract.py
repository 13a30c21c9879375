"""Every ProposalStore backend honours the same contract: in-process, SQLite, real Redis.

The status compare-and-set is what makes "approving twice executes once" true across workers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_desk.actions import MemoryProposalStore, Proposal
from hermes_desk.actions.sqlite_store import SqliteProposalStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    built: Any
    if request.param == "memory":
        built = MemoryProposalStore()
    elif request.param == "sqlite":
        built = SqliteProposalStore(tmp_path / "actions.db")
    else:
        from hermes_desk.actions.redis_store import RedisProposalStore

        built = RedisProposalStore(request.getfixturevalue("redis_url"), prefix="test:")
    yield built
    await built.aclose()


def _proposal(pid: str, session: str = "s1", *, created: float = 1.0, ttl: float = 600) -> Proposal:
    return Proposal(
        id=pid,
        tenant="default",
        user="u1001",
        session_id=session,
        tool="create_return",
        arguments={"order_id": "202405201234", "user_id": "u1001", "phone": "13812345678"},
        why={"intent": "return_exchange", "rule": "test"},
        explanation="为订单 202405201234 创建退货单",
        language="zh",
        created_at=created,
        expires_at=created + ttl,
        sensitive=("phone",),
    )


async def test_add_get_round_trip(store: Any) -> None:
    assert await store.add(_proposal("act_1"))
    got = await store.get("act_1")
    assert got == _proposal("act_1")
    assert not await store.add(replace(_proposal("act_1"), tool="other")), "ids are unique"
    assert (await store.get("act_1")) == _proposal("act_1")
    assert await store.get("act_missing") is None


async def test_status_change_is_compare_and_set(store: Any) -> None:
    await store.add(_proposal("act_1"))
    approved = replace(_proposal("act_1"), status="approved", agent_id="agent7")
    assert await store.replace(approved, expected="proposed")
    again = replace(_proposal("act_1"), status="approved", agent_id="agent8")
    assert not await store.replace(again, expected="proposed"), "decided already"
    stored = await store.get("act_1")
    assert stored is not None and stored.agent_id == "agent7"


async def test_an_amendment_is_a_new_revision_a_decision_on_the_old_one_loses(store: Any) -> None:
    """The customer's detail amends a waiting proposal; an approval of what was shown before
    (revision 0) must not run the amended one, nor overwrite it."""
    await store.add(_proposal("act_1"))
    shown = await store.get("act_1")
    assert shown is not None and shown.revision == 0
    amended = replace(shown, arguments={**shown.arguments, "reason": "尺码太小了"}, revision=1)
    assert await store.replace(amended, expected="proposed", revision=0)
    approved_old = replace(shown, status="executing", agent_id="agent7")
    assert not await store.replace(approved_old, expected="proposed", revision=0)
    assert not await store.replace(replace(amended, revision=2), expected="proposed", revision=0)
    stored = await store.get("act_1")
    assert stored is not None and stored.status == "proposed" and stored.revision == 1
    assert stored.arguments["reason"] == "尺码太小了"
    approved = replace(amended, status="executing", agent_id="agent7")
    assert await store.replace(approved, expected="proposed", revision=1)
    assert [p.id for p in await store.executing()] == ["act_1"]


async def test_concurrent_approvals_have_one_winner(store: Any) -> None:
    await store.add(_proposal("act_1"))
    wins: list[str] = []

    async def approve(agent: str) -> None:
        decided = replace(_proposal("act_1"), status="approved", agent_id=agent)
        if await store.replace(decided, expected="proposed"):
            wins.append(agent)

    async with anyio.create_task_group() as tasks:
        for n in range(8):
            tasks.start_soon(approve, f"agent{n}")
    assert len(wins) == 1


async def test_for_session_lists_oldest_first_and_only_that_session(store: Any) -> None:
    await store.add(_proposal("act_b", created=2.0))
    await store.add(_proposal("act_a", created=1.0))
    await store.add(_proposal("act_x", session="s2", created=0.5))
    assert [p.id for p in await store.for_session("s1")] == ["act_a", "act_b"]
    assert [p.id for p in await store.for_session("s2")] == ["act_x"]
    assert await store.for_session("nobody") == []


async def _ran(store: Any, proposal: Proposal, at: float, status: str = "executed") -> None:
    """``proposal`` added, then moved as an approval and its write move it."""
    await store.add(proposal)
    running = replace(proposal, status="executing", decided_at=at - 1, agent_id="agent7")
    assert await store.replace(running, expected="proposed")
    done = replace(running, status=status, executed_at=at, result={"ticket_id": proposal.id})
    assert await store.replace(done, expected="executing")


async def test_executed_for_lists_the_customers_writes_that_ran_newest_first(store: Any) -> None:
    """What an earlier contact did for the customer, in any session: only writes that ran,
    only theirs, only since the time asked, newest first."""
    await _ran(store, _proposal("act_old", session="s1", created=10.0), at=20.0)
    await _ran(store, _proposal("act_new", session="s2", created=30.0), at=40.0)
    await _ran(store, _proposal("act_failed", session="s2", created=31.0), at=41.0, status="failed")
    await store.add(_proposal("act_waiting", session="s3", created=50.0))
    other = replace(_proposal("act_other", session="s9", created=30.0), user="u1002")
    await _ran(store, other, at=45.0)
    elsewhere = replace(_proposal("act_tenant", session="s8", created=30.0), tenant="acme")
    await _ran(store, elsewhere, at=46.0)

    ran = await store.executed_for("default", "u1001", since=0.0)
    assert [p.id for p in ran] == ["act_new", "act_old"]
    assert ran[0].result == {"ticket_id": "act_new"} and ran[0].session_id == "s2"
    assert [p.id for p in await store.executed_for("default", "u1001", since=40.0)] == ["act_new"]
    assert [p.id for p in await store.executed_for("default", "u1001", since=0.0, limit=1)] == [
        "act_new"
    ]
    assert [p.id for p in await store.executed_for("default", "u1002", since=0.0)] == ["act_other"]
    assert [p.id for p in await store.executed_for("acme", "u1001", since=0.0)] == ["act_tenant"]
    assert await store.executed_for("default", "u1999", since=0.0) == []


async def test_sqlite_lists_writes_that_ran_before_the_customer_index(tmp_path: Path) -> None:
    """A data folder from before the customer index: its writes that ran are found after the
    upgrade (the migration fills the index from the stored proposals)."""
    import json
    import sqlite3

    from hermes_desk.actions.sqlite_store import MIGRATIONS
    from hermes_desk.storage import apply_migrations

    path = tmp_path / "actions.db"
    ran = replace(_proposal("act_before", created=10.0), status="executed", executed_at=20.0)
    waiting = _proposal("act_waiting", created=11.0)
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, "actions", MIGRATIONS[:1])
    for proposal in (ran, waiting):
        conn.execute(
            "INSERT INTO proposals (id, session_id, status, expires_at, created_at, data) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (proposal.id, proposal.session_id, proposal.status, proposal.expires_at,
             proposal.created_at, json.dumps(proposal.to_dict())),
        )  # fmt: skip
    conn.close()
    upgraded = SqliteProposalStore(path)
    try:
        found = await upgraded.executed_for("default", "u1001", since=0.0)
        assert [p.id for p in found] == ["act_before"]
        assert await upgraded.executed_for("default", "u1001", since=20.5) == []
    finally:
        await upgraded.aclose()


async def test_due_lists_only_pending_past_their_time(store: Any) -> None:
    await store.add(_proposal("act_old", created=0.0, ttl=10))
    await store.add(_proposal("act_new", created=0.0, ttl=1000))
    await store.add(_proposal("act_done", created=0.0, ttl=10))
    await store.replace(replace(_proposal("act_done", created=0.0, ttl=10), status="rejected"),
                        expected="proposed")  # fmt: skip
    # Withdrawn by the customer: no longer due, and no decision can follow it.
    await store.add(_proposal("act_taken_back", created=0.0, ttl=10))
    taken_back = replace(_proposal("act_taken_back", created=0.0, ttl=10), status="withdrawn")
    assert await store.replace(taken_back, expected="proposed")
    assert not await store.replace(replace(taken_back, status="executing"), expected="proposed")
    assert [p.id for p in await store.due(100.0)] == ["act_old"]


async def test_sqlite_keeps_proposals_across_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "actions.db"
    first = SqliteProposalStore(path)
    await first.add(_proposal("act_1"))
    await first.aclose()
    second = SqliteProposalStore(path)
    try:
        assert await second.get("act_1") == _proposal("act_1")
    finally:
        await second.aclose()


def test_view_masks_sensitive_arguments() -> None:
    view = _proposal("act_1").view()
    assert view["arguments"]["phone"] != "13812345678"
    assert view["arguments"]["order_id"] == "202405201234"


async def test_ping_answers_and_aclose_is_idempotent(store: Any) -> None:
    await store.ping()
    assert await store.add(_proposal("act_1"))
    await store.aclose()
    await store.aclose()  # a second close does nothing (and neither does the fixture's)


async def test_executing_lists_approvals_under_way_oldest_decision_first(store: Any) -> None:
    for pid in ("act_late", "act_early", "act_done", "act_open"):
        await store.add(_proposal(pid))
    for pid, decided in (("act_late", 20.0), ("act_early", 10.0), ("act_done", 5.0)):
        running = replace(_proposal(pid), status="executing", agent_id="a", decided_at=decided)
        assert await store.replace(running, expected="proposed")
    done = replace(_proposal("act_done"), status="executed", decided_at=5.0, executed_at=6.0)
    assert await store.replace(done, expected="executing")
    assert [p.id for p in await store.executing()] == ["act_early", "act_late"]
    assert [p.id for p in await store.executing(limit=1)] == ["act_early"]
    assert [p.id for p in await store.due(10_000.0)] == ["act_open"], "no longer pending"
