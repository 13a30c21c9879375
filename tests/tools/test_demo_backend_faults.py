"""The demo tools over real HTTP against the demo backend, with its fault injection."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from tests.tools.tools_helpers import backend_log, demo_registry, fast_settings, log_mark

from hermes_desk.events import MemorySink
from hermes_desk.testing import FakeClock
from hermes_desk.tools import CallContext, ToolExecutor, ToolStatus

pytestmark = pytest.mark.anyio

ORDER = {"name": "get_order", "arguments": {"order_id": "202405201234"}}
SLOW = 0.25  # the slow-call and time limit where a test wants timeouts (the article's is 3 s)
ROOMY = 5.0  # the limit elsewhere: an answering call must not time out on a loaded machine


async def _executor(
    backend_url: str, client: httpx.AsyncClient, clock: FakeClock, *, limit_s: float = ROOMY
) -> ToolExecutor:
    return ToolExecutor(
        demo_registry(backend_url, client, timeout_s=limit_s),
        settings=fast_settings(limit_s),
        events=MemorySink(),
        clock=clock,
    )


async def _run(executor: ToolExecutor, call: dict[str, Any] = ORDER, **kw: Any) -> Any:
    return await executor.execute(call, request_id="ses_demo", allowed_tools=None, **kw)


async def test_demo_tools_answer_and_validate(
    backend: httpx.Client, backend_url: str, fake_clock: FakeClock
) -> None:
    async with httpx.AsyncClient() as client, httpx.AsyncClient(base_url=backend_url) as admin:
        mark = await log_mark(admin)
        executor = await _executor(backend_url, client, fake_clock)
        order = await _run(executor)
        assert order.ok and order.result["status_text"]
        shipment = await _run(
            executor, {"name": "get_shipment", "arguments": {"order_id": "202405201234"}}
        )
        assert shipment.ok and shipment.result["days_in_transit"] == 7
        phone = await _run(executor, {"name": "check_phone", "arguments": {"phone": "13800138000"}})
        assert phone.ok and phone.result["registered"] is True
        methods = await _run(
            executor, {"name": "list_payment_methods", "arguments": {"user_id": "u1001"}}
        )
        assert methods.ok and methods.result["methods"]
        ticket = await _run(
            executor,
            {
                "name": "create_ticket",
                "arguments": {"user_id": "u1001", "order_id": None, "summary": "快递太慢"},
            },
            context=CallContext("ses_demo", idempotency_key="idem-ticket-1"),
        )
        assert ticket.ok and ticket.result["ticket_id"].startswith("TK")
        missing = await _run(
            executor, {"name": "get_order", "arguments": {"order_id": "999999999999"}}
        )
        assert missing.status is ToolStatus.ERROR and "HTTP 404" in (missing.error or "")
        # The write carried the workflow's idempotency key.
        tickets = await backend_log(admin, "create_ticket", since=mark)
    assert [t["idempotency_key"] for t in tickets] == ["idem-ticket-1"]


async def test_three_slow_calls_open_the_breaker_and_the_fourth_is_the_fallback(
    backend: httpx.Client, backend_url: str, fake_clock: FakeClock
) -> None:
    async with httpx.AsyncClient() as client, httpx.AsyncClient(base_url=backend_url) as admin:
        await admin.put("/_faults/get_order", json={"latency_ms": 600})
        mark = await log_mark(admin)
        executor = await _executor(backend_url, client, fake_clock, limit_s=SLOW)
        for _ in range(3):
            assert (await _run(executor)).status is ToolStatus.TIMEOUT
        fourth = await _run(executor)
        assert fourth.status is ToolStatus.BREAKER_OPEN
        assert fourth.fallback and fourth.fallback.startswith("抱歉，订单系统")
        assert fourth.error == "circuit breaker open"
        # The backend finishes the three abandoned requests; the fourth never left.
        with anyio.fail_after(10):
            while len(await backend_log(admin, "get_order", since=mark)) < 3:  # noqa: ASYNC110
                await anyio.sleep(0.05)
        await anyio.sleep(0.3)
        assert len(await backend_log(admin, "get_order", since=mark)) == 3


async def test_five_errors_open_it_and_the_cool_down_probes_health_first(
    backend: httpx.Client, backend_url: str, fake_clock: FakeClock
) -> None:
    async with httpx.AsyncClient() as client, httpx.AsyncClient(base_url=backend_url) as admin:
        await admin.put("/_faults/get_order", json={"error_rate": 1.0, "status_code": 503})
        mark = await log_mark(admin)
        executor = await _executor(backend_url, client, fake_clock)
        for _ in range(5):
            result = await _run(executor)
            assert result.status is ToolStatus.ERROR and "HTTP 503" in (result.error or "")
        assert (await _run(executor)).status is ToolStatus.BREAKER_OPEN
        faulted = [e for e in await backend_log(admin, "get_order", since=mark)]
        assert [e["status"] for e in faulted] == [503] * 5  # the 6th never left

        # After the cool-down a failing health probe re-opens it without a business call.
        await admin.delete("/_faults")
        await admin.put("/_faults/health", json={"error_rate": 1.0, "status_code": 500})
        mark = await log_mark(admin)
        fake_clock.advance(600)
        reopened = await _run(executor)
        assert reopened.status is ToolStatus.BREAKER_OPEN
        assert reopened.error == "health probe failed"
        after = await backend_log(admin, since=mark)
        assert [(e["endpoint"], e["status"]) for e in after] == [("health", 500)]
        assert (await executor.breaker_states())["get_order"]["state"] == "open"

        # A healthy probe closes it; the probe runs before the real call.
        await admin.delete("/_faults")
        mark = await log_mark(admin)
        fake_clock.advance(600)
        healed = await _run(executor)
        assert healed.ok
        after = await backend_log(admin, since=mark)
        assert [(e["endpoint"], e["status"]) for e in after] == [
            ("health", 200), ("get_order", 200),
        ]  # fmt: skip
        assert (await executor.breaker_states())["get_order"]["state"] == "closed"


async def test_an_answer_that_breaks_its_response_format_is_invalid_result(
    backend_url: str, fake_clock: FakeClock
) -> None:
    # get_order's response_format needs status_text; a backend that drops it is failing.
    from hermes_desk.tools import HttpBinding, ToolRegistry

    async with httpx.AsyncClient() as client:
        base = demo_registry(backend_url, client)
        spec = base.get("get_shipment").spec  # type: ignore[union-attr]
        wrong = ToolRegistry()
        assert spec.binding.http is not None
        target = spec.binding.http.__class__(method="GET", url=backend_url + "/orders/{order_id}")
        wrong.add(spec, HttpBinding(target, client))
        executor = ToolExecutor(wrong, clock=fake_clock)
        result = await executor.execute(
            {"name": "get_shipment", "arguments": {"order_id": "202405201234"}},
            request_id="ses_demo",
            allowed_tools=["get_shipment"],
        )
    assert result.status is ToolStatus.INVALID_RESULT
    assert "required" in (result.error or "")
