"""Helpers for the tools tests: the demo pack's tools bound to a backend, fast settings."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import httpx

from hermes_desk.config import BreakerSettings, ToolSettings
from hermes_desk.tools import BackendHttp, ToolRegistry, ToolSpec, build_registry, load_tool_specs

#: what HTTP tools can run on: the service's client, or a caller's httpx client
ToolClient = BackendHttp | httpx.AsyncClient

PACK = Path(__file__).resolve().parents[2] / "src" / "hermes_desk" / "packs" / "ecommerce"


def demo_specs(backend_url: str, *, timeout_s: float | None = None) -> list[ToolSpec]:
    specs = load_tool_specs(PACK / "tools.yaml", {"backend_url": backend_url})
    if timeout_s is not None:
        specs = [dataclasses.replace(s, timeout_s=timeout_s) for s in specs]
    return specs


def demo_registry(
    backend_url: str, client: ToolClient, *, timeout_s: float | None = None
) -> ToolRegistry:
    from hermes_desk.tools import KnowledgeBase

    return build_registry(
        demo_specs(backend_url, timeout_s=timeout_s), client=client, kb=KnowledgeBase()
    )


def fast_settings(slow_call_s: float = 0.25) -> ToolSettings:
    """The article's thresholds with a shorter slow-call limit, so tests do not wait 3 s."""
    return ToolSettings(
        default_timeout_s=slow_call_s, breaker=BreakerSettings(slow_call_s=slow_call_s)
    )


async def backend_log(
    admin: httpx.AsyncClient, endpoint: str | None = None, *, since: int = 0
) -> list[dict[str, Any]]:
    """The backend's request log after ``since``, for one endpoint or all."""
    entries: list[dict[str, Any]] = (await admin.get("/_log", params={"since": since})).json()[
        "entries"
    ]
    return [e for e in entries if endpoint is None or e["endpoint"] == endpoint]


async def log_mark(admin: httpx.AsyncClient) -> int:
    last: int = (await admin.get("/_log")).json()["last_seq"]
    return last
