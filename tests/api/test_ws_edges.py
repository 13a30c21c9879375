"""The session WebSocket at its edges (spec D2, issue 12): frames that cannot be stored are
refused with an error frame and the socket keeps working; a session that is closed or expires
closes every socket on it at once (``session_closed``, then 4404)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from fastapi import FastAPI
from tests.api.conftest import Service
from tests.api.test_ws import ORDER, _open, _ready, _recv, _segment, _turns
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from hermes_desk.api.app import create_app
from hermes_desk.api.payload import MAX_DEPTH
from hermes_desk.config import Settings
from hermes_desk.runtime import build_runtime
from hermes_desk.testing import FakeClock
from hermes_desk.testing.servers import serve_in_thread

pytestmark = pytest.mark.anyio


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


def _approve(arguments: Any) -> str:
    frame = {"type": "approve", "proposal_id": "p1", "agent_id": "agent-1", "arguments": arguments}
    return json.dumps(frame)


# (frame, error code, where the problem is — None when the code says it all)
UNSTORABLE: list[tuple[str | bytes, str, list[Any] | None]] = [
    ('{"type": "segment", "text": "hi \\ud800"}', "invalid_text", ["message", "text"]),
    (
        '{"type": "segment", "text": "\\udfff tail", "final": false}',
        "invalid_text",
        ["message", "text"],
    ),
    ('{"type": "segment", "text": "hi", "\\ud83d": 1}', "invalid_text", ["message"]),
    (_approve({"note": "x\ud800y"}), "invalid_text", ["message", "arguments", "note"]),
    (_approve(_nested(MAX_DEPTH + 1)), "too_deep", ["message"]),
    ("[" * 1000 + "]" * 1000, "too_deep", ["message"]),  # once dropped the socket
    ('{"type": "segment", "text": "hi"', "invalid_json", ["message"]),
    ("", "invalid_json", ["message"]),
    (b"\xff\xfe binary", "unsupported_data", None),
    ('{"type": "segment", "text": ["hi"]}', "validation_error", ["message", "text"]),
    ('{"type": "segment", "text": "hi", "final": 1}', "validation_error", ["message", "final"]),
    ('{"type": "ping", "extra": true}', "validation_error", ["message", "extra"]),
]


async def test_unstorable_frames_get_an_error_frame_and_the_socket_keeps_working(
    service: Service, client: httpx.AsyncClient
) -> None:
    sid = await _open(client, "u1001")
    async with connect(service.ws_url(sid, user_id="u1001")) as socket:
        await _ready(socket)
        seq = 0
        for raw, code, loc in UNSTORABLE:
            await socket.send(raw)
            seq += 1
            reply = await _recv(socket)
            assert reply["type"] == "error" and reply["seq"] == seq, (raw, reply)
            assert reply["error"]["code"] == code, (raw, reply)
            assert reply["error"]["message"], reply
            if loc is not None:
                assert loc in [p["loc"] for p in reply["error"]["problems"]], reply
            # Still open and answering after each refusal.
            await socket.send(json.dumps({"type": "ping"}))
            seq += 1
            assert await _recv(socket) == {"type": "pong", "seq": seq}

        # Nothing was stored, and the session still reads back as JSON.
        assert await _turns(client, sid, "u1001") == []

        await _segment(socket, f"我的订单{ORDER}现在什么状态？")
        assert (await _recv(socket))["type"] == "segment"
        assist = await _recv(socket)
        assert assist["type"] == "assist" and assist["intent"]["name"] == "order_status"
    turns = await _turns(client, sid, "u1001")
    assert [t["text"] for t in turns if t["role"] == "user"] == [f"我的订单{ORDER}现在什么状态？"]


async def test_nesting_up_to_the_limit_is_accepted(
    service: Service, client: httpx.AsyncClient
) -> None:
    sid = await _open(client, "u1002")
    async with connect(service.ws_url(sid, user_id="u1002")) as socket:
        await _ready(socket)
        # The frame is one level, its arguments the other MAX_DEPTH - 1: exactly the limit.
        await socket.send(_approve(_nested(MAX_DEPTH - 1)))
        reply = await _recv(socket)
    # Parsed and checked, then refused only because no such proposal exists.
    assert reply["type"] == "error" and reply["error"]["code"] == "not_found", reply


async def _last_words(socket: ClientConnection) -> list[dict[str, Any]]:
    """Every message the service still sends, until it closes the socket."""
    said: list[dict[str, Any]] = []
    with pytest.raises(ConnectionClosed):
        with anyio.fail_after(30):
            while True:
                said.append(json.loads(await socket.recv()))
    return said


async def test_delete_closes_every_socket_and_nothing_is_echoed_after(
    service: Service, client: httpx.AsyncClient
) -> None:
    sid = await _open(client, "u1003")
    url = service.ws_url(sid, user_id="u1003")
    async with connect(url) as platform, connect(url) as console:
        await _ready(platform)
        await _ready(console)
        await _segment(platform, "我要", final=False)
        assert (await _recv(console))["text"] == "我要"
        assert (await _recv(platform))["text"] == "我要"

        closed = await client.delete(f"/v1/sessions/{sid}", params={"user_id": "u1003"})
        assert closed.status_code == 200
        # Closed already, or closed while it was sent: nothing can be echoed either way.
        with contextlib.suppress(ConnectionClosed):
            await _segment(platform, "我要退货", final=False)

        final = {"type": "session_closed", "session_id": sid, "reason": "closed"}
        assert await _last_words(platform) == [final]
        assert await _last_words(console) == [final]
        assert platform.close_code == console.close_code == 4404

    # A new socket on the closed session is refused the same way.
    async with connect(url) as late:
        error = await _recv(late)
        assert error["type"] == "error"
        assert await _last_words(late) == []
        assert late.close_code == 4404


@pytest.fixture
def clocked(
    tmp_path: Path, pack_model_dir: Path, backend_url: str
) -> Iterator[tuple[str, FakeClock]]:
    """A service on a fake clock whose session sweeper runs every 50 ms (real time)."""
    settings = Settings(
        service={"data_dir": tmp_path, "backend_url": backend_url},
        nlu={"model_dir": pack_model_dir},
        sessions={"sweep_interval_s": 0.05},
        workflows={"watchdog_interval_s": 3600},
    )
    clock = FakeClock()
    runtime = build_runtime(settings, clock=clock)
    app = create_app(runtime=runtime)
    given = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with given(app):
            await runtime.start()  # the background jobs, the sweeper among them
            try:
                yield
            finally:
                await runtime.stop()

    app.router.lifespan_context = lifespan
    with serve_in_thread(app) as url:
        yield url, clock


async def test_the_idle_sweep_closes_the_sockets_of_an_expired_session(
    clocked: tuple[str, FakeClock],
) -> None:
    url, clock = clocked
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        sid = await _open(http, "u1001")
        ws_url = f"{url.replace('http://', 'ws://')}/v1/sessions/{sid}/ws?user_id=u1001"
        async with connect(ws_url) as socket:
            await _ready(socket)
            clock.advance(15 * 60 + 1)  # past sessions.idle_ttl_s without a turn
            said = await _last_words(socket)
            assert said == [{"type": "session_closed", "session_id": sid, "reason": "expired"}]
            assert socket.close_code == 4404
        gone = await http.get(f"/v1/sessions/{sid}", params={"user_id": "u1001"})
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "not_found"
