"""The supervisor's view of a tenant: live sessions with their sentiment trend and alerts.

- ``GET /v1/supervisor/sessions`` — the tenant's live sessions, most recently active first.
- ``GET /v1/supervisor/events`` — server-sent events: first a ``snapshot`` (the sessions),
  then ``session_opened``, ``turn`` (with the session's new sentiment point), ``alert`` and
  ``session_closed`` as they happen; a ``: keep-alive`` comment every ``KEEPALIVE_S``. The
  stream ends after ``MAX_STREAM_S`` (clients reconnect and get a fresh snapshot) or when the
  client falls too far behind.
- ``GET /console/supervisor`` — the supervisor page (static HTML/JS, reads the two above with
  the API key in a header, never in a URL).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path as FilePath
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Path, Request
from fastapi.responses import HTMLResponse, Response, StreamingResponse
from pydantic import BaseModel, Field, JsonValue

from hermes_desk.api.deps import RuntimeDep, TenantDep
from hermes_desk.errors import NotFoundError
from hermes_desk.supervision import SupervisorBoard

__all__ = ["EVENTS_PATH", "KEEPALIVE_S", "MAX_STREAM_S", "page_router", "router"]

EVENTS_PATH = "/v1/supervisor/events"
KEEPALIVE_S = 15.0
MAX_STREAM_S = 3600.0

router = APIRouter(prefix="/v1/supervisor", tags=["supervisor"])
page_router = APIRouter(tags=["console"], include_in_schema=False)


class SupervisedSession(BaseModel):
    session_id: str
    opened_at: float
    last_at: float
    customer_turns: int
    agent_turns: int
    sentiment: dict[str, JsonValue] | None = Field(
        description="the latest customer turn's sentiment (label, score, confidence, turn_index)"
    )
    sentiment_trend: list[dict[str, JsonValue]] = Field(description="the last 20 points")
    alerts: list[dict[str, JsonValue]] = Field(description="the last 20 alerts")
    alert_count: int
    alert_counts: dict[str, int] = Field(description="alerts so far, by kind")
    critical: bool = Field(description="a critical alert among the recent ones")


class SupervisedSessions(BaseModel):
    sessions: list[SupervisedSession]


def _board(runtime: Any) -> SupervisorBoard:
    board: SupervisorBoard = runtime.board
    return board


@router.get("/sessions", response_model=SupervisedSessions)
async def live_sessions(runtime: RuntimeDep, tenant: TenantDep) -> dict[str, Any]:
    """The tenant's live sessions seen by this service process."""
    return {"sessions": _board(runtime).sessions(tenant)}


@router.get(
    "/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "an event stream"}},
)
async def supervisor_events(request: Request, runtime: RuntimeDep, tenant: TenantDep) -> Response:
    """Server-sent events of the tenant's board (see the module docstring)."""
    board = _board(runtime)
    return StreamingResponse(
        _stream(board, tenant, request),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _frame(kind: str, data: Any) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


async def _stream(board: SupervisorBoard, tenant: str, request: Request) -> AsyncIterator[str]:
    async with board.subscribe(tenant) as messages:
        yield _frame("snapshot", {"sessions": board.sessions(tenant)})
        with anyio.move_on_after(MAX_STREAM_S):
            while True:
                message: dict[str, Any] | None = None
                with anyio.move_on_after(KEEPALIVE_S):
                    try:
                        message = await messages.receive()
                    except anyio.EndOfStream:
                        return  # dropped for falling behind: the client reconnects
                if message is None:
                    if await request.is_disconnected():
                        return
                    yield ": keep-alive\n\n"
                    continue
                yield _frame(str(message.get("type", "message")), message)


# -- the page ------------------------------------------------------------------------------

_FOLDER = FilePath(__file__).resolve().parent.parent / "supervisor"
_ASSETS = {"supervisor.js": "text/javascript", "supervisor.css": "text/css"}
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = {"Content-Security-Policy": _CSP, "Cache-Control": "no-cache"}


@page_router.get("/console/supervisor", response_class=HTMLResponse)
async def supervisor_page() -> HTMLResponse:
    """The supervisor page."""
    return HTMLResponse((_FOLDER / "index.html").read_text("utf-8"), headers=_HEADERS)


@page_router.get("/console/supervisor/{name}")
async def supervisor_asset(name: Annotated[str, Path(max_length=32)]) -> Response:
    """The supervisor page's script and stylesheet."""
    media_type = _ASSETS.get(name)
    if media_type is None:
        raise NotFoundError(f"no supervisor file named {name}", file=name)
    body = (_FOLDER / name).read_text("utf-8")
    return Response(body, media_type=f"{media_type}; charset=utf-8", headers=_HEADERS)
