"""WebSocket tickets: how a browser opens the session socket without a key in the URL.

``POST /v1/sessions/{id}/ws-ticket`` (key in the ``X-API-Key`` header) answers a ticket for that
session and customer, valid for one connection within a minute:
``/v1/sessions/{id}/ws?user_id=…&ticket=…``. A service without API keys needs no ticket.
"""

from __future__ import annotations

from typing import Any, cast

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from hermes_desk.api.deps import RuntimeDep, TenantDep
from hermes_desk.api.errors import error_responses
from hermes_desk.api.schemas import USER_ID_PATTERN
from hermes_desk.api.tickets import TicketBook

__all__ = ["TicketCreate", "TicketOut", "router"]

router = APIRouter(tags=["realtime"])


class TicketCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(pattern=USER_ID_PATTERN, description="the session's customer")


class TicketOut(BaseModel):
    ticket: str | None = Field(description="pass as ?ticket= (null: the service has no keys)")
    expires_at: float | None = Field(description="epoch seconds; one connection before then")


@router.post(
    "/v1/sessions/{session_id}/ws-ticket",
    response_model=TicketOut,
    responses=error_responses(404),
)
async def create_ticket(
    session_id: str, body: TicketCreate, request: Request, runtime: RuntimeDep, tenant: TenantDep
) -> dict[str, Any]:
    """A one-use, one-minute ticket to open this session's WebSocket."""
    session = await runtime.sessions.get(tenant, body.user_id, session_id)
    if not runtime.settings.service.api_keys:
        return {"ticket": None, "expires_at": None}
    book = cast(TicketBook, request.app.state.tickets)
    ticket, expires_at = book.issue(tenant, session.id, session.user, now=runtime.clock.now())
    return {"ticket": ticket, "expires_at": expires_at}
