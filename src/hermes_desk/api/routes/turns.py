"""Turns: one utterance in, the assist out (intent, slots, tool calls, suggestion, notes)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from hermes_desk.api.deps import RuntimeDep, TenantDep
from hermes_desk.api.errors import error_responses
from hermes_desk.api.schemas import TurnCreate, TurnOut

__all__ = ["router"]

router = APIRouter(prefix="/v1/sessions", tags=["turns"])


@router.post(
    "/{session_id}/turns", response_model=TurnOut, responses=error_responses(404, 409, 502, 503)
)
async def post_turn(
    session_id: str, body: TurnCreate, runtime: RuntimeDep, tenant: TenantDep, request: Request
) -> dict[str, Any]:
    """Handle a customer (or agent) utterance in the session: 404 for an unknown session (or
    another customer's), 409 for a closed one or a turn that lost a race with another. The
    turn's alerts also go to the session's WebSockets as ``alert`` frames."""
    outcome = await runtime.assistant.turn(
        tenant, body.user_id, session_id, body.text, speaker=body.speaker
    )
    hub = getattr(request.app.state, "ws_hub", None)
    if hub is not None and outcome.alerts:
        await hub.publish_alerts(session_id, outcome.alerts)
    view = outcome.to_dict()
    await runtime.feedback.shown(tenant, view)
    return view
