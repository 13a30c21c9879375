"""Edge guards: request size limit, global time limit (504), request ids in the response."""

from __future__ import annotations

import asyncio
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hermes_desk.api.errors import error_body

__all__ = ["BodySizeLimit", "RequestTimeLimit"]


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


class BodySizeLimit:
    """Refuse bodies over ``max_bytes`` with 413, whether declared or streamed."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _send_json(send, 413, self._body())
            return
        body = b""
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await _send_json(send, 413, self._body())
                return
            more = message.get("more_body", False)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _body(self) -> dict[str, object]:
        return error_body("payload_too_large", f"request body over {self.max_bytes} bytes")


class RequestTimeLimit:
    """Every HTTP request finishes within ``timeout_s`` or gets 504 with a JSON error (W7)."""

    def __init__(self, app: ASGIApp, timeout_s: float) -> None:
        self.app = app
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await asyncio.wait_for(self.app(scope, receive, tracking_send), self.timeout_s)
        except TimeoutError:
            if not started:
                await _send_json(
                    send,
                    504,
                    error_body(
                        "request_timeout", f"the request did not finish within {self.timeout_s} s"
                    ),
                )
