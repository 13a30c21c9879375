"""A real OpenAI chat-completions server on 127.0.0.1, scripted, for tests and benchmarks.

It lets the real LiteLLM path run end to end (HTTP, JSON, error mapping) with no remote model:
scripted answers, native tool calls (well-formed or malformed), delays, 429s and 500s::

    server = OpenAIServer()
    server.script(rate_limited(), model="gpt-4o-mini")
    server.script(reply("您好"), model="backup")
    with server.run() as base_url:          # "http://127.0.0.1:<port>/v1"
        ...LiteLLMModel("openai/gpt-4o-mini", api_base=base_url, api_key="sk-test")...

Replies are queued per model name (as sent in the request body, provider prefix stripped by
LiteLLM) or for any model (``model=None``); an empty queue answers ``default``.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hermes_desk.testing.servers import serve_in_thread

__all__ = [
    "OpenAIServer",
    "ScriptedReply",
    "malformed_tool_call",
    "rate_limited",
    "reply",
    "server_error",
    "slow",
    "tool_call",
]

_CREATED = 1_780_000_000


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted answer.

    Attributes:
        content: the assistant text.
        tool_calls: ``[{"name": ..., "arguments": str | dict}]``; a ``str`` is sent verbatim
            (so it may be malformed JSON), a ``dict`` is JSON-encoded.
        status: HTTP status; anything but 200 sends an OpenAI-style error body.
        delay_s: wait before answering (stops early if the client goes away).
        prompt_tokens: reported usage.
        completion_tokens: reported usage.
        headers: extra response headers (``retry-after``…).
    """

    content: str | None = None
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    status: int = 200
    delay_s: float = 0.0
    prompt_tokens: int = 12
    completion_tokens: int = 7
    headers: Mapping[str, str] = field(default_factory=dict)


def reply(content: str, **kw: Any) -> ScriptedReply:
    return ScriptedReply(content=content, **kw)


def tool_call(name: str, arguments: Mapping[str, Any] | str, **kw: Any) -> ScriptedReply:
    args = arguments if isinstance(arguments, str) else dict(arguments)
    return ScriptedReply(tool_calls=({"name": name, "arguments": args},), **kw)


def malformed_tool_call(
    name: str = "get_order", raw: str = '{"order_id": "2024', **kw: Any
) -> ScriptedReply:
    """A native tool call whose arguments are not valid JSON."""
    return ScriptedReply(tool_calls=({"name": name, "arguments": raw},), **kw)


def rate_limited(**kw: Any) -> ScriptedReply:
    return ScriptedReply(status=429, headers={"retry-after": "1"}, **kw)


def server_error(status: int = 500, **kw: Any) -> ScriptedReply:
    return ScriptedReply(status=status, **kw)


def slow(delay_s: float, content: str = "slow answer", **kw: Any) -> ScriptedReply:
    return ScriptedReply(content=content, delay_s=delay_s, **kw)


_ERRORS = {
    400: ("invalid_request_error", "bad request"),
    401: ("invalid_request_error", "Incorrect API key provided"),
    404: ("invalid_request_error", "The model does not exist"),
    429: ("rate_limit_error", "Rate limit reached for requests"),
    500: ("server_error", "The server had an error while processing your request"),
    503: ("server_error", "The engine is currently overloaded"),
}


class OpenAIServer:
    """The scripted server. Thread-safe: the app runs in uvicorn's thread."""

    def __init__(self, default: ScriptedReply | None = None) -> None:
        self.default = default or reply("好的。")
        self._queues: dict[str | None, deque[ScriptedReply]] = {}
        self._requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    def script(self, *replies: ScriptedReply, model: str | None = None) -> None:
        """Queue ``replies`` for ``model`` (``None``: for any model with no queue of its own)."""
        with self._lock:
            self._queues.setdefault(model, deque()).extend(replies)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received, in order."""
        with self._lock:
            return list(self._requests)

    def models_called(self) -> list[str]:
        return [str(r.get("model")) for r in self.requests]

    @contextmanager
    def run(self) -> Iterator[str]:
        """Serve on a free loopback port; yields the ``/v1`` base URL."""
        with serve_in_thread(self.app) as url:
            yield f"{url}/v1"

    def _next(self, model: str) -> ScriptedReply:
        with self._lock:
            for key in (model, None):
                queue = self._queues.get(key)
                if queue:
                    return queue.popleft()
            return self.default

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": []})

    async def _chat(self, request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "body must be an object")
        with self._lock:
            self._requests.append(body)
        model = str(body.get("model", ""))
        scripted = self._next(model)
        if scripted.delay_s > 0 and not await _wait(request, scripted.delay_s):
            return Response(status_code=499)
        if scripted.status != 200:
            return _error(scripted.status, headers=scripted.headers)
        return JSONResponse(self._completion(model, scripted), headers=dict(scripted.headers))

    def _completion(self, model: str, scripted: ScriptedReply) -> dict[str, Any]:
        n = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": scripted.content}
        if scripted.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {
                        "name": call.get("name", ""),
                        "arguments": call["arguments"]
                        if isinstance(call.get("arguments"), str)
                        else json.dumps(call.get("arguments", {}), ensure_ascii=False),
                    },
                }
                for i, call in enumerate(scripted.tool_calls)
            ]
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": _CREATED,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if scripted.tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": scripted.prompt_tokens,
                "completion_tokens": scripted.completion_tokens,
                "total_tokens": scripted.prompt_tokens + scripted.completion_tokens,
            },
        }


async def _wait(request: Request, delay_s: float) -> bool:
    """Sleep ``delay_s``; ``False`` as soon as the client has gone away."""
    remaining = delay_s
    while remaining > 0:
        step = min(0.05, remaining)
        await anyio.sleep(step)
        remaining -= step
        if await request.is_disconnected():
            return False
    return True


def _error(
    status: int, message: str | None = None, headers: Mapping[str, str] | None = None
) -> Response:
    kind, default = _ERRORS.get(status, ("server_error", "error"))
    body = {"error": {"message": message or default, "type": kind, "param": None, "code": None}}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))
