"""Through HTTP: two workers (apps) sharing breaker state in Redis, ``/v1/tools``, ``/metrics``."""

from __future__ import annotations

import types
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request, Response
from tests.tools.tools_helpers import backend_log, demo_registry, log_mark

from hermes_desk.api.errors import install_error_handlers
from hermes_desk.api.routes.tools import router
from hermes_desk.config import BreakerSettings, ToolSettings
from hermes_desk.events import MemorySink
from hermes_desk.testing import FakeClock
from hermes_desk.testing.servers import serve_in_thread
from hermes_desk.tools import CallContext, ToolExecutor, build_breaker_store

pytestmark = pytest.mark.anyio

SLOW = 0.25


def _worker(backend_url: str, redis_url: str, clock: FakeClock) -> FastAPI:
    """A test-only app: the tools router plus ``POST /call`` and ``/metrics``."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        settings = ToolSettings(
            default_timeout_s=SLOW,
            breaker=BreakerSettings(slow_call_s=SLOW, store="redis", redis_url=redis_url),
        )
        async with httpx.AsyncClient() as client:
            executor = ToolExecutor(
                demo_registry(backend_url, client, timeout_s=SLOW),
                settings=settings,
                store=build_breaker_store(settings.breaker),
                events=MemorySink(),
                clock=clock,
            )
            app.state.runtime = types.SimpleNamespace(tools=executor)
            yield
            await executor.aclose()

    app = FastAPI(lifespan=lifespan)
    install_error_handlers(app)
    app.include_router(router)

    @app.post("/call")
    async def call(request: Request) -> dict[str, Any]:
        body = await request.json()
        executor: ToolExecutor = request.app.state.runtime.tools
        result = await executor.execute(
            body["call"],
            request_id=body["request_id"],
            allowed_tools=body.get("allowed"),
            context=CallContext(body["request_id"], customer=body.get("customer", "u1001")),
        )
        return result.to_dict()

    @app.get("/metrics")
    async def metrics(request: Request) -> Response:
        return Response(request.app.state.runtime.tools.metrics.render(), media_type="text/plain")

    return app


@pytest.fixture
def workers(backend_url: str, redis_url: str, fake_clock: FakeClock) -> Iterator[list[str]]:
    with ExitStack() as stack:
        yield [
            stack.enter_context(serve_in_thread(_worker(backend_url, redis_url, fake_clock)))
            for _ in range(2)
        ]


ORDER = {"name": "get_order", "arguments": {"order_id": "202405201234"}}


async def _call(http: httpx.AsyncClient, url: str, call: Any = ORDER, **kw: Any) -> Any:
    body = {"call": call, "request_id": "ses_api", **kw}
    response = await http.post(f"{url}/call", json=body)
    assert response.status_code == 200
    return response.json()


async def _breaker(http: httpx.AsyncClient, url: str, tool: str = "get_order") -> Any:
    listing = (await http.get(f"{url}/v1/tools")).json()["tools"]
    return next(t["breaker"] for t in listing if t["name"] == tool)


async def test_two_workers_share_the_breaker_through_redis(
    backend: httpx.Client, backend_url: str, workers: list[str], fake_clock: FakeClock
) -> None:
    a, b = workers
    async with (
        httpx.AsyncClient(timeout=10) as http,
        httpx.AsyncClient(base_url=backend_url) as admin,
    ):
        # 5 errors on worker A open the breaker for both.
        await admin.put("/_faults/get_order", json={"error_rate": 1.0, "status_code": 503})
        for _ in range(5):
            assert (await _call(http, a))["status"] == "error"
        mark = await log_mark(admin)
        on_b = await _call(http, b)
        assert on_b["status"] == "breaker_open" and on_b["fallback"].startswith("抱歉")
        assert await backend_log(admin, since=mark) == []  # B sent nothing
        state = await _breaker(http, b)
        assert state["state"] == "open" and state["failures"] == 5
        assert state["retry_in_s"] == 600

        # After the cool-down a failing probe on B re-opens it for A too.
        await admin.delete("/_faults")
        await admin.put("/_faults/health", json={"error_rate": 1.0})
        fake_clock.advance(600)
        assert (await _call(http, b))["error"] == "health probe failed"
        assert (await _breaker(http, a))["state"] == "open"
        assert (await _call(http, a))["status"] == "breaker_open"

        # A healthy probe on A closes it; B's next call goes through.
        await admin.delete("/_faults")
        fake_clock.advance(600)
        mark = await log_mark(admin)
        assert (await _call(http, a))["status"] == "ok"
        assert [e["endpoint"] for e in await backend_log(admin, since=mark)] == [
            "health",
            "get_order",
        ]
        assert (await _breaker(http, b))["state"] == "closed"
        assert (await _call(http, b))["status"] == "ok"

        # Three slow calls on B open it again; A answers the 4th at once.
        await admin.put("/_faults/get_order", json={"latency_ms": 600})
        for _ in range(3):
            assert (await _call(http, b))["status"] == "timeout"
        fourth = await _call(http, a)
        assert fourth["status"] == "breaker_open"

        metrics_a = (await http.get(f"{a}/metrics")).text
        metrics_b = (await http.get(f"{b}/metrics")).text
        assert 'hermes_tool_calls_total{status="error",tool="get_order"} 5.0' in metrics_a
        assert 'hermes_tool_calls_total{status="timeout",tool="get_order"} 3.0' in metrics_b
        assert 'hermes_tool_calls_total{status="breaker_open",tool="get_order"}' in metrics_b


async def test_tools_listing_health_and_unknown_tool(
    backend: httpx.Client, workers: list[str]
) -> None:
    a, _ = workers
    async with httpx.AsyncClient(timeout=10) as http:
        listing = (await http.get(f"{a}/v1/tools")).json()["tools"]
        names = [t["name"] for t in listing]
        assert "kb_search" in names and "get_order" in names
        order = next(t for t in listing if t["name"] == "get_order")
        assert order["parameters"]["required"] == ["order_id"]
        assert order["breaker"]["state"] == "closed"
        health = (await http.get(f"{a}/v1/tools/get_order/health")).json()
        assert health["healthy"] is True and health["tool"] == "get_order"
        missing = await http.get(f"{a}/v1/tools/nope/health")
        assert missing.status_code == 404
        statuses: dict[str, Any] = {}
        for call, allowed in (
            ({"name": "get_order", "arguments": {"order_id": "1"}}, None),
            ({"name": "get_order", "arguments": {"order_id": "202405201234"}}, []),
            ("garbage", None),
            ({"name": "nope", "arguments": {}}, None),
        ):
            result = await _call(http, a, call, allowed=allowed)
            statuses[result["status"]] = result
        assert set(statuses) == {"invalid_args", "not_allowed", "parse_error", "unknown_tool"}
        text = (await http.get(f"{a}/metrics")).text
        for status in ("invalid_args", "not_allowed"):
            assert f'status="{status}",tool="get_order"' in text
