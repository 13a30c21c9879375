"""HttpBinding over real HTTP on loopback, on either client: what is sent, and how every kind
of answer or failure maps. Both clients must send the same bytes and give the same outcome."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from tests.tools.tools_helpers import ToolClient

from hermes_desk.errors import BackendError, BackendTimeoutError, BackendUnavailableError
from hermes_desk.testing.servers import free_port, serve_in_thread
from hermes_desk.tools import CallContext, HttpBinding, HttpTarget

pytestmark = pytest.mark.anyio

CONTEXT = CallContext("ses_http", idempotency_key="idem_fixed")
HUGE_ITEMS = 200_000  # about 5 MB of JSON


async def echo_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``/echo…`` answers with what it received; the other paths answer as they are named."""
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    path: str = scope["path"]
    status, headers, content = 200, [(b"content-type", b"application/json")], b""
    if path.startswith("/echo"):
        content = json.dumps(
            {
                "method": scope["method"],
                "raw_path": scope["raw_path"].decode(),
                "query": scope["query_string"].decode(),
                "headers": {k.decode(): v.decode() for k, v in scope["headers"]},
                "body": body.decode(),
                "client_port": scope["client"][1],
            }
        ).encode()
    elif path == "/no-content":
        status = 204
    elif path == "/empty":
        pass
    elif path == "/text":
        headers, content = [(b"content-type", b"text/plain")], b"all good"
    elif path.startswith("/status/"):
        status = int(path.rsplit("/", 1)[1])
        content = b'{"error": "over the limit", "code": "too_much", "refundable": 12.5}'
    elif path == "/teapot-html":
        status, headers, content = 418, [(b"content-type", b"text/html")], b"<h1>no</h1>"
    elif path == "/redirect":
        status, headers = 302, [(b"location", b"/echo/after-redirect")]
    elif path == "/huge":
        content = json.dumps({"items": list(range(HUGE_ITEMS))}).encode()
    elif path == "/gzip":
        headers.append((b"content-encoding", b"gzip"))
        content = gzip.compress(b'{"packed": true}')
    elif path == "/long-header":
        headers.append((b"x-trace", b"t" * 12_000))
        content = b'{"ok": true}'
    elif path == "/slow":
        await asyncio.sleep(2.0)
        content = b'{"late": true}'
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": content})


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serve_in_thread(echo_app) as url:
        yield url


@pytest.fixture
def rude_server() -> Iterator[str]:
    """Accepts a connection, reads the request and hangs up without a word."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    port = listener.getsockname()[1]

    def serve() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:  # the whole request read first: a close with unread bytes is a reset
            _read_request(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}"
    listener.close()
    thread.join(timeout=10)


def _read_request(conn: socket.socket) -> None:
    """Read one HTTP request, headers and body (the client may send them apart)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


def _binding(client: ToolClient, url: str, method: str = "GET", **target: Any) -> HttpBinding:
    return HttpBinding(HttpTarget(method=method, url=url, **target), client)


async def _call(binding: HttpBinding, timeout_s: float = 5.0, **arguments: Any) -> Any:
    return await binding.call(arguments, timeout_s=timeout_s, context=CONTEXT)


async def test_a_read_sends_its_path_and_query_encoded(client: ToolClient, server: str) -> None:
    binding = _binding(client, server + "/echo/{order_id}/x", headers={"X-Pack": "demo"})
    sent = await _call(binding, order_id="a b/ü?", q="x y+z&=ü", flag=True, tags=["1", 2], no=None)
    assert sent["method"] == "GET"
    assert sent["raw_path"] == "/echo/a%20b%2F%C3%BC%3F/x"
    assert sent["query"] == "q=x+y%2Bz%26%3D%C3%BC&flag=true&tags=1&tags=2"
    assert sent["headers"]["x-request-id"] == "ses_http"
    assert sent["headers"]["x-pack"] == "demo"
    assert "idempotency-key" not in sent["headers"] and sent["body"] == ""


async def test_a_dot_segment_stays_one_segment(client: ToolClient, server: str) -> None:
    sent = await _call(_binding(client, server + "/echo/{step}/x"), step="..")
    assert sent["raw_path"] == "/echo/%2E%2E/x"


async def test_a_write_sends_compact_utf8_json_with_its_idempotency_key(
    client: ToolClient, server: str
) -> None:
    binding = _binding(client, server + "/echo", method="POST")
    sent = await _call(binding, note="退货 ok", amount=12.5, urgent=False)
    assert (
        sent["body"]
        == '{"note":"退货 ok","amount":12.5,"urgent":false,"idempotency_key":"idem_fixed"}'
    )
    assert sent["headers"]["content-type"] == "application/json"
    assert sent["headers"]["idempotency-key"] == "idem_fixed"


async def test_a_form_write_encodes_like_a_query(client: ToolClient, server: str) -> None:
    binding = _binding(
        client, server + "/echo", method="POST", body_encoding="form", idempotency_field=None
    )
    sent = await _call(binding, a="x y", b=True, c=[1, 2])
    assert sent["body"] == "a=x+y&b=true&c=1&c=2"
    assert sent["headers"]["content-type"] == "application/x-www-form-urlencoded"


async def test_an_empty_form_write_sends_no_body(client: ToolClient, server: str) -> None:
    binding = _binding(
        client, server + "/echo", method="POST", body_encoding="form", idempotency_field=None
    )
    sent = await _call(binding)
    assert sent["body"] == "" and "content-type" not in sent["headers"]


async def test_a_packs_content_type_wins(client: ToolClient, server: str) -> None:
    binding = _binding(
        client, server + "/echo", method="PUT", headers={"content-type": "application/x+json"}
    )
    sent = await _call(binding, a=1)
    assert sent["headers"]["content-type"] == "application/x+json"
    assert sent["body"] == '{"a":1,"idempotency_key":"idem_fixed"}'


async def test_empty_answers_are_none_and_text_is_not_json(client: ToolClient, server: str) -> None:
    assert await _call(_binding(client, server + "/no-content")) is None
    assert await _call(_binding(client, server + "/empty")) is None
    with pytest.raises(BackendError, match="the answer is not JSON") as caught:
        await _call(_binding(client, server + "/text"))
    assert caught.value.details.get("status_code") is None


@pytest.mark.parametrize("status", [404, 409, 422, 500, 503])
async def test_an_error_status_carries_its_code_and_the_backends_words(
    client: ToolClient, server: str, status: int
) -> None:
    with pytest.raises(BackendError, match=f"GET .*/status/{{code}}: HTTP {status}") as caught:
        await _call(_binding(client, server + "/status/{code}"), code=status)
    assert caught.value.details["status_code"] == status
    assert caught.value.details["answer"]["code"] == "too_much"


async def test_an_error_status_without_json_has_no_answer(client: ToolClient, server: str) -> None:
    with pytest.raises(BackendError) as caught:
        await _call(_binding(client, server + "/teapot-html"))
    assert caught.value.details["status_code"] == 418
    assert caught.value.details["answer"] is None


async def test_a_redirect_is_not_followed(client: ToolClient, server: str) -> None:
    assert await _call(_binding(client, server + "/redirect")) is None  # a 302 with no body


async def test_huge_packed_and_long_headed_answers_come_whole(
    client: ToolClient, server: str
) -> None:
    huge = await _call(_binding(client, server + "/huge"))
    assert len(huge["items"]) == HUGE_ITEMS and huge["items"][-1] == HUGE_ITEMS - 1
    assert await _call(_binding(client, server + "/gzip")) == {"packed": True}
    assert await _call(_binding(client, server + "/long-header")) == {"ok": True}


async def test_a_slow_backend_is_a_timeout(client: ToolClient, server: str) -> None:
    with pytest.raises(BackendTimeoutError, match=r"GET .*/slow: no answer within 0.2s"):
        await _call(_binding(client, server + "/slow"), timeout_s=0.2)


async def test_nobody_listening_is_unavailable(client: ToolClient) -> None:
    url = f"http://127.0.0.1:{free_port()}/orders/{{order_id}}"
    with pytest.raises(BackendUnavailableError) as caught:
        await _call(_binding(client, url), order_id="1")
    # the template is named, never the filled URL (it may hold a phone number)
    assert str(caught.value.message) == f"GET {url}: ConnectError"


async def test_a_backend_that_hangs_up_is_unavailable(client: ToolClient, rude_server: str) -> None:
    with pytest.raises(BackendUnavailableError, match="RemoteProtocolError"):
        await _call(_binding(client, rude_server + "/x", method="POST"))


async def test_calls_reuse_one_connection(client: ToolClient, server: str) -> None:
    binding = _binding(client, server + "/echo")
    ports = {(await _call(binding))["client_port"] for _ in range(5)}
    assert len(ports) == 1


async def test_concurrent_calls_all_answer(client: ToolClient, server: str) -> None:
    binding = _binding(client, server + "/echo/{n}")
    answers = await asyncio.gather(*(_call(binding, n=n) for n in range(20)))
    assert [a["raw_path"] for a in answers] == [f"/echo/{n}" for n in range(20)]


async def test_health_is_a_2xx(client: ToolClient, server: str) -> None:
    target = HttpTarget(method="GET", url=server + "/echo")

    async def healthy(url: str) -> bool:
        return await HttpBinding(target, client, health_url=url).health(timeout_s=2.0)

    assert await healthy(server + "/empty")
    assert not await healthy(server + "/status/503")
    assert not await healthy(f"http://127.0.0.1:{free_port()}/health")
    assert await HttpBinding(target, client).health(timeout_s=2.0)  # no probe: healthy


@pytest.fixture
def one_answer_server() -> Iterator[tuple[str, list[bytes]]]:
    """Answers the first request on a kept-alive connection, then reads the second and hangs
    up; every request it read is recorded (a request sent again on a new connection too)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(2)
    seen: list[bytes] = []

    def serve() -> None:
        try:
            while True:
                conn, _ = listener.accept()
                with conn:
                    seen.append(_read_request_line(conn))
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                    seen.append(_read_request_line(conn))
        except OSError:
            return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
    listener.close()
    thread.join(timeout=10)


def _read_request_line(conn: socket.socket) -> bytes:
    """Reads one whole request (head and its content-length body, which a client may send in
    a later packet) and returns its request line."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data.split(b"\r\n", 1)[0]
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    length = next(
        (
            int(line.split(b":", 1)[1])
            for line in lines
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return lines[0]


@pytest.mark.parametrize("method", ["PUT", "DELETE"])
async def test_a_write_whose_connection_drops_is_sent_once(
    client: ToolClient, one_answer_server: tuple[str, list[bytes]], method: str
) -> None:
    url, seen = one_answer_server
    binding = _binding(client, url + "/orders/1", method=method)
    assert await _call(binding) == {}
    with pytest.raises(BackendUnavailableError):
        await _call(binding)  # the backend may have acted: never sent again here
    await asyncio.sleep(0.2)
    assert [line.split(b" ")[0] for line in seen if line] == [method.encode()] * 2
