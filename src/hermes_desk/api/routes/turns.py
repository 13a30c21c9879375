"""Turns: one utterance in, the assist out (intent, slots, tool calls, suggestion, notes)."""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Request, Response

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
) -> Response:
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
    # The view is sent as it is, not checked against TurnOut and serialised again by FastAPI:
    # it already has that shape (the contract test checks served turns against the document,
    # and the turns' own test both serialisations), and the framework's pass over the whole
    # answer is a measurable part of a turn (docs/benchmarks.md, "A fifth pass").
    answer = orjson.dumps(view, option=orjson.OPT_NON_STR_KEYS)
    return Response(answer, media_type="application/json")
