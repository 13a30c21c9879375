"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from hermes_desk import __version__
from hermes_desk.api.deps import RuntimeDep

__all__ = ["router"]

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, Any]:
    """The process answers."""
    return {"status": "ok", "version": __version__}


@router.get("/readyz")
async def readyz(runtime: RuntimeDep) -> dict[str, Any]:
    """The pack is loaded, the intent model trained and the stores reachable."""
    await runtime.memory.notes("_readiness", "_probe")
    return {
        "status": "ready",
        "pack": runtime.pack.name,
        "pack_fingerprint": runtime.pack.fingerprint,
        "intents": sorted(runtime.pack.intents),
        "tools": runtime.tools.registry.names(),
        "workflows": sorted(runtime.pack.workflows),
        "responder": runtime.settings.llm.chain,
    }


@router.get("/metrics")
async def metrics(runtime: RuntimeDep) -> Response:
    """Prometheus text format: tool calls, latencies, breaker states."""
    from prometheus_client import CONTENT_TYPE_LATEST

    return Response(runtime.tools.metrics.render(), media_type=CONTENT_TYPE_LATEST)
