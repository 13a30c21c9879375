"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse, PlainTextResponse

from hermes_desk import __version__
from hermes_desk.api.deps import RuntimeDep
from hermes_desk.api.errors import error_body, error_responses

__all__ = ["router"]

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, Any]:
    """The process answers."""
    return {"status": "ok", "version": __version__}


@router.get("/readyz", responses=error_responses(503))
async def readyz(runtime: RuntimeDep) -> Any:
    """The pack is loaded, the intent model trained and every store answers a ping (session,
    breaker, snapshot, proposal, memory, feedback); else 503, ``error.stores`` naming each
    store that did not answer and why."""
    checked = await runtime.check_stores()
    failed = {name: why for name, why in checked.items() if why is not None}
    if failed:
        body = error_body("not_ready", f"stores not answering: {', '.join(failed)}", stores=failed)
        return JSONResponse(body, status_code=503)
    return {
        "status": "ready",
        "stores": list(checked),
        "pack": runtime.pack.name,
        "pack_fingerprint": runtime.pack.fingerprint,
        "intents": sorted(runtime.pack.intents),
        "tools": runtime.tools.registry.names(),
        "workflows": sorted(runtime.pack.workflows),
        "responder": runtime.settings.llm.chain,
    }


@router.get("/metrics", response_class=PlainTextResponse)  # documented as text/plain
async def metrics(runtime: RuntimeDep) -> Response:
    """Prometheus text format: tool calls, latencies, breaker states, suggestion events."""
    from prometheus_client import CONTENT_TYPE_LATEST

    return Response(runtime.tools.metrics.render(), media_type=CONTENT_TYPE_LATEST)
