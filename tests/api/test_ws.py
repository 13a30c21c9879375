"""The session WebSocket over a real server: segments in, assist out, bad messages refused."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.api.conftest import Service
from tests.api.conftest import ws_settings as _settings
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from hermes_desk.api.app import create_app
from hermes_desk.testing.servers import serve_in_thread

pytestmark = pytest.mark.anyio

ORDER = "202405201234"
KEY = "key-of-acme-0123456789"


async def _open(client: httpx.AsyncClient, user: str) -> str:
    response = await client.post("/v1/sessions", json={"user_id": user})
    assert response.status_code in (200, 201), response.text
    return str(response.json()["session_id"])


async def _turns(client: httpx.AsyncClient, session_id: str, user: str) -> list[dict[str, Any]]:
    response = await client.get(f"/v1/sessions/{session_id}", params={"user_id": user})
    assert response.status_code == 200, response.text
    return list(response.json()["turns"])


async def _recv(socket: ClientConnection) -> dict[str, Any]:
    message = json.loads(await socket.recv())
    assert isinstance(message, dict)
    return message


async def _ready(socket: ClientConnection) -> dict[str, Any]:
    ready = await _recv(socket)
    assert ready["type"] == "ready", ready
    return ready


async def _segment(
    socket: ClientConnection, text: str, *, final: bool = True, **extra: Any
) -> None:
    await socket.send(json.dumps({"type": "segment", "speaker": "customer", "text": text,
                                  "final": final, **extra}, ensure_ascii=False))  # fmt: skip


async def _closed_with(socket: ClientConnection) -> int | None:
    with pytest.raises(ConnectionClosed):
        while True:
            await socket.recv()
    return socket.close_code


async def test_a_final_customer_segment_gets_the_assist(
    service: Service, client: httpx.AsyncClient
) -> None:
    sid = await _open(client, "u1001")
    async with connect(service.ws_url(sid, user_id="u1001")) as socket:
        ready = await _ready(socket)
        assert ready["session_id"] == sid
        assert ready["max_message_bytes"] == service.settings.service.max_body_bytes
        await _segment(socket, f"我的订单{ORDER}现在什么状态？")

        echo = await _recv(socket)
        assert echo == {"type": "segment", "seq": 1, "speaker": "customer",
                        "text": f"我的订单{ORDER}现在什么状态？", "final": True}  # fmt: skip
        assist = await _recv(socket)

    assert assist["type"] == "assist" and assist["seq"] == 1
    assert assist["session_id"] == sid and assist["turn_index"] == 0
    assert assist["intent"]["name"] == "order_status"
    assert assist["slots"]["order_id"] == ORDER
    [call] = assist["tool_calls"]
    assert call["tool"] == "get_shipment" and call["status"] == "ok"
    async with httpx.AsyncClient() as backend:
        shipment = (await backend.get(f"{service.backend_url}/shipments/{ORDER}")).json()
    assert shipment["eta"] in assist["suggestion"]["text"]
    assert assist["suggestion"]["compliant"] is True
    # The same turn REST would have recorded.
    turns = await _turns(client, sid, "u1001")
    assert turns[0]["role"] == "user" and ORDER in turns[0]["text"]


async def test_partial_segments_are_echoed_and_run_nothing(
    service: Service, client: httpx.AsyncClient
) -> None:
    sid = await _open(client, "u1002")
    before = (await client.get(f"{service.backend_url}/_log")).json()["last_seq"]
    async with connect(service.ws_url(sid, user_id="u1002")) as socket:
        await _ready(socket)
        await _segment(socket, "我的订单", final=False)
        await _segment(socket, f"我的订单{ORDER}到", final=False)
        first, second = await _recv(socket), await _recv(socket)
        await socket.send(json.dumps({"type": "ping"}))
        pong = await _recv(socket)  # everything before it has been handled

    assert first == {"type": "segment", "seq": 1, "speaker": "customer", "text": "我的订单",
                     "final": False}  # fmt: skip
    assert second["text"] == f"我的订单{ORDER}到" and second["final"] is False
    assert pong == {"type": "pong", "seq": 3}
    assert (await client.get(f"{service.backend_url}/_log")).json()["last_seq"] == before
    assert await _turns(client, sid, "u1002") == []


BAD_MESSAGES: list[tuple[str | bytes, str, str]] = [
    ('{"type": "segment", "text": ', "invalid_json", "not valid JSON"),
    ('["segment"]', "validation_error", "JSON object"),
    ('{"text": "hi"}', "unknown_type", "None"),
    ('{"type": "transcript", "text": "hi"}', "unknown_type", "transcript"),
    ('{"type": "segment", "text": 5, "final": true}', "validation_error", "text"),
    ('{"type": "segment", "text": "hi", "final": "yes"}', "validation_error", "final"),
    ('{"type": "segment", "text": "hi", "speaker": "robot"}', "validation_error", "speaker"),
    ('{"type": "segment", "text": "hi", "volume": 3}', "validation_error", "volume"),
    ('{"type": "segment", "final": true}', "validation_error", "text"),
    ('{"type": "segment", "text": "   ", "final": true}', "validation_error", "empty"),
    ('{"type": "segment", "text": "a\\u0000b", "final": true}', "validation_error", "control"),
    (json.dumps({"type": "segment", "text": "查" * 2001}), "validation_error", "longer than"),
    (json.dumps({"type": "segment", "text": "x" * 70_000}), "payload_too_large", "bytes"),
    (b"\x00\x01binary", "unsupported_data", "binary"),
]


async def test_bad_messages_get_errors_change_nothing_and_keep_the_socket(
    service: Service, client: httpx.AsyncClient
) -> None:
    sid = await _open(client, "u1003")
    before = (await client.get(f"{service.backend_url}/_log")).json()["last_seq"]
    async with connect(service.ws_url(sid, user_id="u1003"), max_size=2**20) as socket:
        await _ready(socket)
        for seq, (raw, code, fragment) in enumerate(BAD_MESSAGES, start=1):
            await socket.send(raw)
            reply = await _recv(socket)
            assert reply["type"] == "error", (raw, reply)
            assert reply["seq"] == seq
            assert reply["error"]["code"] == code, (raw, reply)
            assert fragment in reply["error"]["message"], (raw, reply)

        assert (await client.get(f"{service.backend_url}/_log")).json()["last_seq"] == before
        assert await _turns(client, sid, "u1003") == []

        await _segment(socket, f"帮我查一下订单{ORDER}")
        assert (await _recv(socket))["type"] == "segment"
        assist = await _recv(socket)
        assert assist["type"] == "assist" and assist["slots"]["order_id"] == ORDER
    assert len([t for t in await _turns(client, sid, "u1003") if t["role"] == "user"]) == 1


async def test_agent_segments_are_recorded_without_assist(
    service: Service, client: httpx.AsyncClient
) -> None:
    sid = await _open(client, "u1004")
    async with connect(service.ws_url(sid, user_id="u1004")) as socket:
        await _ready(socket)
        await socket.send(json.dumps({"type": "segment", "speaker": "agent", "text": "您好"}))
        echo = await _recv(socket)
        # Final segments run in order: once the customer's answer is out, the agent's line
        # before it has been recorded — and it drew no assist of its own.
        await _segment(socket, "你好")
        frames = [await _recv(socket), await _recv(socket)]
    assert echo["speaker"] == "agent" and echo["final"] is True
    assert [f["type"] for f in frames] == ["segment", "assist"]
    assert frames[1]["seq"] == frames[0]["seq"] == echo["seq"] + 1
    turns = await _turns(client, sid, "u1004")
    assert [(t["role"], t["text"]) for t in turns][:2] == [("agent", "您好"), ("user", "你好")]


async def test_every_socket_on_the_session_sees_the_updates(
    service: Service, client: httpx.AsyncClient
) -> None:
    sid = await _open(client, "u1001")
    url = service.ws_url(sid, user_id="u1001")
    async with connect(url) as platform, connect(url) as console:
        await _ready(platform)
        await _ready(console)
        await _segment(platform, "我的订单", final=False)
        assert (await _recv(console))["text"] == "我的订单"
        await _segment(platform, f"我的订单{ORDER}现在什么状态")
        assert (await _recv(console))["final"] is True
        assist = await _recv(console)
    assert assist["type"] == "assist" and assist["intent"]["name"] == "order_status"


@pytest.mark.parametrize("who", ["another user", "unknown id", "closed session"])
async def test_sessions_that_are_not_the_callers_are_closed_with_4404(
    service: Service, client: httpx.AsyncClient, who: str
) -> None:
    sid = await _open(client, "u1001")
    if who == "another user":
        url = service.ws_url(sid, user_id="u2002")
    elif who == "unknown id":
        url = service.ws_url(sid[:-4] + "0000", user_id="u1001")
    else:
        closed = await client.delete(f"/v1/sessions/{sid}", params={"user_id": "u1001"})
        assert closed.status_code == 200
        url = service.ws_url(sid, user_id="u1001")
    async with connect(url) as socket:
        error = await _recv(socket)
        assert await _closed_with(socket) == 4404
    assert error["type"] == "error"
    assert error["error"]["code"] in {"not_found", "conflict"}


async def test_closing_the_session_closes_every_socket_on_it_at_once(
    service: Service, client: httpx.AsyncClient
) -> None:
    sid = await _open(client, "u1005")
    url = service.ws_url(sid, user_id="u1005")
    async with connect(url) as platform, connect(url) as console:
        await _ready(platform)
        await _ready(console)
        closed = await client.delete(f"/v1/sessions/{sid}", params={"user_id": "u1005"})
        assert closed.status_code == 200
        # Whatever the client still sends, the service has said its last word.
        with contextlib.suppress(ConnectionClosed):
            await _segment(platform, "我的订单", final=False)
        for socket in (platform, console):
            assert await _recv(socket) == {
                "type": "session_closed", "session_id": sid, "reason": "closed"
            }  # fmt: skip
            assert await _closed_with(socket) == 4404


async def test_a_missing_user_id_is_refused(service: Service, client: httpx.AsyncClient) -> None:
    sid = await _open(client, "u1001")
    async with connect(service.ws_url(sid, user_id="u 1001")) as socket:
        error = await _recv(socket)
        assert await _closed_with(socket) == 4400
    assert "user_id" in error["error"]["message"]


@pytest.fixture
def keyed(tmp_path: Path, model_dir: Path, backend_url: str) -> Iterator[Service]:
    settings = _settings(tmp_path, model_dir, backend_url, api_keys={KEY: "acme"})
    with serve_in_thread(create_app(settings)) as url:
        yield Service(url, backend_url, settings)


@pytest.mark.parametrize("key", [None, "wrong-key"])
async def test_keys_configured_and_no_valid_key_closes_with_4401(
    keyed: Service, key: str | None
) -> None:
    async with httpx.AsyncClient(base_url=keyed.url, headers={"x-api-key": KEY}) as http:
        sid = await _open(http, "u1001")
    query = {"user_id": "u1001"} | ({"api_key": key} if key else {})
    async with connect(keyed.ws_url(sid, **query)) as socket:
        error = await _recv(socket)
        assert await _closed_with(socket) == 4401
    assert error["error"]["code"] == "unauthorized"


async def _ticket(http: httpx.AsyncClient, sid: str, user: str = "u1001") -> str:
    response = await http.post(f"/v1/sessions/{sid}/ws-ticket", json={"user_id": user})
    assert response.status_code == 200, response.text
    ticket = response.json()["ticket"]
    assert isinstance(ticket, str) and KEY not in ticket
    return ticket


@pytest.mark.parametrize("how", ["ticket", "header"])
async def test_a_valid_key_reaches_the_tenants_session(keyed: Service, how: str) -> None:
    async with httpx.AsyncClient(base_url=keyed.url, headers={"x-api-key": KEY}) as http:
        sid = await _open(http, "u1001")
        ticket = await _ticket(http, sid)
    if how == "ticket":
        socket_cm = connect(keyed.ws_url(sid, user_id="u1001", ticket=ticket))
    else:
        socket_cm = connect(
            keyed.ws_url(sid, user_id="u1001"), additional_headers={"X-API-Key": KEY}
        )
    async with socket_cm as socket:
        assert (await _ready(socket))["session_id"] == sid


async def test_a_key_in_the_url_is_refused_even_when_valid(keyed: Service) -> None:
    async with httpx.AsyncClient(base_url=keyed.url, headers={"x-api-key": KEY}) as http:
        sid = await _open(http, "u1001")
    async with connect(keyed.ws_url(sid, user_id="u1001", api_key=KEY)) as socket:
        error = await _recv(socket)
        assert await _closed_with(socket) == 4401
    assert "ticket" in error["error"]["message"] and KEY not in error["error"]["message"]


async def test_a_ticket_opens_one_socket_on_its_own_session_only(keyed: Service) -> None:
    async with httpx.AsyncClient(base_url=keyed.url, headers={"x-api-key": KEY}) as http:
        sid = await _open(http, "u1001")
        other = await _open(http, "u1002")
        ticket = await _ticket(http, sid)
        # Asking for another customer's session: "not found", no ticket.
        foreign = await http.post(f"/v1/sessions/{sid}/ws-ticket", json={"user_id": "u1002"})
        assert foreign.status_code == 404
    for url in (
        keyed.ws_url(other, user_id="u1002", ticket=ticket),  # another session
        keyed.ws_url(sid, user_id="u1002", ticket=ticket),  # another customer
        keyed.ws_url(sid, user_id="u1001", ticket=ticket[:-2] + "xx"),  # forged
    ):
        async with connect(url) as socket:
            await _recv(socket)
            assert await _closed_with(socket) == 4401
    async with connect(keyed.ws_url(sid, ticket=ticket)) as socket:
        assert (await _ready(socket))["user_id"] == "u1001"
    async with connect(keyed.ws_url(sid, user_id="u1001", ticket=ticket)) as socket:
        await _recv(socket)
        assert await _closed_with(socket) == 4401, "a ticket opens one socket"


async def test_a_turn_that_breaks_is_reported_and_the_socket_keeps_working(
    tmp_path: Path, model_dir: Path, backend_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(_settings(tmp_path, model_dir, backend_url))
    with serve_in_thread(app) as url:
        service = Service(url, backend_url, app.state.runtime.settings)
        assistant = app.state.runtime.assistant
        original = assistant.turn

        async def flaky(tenant: str, user: str, sid: str, text: str, **kw: Any) -> Any:
            if text == "boom":
                raise RuntimeError("a bug")
            return await original(tenant, user, sid, text, **kw)

        monkeypatch.setattr(assistant, "turn", flaky)
        async with httpx.AsyncClient(base_url=url) as http:
            sid = await _open(http, "u1001")
        async with connect(service.ws_url(sid, user_id="u1001")) as socket:
            await _ready(socket)
            await _segment(socket, "boom")
            assert (await _recv(socket))["type"] == "segment"
            error = await _recv(socket)
            assert error["error"]["code"] == "internal_error" and error["seq"] == 1
            await _segment(socket, f"我的订单{ORDER}现在什么状态")
            assert (await _recv(socket))["type"] == "segment"
            assert (await _recv(socket))["intent"]["name"] == "order_status"


async def _assist(socket: ClientConnection) -> dict[str, Any]:
    while True:
        message = await _recv(socket)
        if message["type"] == "assist":
            return message


async def test_the_agent_approves_a_proposal_on_the_socket_and_it_runs_once(
    service: Service, client: httpx.AsyncClient
) -> None:
    async with httpx.AsyncClient() as backend:
        since = (await backend.get(f"{service.backend_url}/_log")).json()["last_seq"]
    sid = await _open(client, "u1003")
    async with connect(service.ws_url(sid, user_id="u1003")) as socket:
        await _ready(socket)
        await _segment(socket, "我要退货退款，订单202405231122")
        assist = await _assist(socket)
        [proposal] = assist["proposals"]
        assert proposal["status"] == "proposed" and proposal["tool"] == "create_return"
        decision = {"type": "approve", "proposal_id": proposal["id"], "agent_id": "agent-3"}
        await socket.send(json.dumps(decision))
        outcome = await _recv(socket)
        assert outcome["type"] == "proposal", outcome
        assert outcome["proposal"]["status"] == "executed"
        assert outcome["proposal"]["agent_id"] == "agent-3"
        listed = await _recv(socket)
        assert listed["type"] == "proposals"
        assert [p["tool"] for p in listed["proposals"] if p["status"] == "proposed"] == [
            "issue_refund"
        ], "the workflow's next write is proposed in turn"
        await socket.send(json.dumps(decision))  # twice: refused, nothing runs again
        refused = await _recv(socket)
        assert refused["type"] == "error" and refused["error"]["code"] == "conflict", refused
    async with httpx.AsyncClient() as backend:
        log = await backend.get(f"{service.backend_url}/_log", params={"since": since})
    entries = log.json()["entries"]
    ran = [e for e in entries if e["endpoint"] == "create_return" and e["outcome"] == "executed"]
    assert len(ran) == 1


async def test_a_rejection_on_the_socket_and_another_customers_proposal(
    service: Service, client: httpx.AsyncClient
) -> None:
    other = await _open(client, "u1002")
    async with connect(service.ws_url(other, user_id="u1002")) as socket:
        await _ready(socket)
        await _segment(socket, "我要投诉，快递员态度很差")
        [foreign] = (await _assist(socket))["proposals"]
    sid = await _open(client, "u1003")
    async with connect(service.ws_url(sid, user_id="u1003")) as socket:
        await _ready(socket)
        await socket.send(json.dumps({"type": "approve", "proposal_id": foreign["id"],
                                      "agent_id": "agent-3"}))  # fmt: skip
        denied = await _recv(socket)
        assert denied["type"] == "error" and denied["error"]["code"] == "not_found", denied
        await _segment(socket, "我要退货，订单202405231122")
        [proposal] = (await _assist(socket))["proposals"]
        await socket.send(json.dumps({"type": "reject", "proposal_id": proposal["id"],
                                      "agent_id": "agent-3", "reason": "wrong order"}))  # fmt: skip
        outcome = await _recv(socket)
        assert outcome["type"] == "proposal" and outcome["proposal"]["status"] == "rejected"
        assert outcome["proposal"]["reason"] == "wrong order"
