"""The session hub: one frame reaches every socket watching a session, the same text for all."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
from fastapi import WebSocket

from hermes_desk.api.ws import SessionHub, _Peer

pytestmark = pytest.mark.anyio


class _Socket:
    def __init__(self, *, broken: bool = False) -> None:
        self.sent: list[str] = []
        self.broken = broken

    async def send_text(self, text: str) -> None:
        if self.broken:
            raise RuntimeError("the client left")
        self.sent.append(text)


def _peer(socket: _Socket) -> _Peer:
    return _Peer(cast(WebSocket, socket))


async def test_a_frame_reaches_every_watcher_of_its_session_only() -> None:
    hub = SessionHub()
    first, second, elsewhere = _Socket(), _Socket(), _Socket()
    hub.join("ses_1", _peer(first))
    hub.join("ses_1", _peer(second))
    hub.join("ses_2", _peer(elsewhere))
    frame: dict[str, Any] = {"type": "assist", "seq": 3, "reply": "您好，订单已发货", "at": 1.5}
    await hub.publish("ses_1", frame)
    assert first.sent == second.sent == [json.dumps(frame, ensure_ascii=False)]
    assert elsewhere.sent == []
    await hub.publish("ses_nobody", frame)  # no watcher: nothing to do


async def test_a_watcher_that_left_is_skipped_and_the_others_still_served() -> None:
    hub = SessionHub()
    gone, staying = _Socket(broken=True), _Socket()
    leaving = _peer(gone)
    hub.join("ses_1", leaving)
    hub.join("ses_1", _peer(staying))
    await hub.publish("ses_1", {"type": "segment", "seq": 1})
    await hub.publish("ses_1", {"type": "segment", "seq": 2})
    assert leaving.gone and gone.sent == []
    assert [json.loads(text)["seq"] for text in staying.sent] == [1, 2]


async def test_alerts_are_one_frame_each_with_the_turns_seq() -> None:
    hub = SessionHub()
    socket = _Socket()
    hub.join("ses_1", _peer(socket))
    alerts = [{"kind": "negative_sentiment"}, {"kind": "escalation"}]
    await hub.publish_alerts("ses_1", alerts, seq=4)
    frames = [json.loads(text) for text in socket.sent]
    assert frames == [
        {"type": "alert", "session_id": "ses_1", "kind": "negative_sentiment", "seq": 4},
        {"type": "alert", "session_id": "ses_1", "kind": "escalation", "seq": 4},
    ]
