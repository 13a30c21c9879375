"""Turns: one utterance in, the assist out (intent, slots, tool calls, suggestion, notes).

Nearly every request is a turn, so the route answers the common request — a JSON body that is a
valid :class:`TurnCreate`, no dependency overridden — without FastAPI's per-request machinery
(:class:`TurnRoute`): measured, that machinery cost more CPU than anything the route itself does
(docs/benchmarks.md, "A sixth pass"). Everything else — a refusal's 422, another content type,
an override in tests — goes through FastAPI's own handler, so what is documented and refused is
FastAPI's, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi import APIRouter, Request, Response
from fastapi.routing import APIRoute
from pydantic import ValidationError

from hermes_desk.api.deps import RuntimeDep, TenantDep, get_runtime, get_tenant
from hermes_desk.api.errors import error_responses
from hermes_desk.api.schemas import TurnCreate, TurnOut

__all__ = ["LEAN_DEPENDENCIES", "TurnRoute", "router"]

#: what the lean handler resolves itself: the tenant (the routers' dependency and the route's)
#: and the runtime; a test checks the route depends on nothing else
LEAN_DEPENDENCIES = frozenset({get_tenant, get_runtime})
_JSON_TYPES = frozenset({"application/json", "application/json; charset=utf-8"})


class TurnRoute(APIRoute):
    """The turns' route with a lean handler for the common request (see the module docstring).

    The lean handler does what FastAPI's would for such a request — the tenant, the runtime,
    the body validated as :class:`TurnCreate` — and calls the same endpoint; a body orjson or
    the model refuses, or any other request, gets FastAPI's handler and its answer."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        checked = super().get_route_handler()
        overrides = self.dependency_overrides_provider

        async def handler(request: Request) -> Response:
            if getattr(overrides, "dependency_overrides", None) or (
                request.headers.get("content-type", "").lower() not in _JSON_TYPES
            ):
                return await checked(request)
            try:
                body = TurnCreate.model_validate(orjson.loads(await request.body()))
            except (orjson.JSONDecodeError, ValidationError):
                return await checked(request)  # FastAPI's 422, as documented
            tenant = await get_tenant(request)
            runtime = await get_runtime(request)
            session_id = request.path_params["session_id"]
            return await post_turn(session_id, body, runtime, tenant, request)

        return handler


router = APIRouter(prefix="/v1/sessions", tags=["turns"])


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


router.add_api_route(
    "/{session_id}/turns",
    post_turn,
    methods=["POST"],
    response_model=TurnOut,
    responses=error_responses(404, 409, 502, 503),
    route_class_override=TurnRoute,
)
