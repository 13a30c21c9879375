"""Edge guards: what a request may carry (size, storable JSON, valid text in the URL) and the
global time limit (504). Every refusal is a JSON error body."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import unquote_to_bytes

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hermes_desk.api.errors import error_body, problem, validation_body
from hermes_desk.api.payload import PayloadError, check_json, check_storable

__all__ = ["RequestGuard", "RequestTimeLimit", "url_problems"]


async def _send_json(send: Send, status: int, body: dict[str, object]) -> None:
    payload = json.dumps(body, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def url_problems(scope: Scope) -> list[dict[str, str]]:
    """The path segments and query parameters that are not valid UTF-8 text once
    percent-decoded (a lone surrogate arrives as ``%ED%A0%80``), or hold a lone surrogate."""
    raw_path = scope.get("raw_path")
    query = bytes(scope.get("query_string", b""))
    if _plain(raw_path) and _plain(query) and str(scope.get("path", "")).isascii():
        return []  # ASCII without escapes: text, and nothing to decode (nearly every request)
    problems: list[dict[str, str]] = []
    if isinstance(raw_path, bytes) and not _is_text(unquote_to_bytes(raw_path)):
        problems.append({"field": "path", "message": "the path is not valid UTF-8 text"})
    try:
        check_storable(scope.get("path", ""), loc=("path",))
    except PayloadError:
        problems.append({"field": "path", "message": "the path contains a lone surrogate"})
    for pair in query.split(b"&"):
        name, _, value = pair.replace(b"+", b" ").partition(b"=")
        raw_name, raw_value = unquote_to_bytes(name), unquote_to_bytes(value)
        if not (_is_text(raw_name) and _is_text(raw_value)):
            label = raw_name.decode("utf-8", errors="replace") or "query"
            problems.append(problem(("query", label), "not valid UTF-8 text"))
    return problems


def _plain(raw: object) -> bool:
    return isinstance(raw, bytes) and raw.isascii() and b"%" not in raw


def _is_text(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class RequestGuard:
    """Refuse what the service cannot take before any route sees it: a body over ``max_bytes``
    (413, whether declared or streamed); a body that is not JSON the service can store —
    malformed, nested deeper than :data:`~hermes_desk.api.payload.MAX_DEPTH`, or with a lone
    surrogate in any string (422); a path or query that is not valid text (422)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _send_json(send, 413, self._too_large())
            return
        bad_url = url_problems(scope)
        if bad_url:
            refusal = validation_body(bad_url, code="invalid_text", message="invalid request")
            await _send_json(send, 422, refusal)
            return
        body = b""
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await _send_json(send, 413, self._too_large())
                return
            more = message.get("more_body", False)
        if body.strip():
            try:
                check_json(body)
            except PayloadError as exc:
                problems = [problem(p["loc"], p["msg"]) for p in exc.problems]
                await _send_json(
                    send, 422, validation_body(problems, code=exc.code, message=exc.message)
                )
                return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self) -> dict[str, object]:
        return error_body("payload_too_large", f"request body over {self.max_bytes} bytes")


class RequestTimeLimit:
    """Every HTTP request finishes within ``timeout_s`` or gets 504 with a JSON error (W7).

    ``streams`` are paths of event streams (server-sent events), which stay open by design and
    bound their own lifetime."""

    def __init__(self, app: ASGIApp, timeout_s: float, *, streams: tuple[str, ...] = ()) -> None:
        self.app = app
        self.timeout_s = timeout_s
        self.streams = frozenset(streams)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in self.streams:
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            # A deadline on this task, not wait_for's extra task per request (measured: CPU
            # per turn, docs/benchmarks.md "Load").
            async with asyncio.timeout(self.timeout_s):
                await self.app(scope, receive, tracking_send)
        except TimeoutError:
            if not started:
                await _send_json(
                    send,
                    504,
                    error_body(
                        "request_timeout", f"the request did not finish within {self.timeout_s} s"
                    ),
                )
