"""The FastAPI app factory. Routes are thin: parse, call the library, render."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI

from hermes_desk import __version__
from hermes_desk.api import ws
from hermes_desk.api.access_log import AccessLog
from hermes_desk.api.deps import get_tenant, key_security
from hermes_desk.api.errors import error_responses, install_error_handlers
from hermes_desk.api.middleware import RequestGuard, RequestTimeLimit
from hermes_desk.api.routes import (
    actions,
    console,
    feedback,
    health,
    memory,
    pack,
    sessions,
    summary,
    supervisor,
    tickets,
    tools,
    turns,
    workflows,
)
from hermes_desk.api.ticket_store import MemoryTicketUseStore, build_ticket_use_store
from hermes_desk.api.tickets import TicketBook
from hermes_desk.api.worker_tuning import settle_after_start
from hermes_desk.config import Settings
from hermes_desk.packs import load_dispositions
from hermes_desk.runtime import Runtime, build_runtime

__all__ = ["create_app"]


def create_app(
    settings: Settings | None = None,
    *,
    runtime: Runtime | None = None,
    settle_gc: bool = False,
) -> FastAPI:
    """Build the service. With ``runtime`` given, the caller owns its start and stop.
    ``settle_gc``: once started, set the garbage collector for a long-running worker
    (:func:`hermes_desk.api.worker_tuning.settle_after_start`; ``serve`` does)."""
    settings = settings or (runtime.settings if runtime else Settings.load())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = runtime is None
        active = runtime or build_runtime(settings)
        app.state.runtime = active
        # WebSocket tickets are signed with the tenants' keys, so any worker with them checks
        # them; a ticket's single use is recorded where the workers' sessions are.
        service = active.settings.service
        uses = (
            build_ticket_use_store(active.settings.sessions, data_dir=service.data_dir)
            if service.api_keys
            else MemoryTicketUseStore()
        )
        app.state.tickets = TicketBook(service.api_keys, uses=uses)
        if owned:
            await active.start()
        if settle_gc:
            settle_after_start()
        try:
            yield
        finally:
            await app.state.tickets.aclose()
            if owned:
                await active.stop()

    app = FastAPI(
        title="Hermes Desk",
        version=__version__,
        description="Agent assist for customer service: sessions, NLU, tools, workflows, memory.",
        lifespan=lifespan,
        # Any request can be refused at the edge (size, JSON, text) or fail or time out.
        responses=error_responses(413, 422, 500, 504),
    )
    install_error_handlers(app)
    # Every resource route resolves the caller's tenant first (401 without a valid key when
    # keys are configured); routes take it as ``TenantDep`` (resolved once per request). The
    # router tries routes in order, so the turns' route, nearly every request, comes first.
    for module in (
        turns,
        sessions,
        actions,
        memory,
        tools,
        workflows,
        feedback,
        pack,
        supervisor,
        summary,
        tickets,
    ):
        app.include_router(
            module.router, dependencies=[Depends(get_tenant)], responses=error_responses(401)
        )
    # Health checks take no key; the session WebSocket checks its key (a header) or ticket
    # itself; the console page is static and holds no data.
    app.include_router(health.router)
    app.include_router(ws.router)
    app.include_router(supervisor.page_router)  # before the console's /console/{name}
    app.include_router(console.router)
    app.add_middleware(RequestGuard, max_bytes=settings.service.max_body_bytes)
    app.add_middleware(
        RequestTimeLimit,
        timeout_s=settings.service.request_timeout_s,
        streams=(supervisor.EVENTS_PATH,),
    )
    if settings.service.access_log:
        # Outermost: one line per request, without query strings, keys or customer ids.
        app.add_middleware(AccessLog)
    _contract(app, settings)
    return app


def _contract(app: FastAPI, settings: Settings) -> None:
    """``/openapi.json`` states this service's settings: the text limit, and whether a key is
    required (an open service, without ``service.api_keys``, also accepts requests without);
    error bodies are JSON on every route."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = build()
        schemas = document["components"]["schemas"]
        text = schemas["TurnCreate"]["properties"]["text"]
        text["maxLength"] = settings.service.max_text_chars
        for body in ("UseFeedback", "EditFeedback", "RatingFeedback"):  # the agent's reply
            edited = document["components"]["schemas"][body]["properties"]["text"]
            edited.get("anyOf", [edited])[0]["maxLength"] = settings.service.max_text_chars
        # The dispositions an agent may confirm are the pack's.
        chosen = schemas["SummaryConfirm"]["properties"]["disposition"]
        chosen["enum"] = load_dispositions(settings.service.pack).ids
        schemes, needs = key_security(app.routes)
        document["components"]["securitySchemes"] = schemes
        for path, item in document.get("paths", {}).items():
            for method, operation in item.items():
                if accepted := needs.get(f"{method} {path}"):
                    # An open service (no service.api_keys) also takes requests without one.
                    operation["security"] = accepted + ([] if settings.service.api_keys else [{}])
        for operation in _operations(document):
            for status, response in operation["responses"].items():
                if status[0] in "45":
                    # Errors are JSON whatever the route's own media type (/metrics).
                    schemas = [c["schema"] for c in response.get("content", {}).values()]
                    response["content"] = {"application/json": {"schema": schemas[0]}}
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]


def _operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [op for path in document.get("paths", {}).values() for op in path.values()]
