"""The supervisor board: live sessions per tenant from the events, and their subscribers."""

from __future__ import annotations

import anyio
import pytest

from hermes_desk.events import Event
from hermes_desk.supervision import SupervisorBoard

pytestmark = pytest.mark.anyio


def _turn(sid: str, tenant: str, index: int, label: str, score: float) -> Event:
    sentiment = {"label": label, "score": score, "confidence": 0.9}
    data = {"tenant": tenant, "turn_index": index, "speaker": "customer", "sentiment": sentiment}
    return Event("supervisor.turn", sid, float(index), data)


def _alert(sid: str, tenant: str, kind: str, severity: str = "critical") -> Event:
    alert = {"kind": kind, "severity": severity, "message": "m", "speaker": "customer"}
    return Event("alert.raised", sid, 5.0, {"tenant": tenant, "alert": alert})


def test_sessions_gather_their_trend_and_alerts_per_tenant() -> None:
    board = SupervisorBoard()
    board.emit(Event("session.created", "s1", 1.0, {"tenant": "acme"}))
    board.emit(Event("session.created", "s2", 1.0, {"tenant": "globex"}))
    board.emit(_turn("s1", "acme", 0, "negative", -0.8))
    board.emit(_turn("s1", "acme", 2, "neutral", 0.0))
    board.emit(_alert("s1", "acme", "regulator_threat"))
    board.emit(Event("tool.call", "s1", 6.0, {"tool": "x"}))  # no tenant: not the board's
    (s1,) = board.sessions("acme")
    assert [p["label"] for p in s1["sentiment_trend"]] == ["negative", "neutral"]
    assert s1["sentiment"]["turn_index"] == 2 and s1["customer_turns"] == 2
    assert s1["alert_counts"] == {"regulator_threat": 1} and s1["critical"] is True
    assert [s["session_id"] for s in board.sessions("globex")] == ["s2"]
    board.emit(Event("session.expired", "s1", 9.0, {"tenant": "acme"}))
    assert board.sessions("acme") == []


def test_a_turn_of_a_session_opened_elsewhere_puts_it_on_the_board() -> None:
    board = SupervisorBoard()
    board.emit(_turn("s9", "acme", 0, "positive", 0.7))
    assert [s["session_id"] for s in board.sessions("acme")] == ["s9"]


def test_the_board_keeps_at_most_max_sessions_per_tenant() -> None:
    board = SupervisorBoard(max_sessions=2)
    for i in range(3):
        board.emit(Event("session.created", f"s{i}", float(i), {"tenant": "acme"}))
    assert {s["session_id"] for s in board.sessions("acme")} == {"s1", "s2"}


async def test_subscribers_get_their_tenants_changes_only() -> None:
    board = SupervisorBoard()
    async with board.subscribe("acme") as acme, board.subscribe("globex") as globex:
        assert board.subscribers("acme") == 1
        board.emit(Event("session.created", "s1", 1.0, {"tenant": "acme"}))
        board.emit(_alert("s1", "acme", "abuse", "warning"))
        board.emit(Event("session.closed", "s1", 2.0, {"tenant": "acme"}))
        got = [await acme.receive() for _ in range(3)]
        assert [m["type"] for m in got] == ["session_opened", "alert", "session_closed"]
        assert got[1]["alert"]["kind"] == "abuse" and got[2]["reason"] == "closed"
        with pytest.raises(anyio.WouldBlock):
            globex.receive_nowait()
    assert board.subscribers("acme") == 0


async def test_a_subscriber_that_falls_behind_is_dropped() -> None:
    board = SupervisorBoard(queue=2)
    async with board.subscribe("acme") as slow:
        for i in range(4):
            board.emit(_turn("s1", "acme", i, "neutral", 0.0))
        assert board.subscribers("acme") == 0
        assert (await slow.receive())["type"] == "turn"
        assert (await slow.receive())["type"] == "turn"
        with pytest.raises(anyio.EndOfStream):
            await slow.receive()
