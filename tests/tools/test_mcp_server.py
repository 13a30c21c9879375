"""``hermes-desk mcp serve`` and ``build_mcp_server`` seen through the official SDK's client:
annotations, customer naming and ownership, writes proposed and never run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.tools.tools_helpers import demo_registry

from hermes_desk.testing.servers import free_port
from hermes_desk.tools.binding import PythonBinding
from hermes_desk.tools.executor import ToolExecutor
from hermes_desk.tools.mcp_server import NOTES_TOOL, build_mcp_server
from hermes_desk.tools.registry import ToolRegistry
from hermes_desk.tools.spec import BindingSpec, HttpTarget, ToolSpec

pytestmark = pytest.mark.anyio

CLI = [sys.executable, "-c", "from hermes_desk.cli.main import main; main()"]
PARAMS = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "pattern": "^[0-9]{12}$"}},
    "required": ["order_id"],
    "additionalProperties": False,
}


ORDERS = {"202405180001": "u1", "202405180002": "u2"}


def registry(written: list[dict[str, Any]] | None = None) -> ToolRegistry:
    reg = ToolRegistry()

    async def get_order(order_id: str) -> dict[str, Any]:
        return {"order_id": order_id, "status": "shipped", "user_id": ORDERS.get(order_id)}

    async def cancel_order(order_id: str) -> dict[str, Any]:
        (written if written is not None else []).append({"order_id": order_id})
        return {"cancelled": True}

    reg.add(
        ToolSpec(
            name="get_order",
            description="查询订单",
            parameters=PARAMS,
            binding=BindingSpec(kind="python"),
            response_format={"type": "object", "required": ["status"]},
            fallback="订单系统繁忙，请稍后再试。",
            effect="read",
            owner_field="user_id",
        ),
        PythonBinding(get_order),
    )
    reg.add(  # a write nobody de-duplicates: destructive
        ToolSpec(
            name="cancel_order",
            description="取消订单",
            parameters=PARAMS,
            binding=BindingSpec(kind="python"),
            effect="write",
        ),
        PythonBinding(cancel_order),
    )
    refund_params = {
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "user_id": {"type": "string"}},
        "required": ["order_id", "user_id"],
    }
    reg.add(  # a write the backend de-duplicates by idempotency key: not destructive
        ToolSpec(
            name="issue_refund",
            description="退款",
            parameters=refund_params,
            binding=BindingSpec(
                kind="http", http=HttpTarget(method="POST", url="http://backend/refunds")
            ),
            effect="write",
        ),
        PythonBinding(cancel_order),
    )
    return reg


async def notes(tenant: str, user_id: str) -> list[str]:
    return [f"{tenant}/{user_id}: 物流已延迟 7 天"]


def _hints(tool: Any) -> tuple[bool | None, bool | None, bool | None]:
    a = tool.annotations
    return a.read_only_hint, a.destructive_hint, a.idempotent_hint


async def test_reads_name_their_customer_and_go_through_the_executor() -> None:
    executor = ToolExecutor(registry())
    server = build_mcp_server(executor, notes=notes)
    async with Client(server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == {"get_order", NOTES_TOOL}  # writes are not published
        schema = listed["get_order"].input_schema
        assert schema["required"] == ["order_id", "user_id"]
        assert set(schema["properties"]) == {"order_id", "user_id", "tenant"}
        assert schema["properties"]["tenant"]["default"] == "default"
        assert schema["additionalProperties"] is False
        assert _hints(listed["get_order"]) == (True, False, True)
        assert _hints(listed[NOTES_TOOL]) == (True, False, True)

        mine = {"order_id": "202405180001", "user_id": "u1"}
        ok = await client.call_tool("get_order", mine)
        assert not ok.is_error
        assert ok.structured_content == {
            "order_id": "202405180001", "status": "shipped", "user_id": "u1"
        }  # fmt: skip
        theirs = await client.call_tool("get_order", {"order_id": "202405180002", "user_id": "u1"})
        assert not theirs.is_error  # an answer, not a fault
        assert theirs.structured_content == {"status": "not_found", "message": "no such record"}
        nobody = await client.call_tool("get_order", {"order_id": "202405180001"})
        assert nobody.is_error and "user_id" in nobody.content[0].text
        bad = await client.call_tool("get_order", {"order_id": "12", "user_id": "u1"})
        assert bad.is_error
        assert bad.content[0].text == "订单系统繁忙，请稍后再试。"  # the tool's fallback
        got = await client.call_tool(NOTES_TOOL, {"user_id": "u1"})
        assert got.structured_content == {"notes": ["default/u1: 物流已延迟 7 天"]}
    await executor.aclose()


async def test_published_writes_are_proposed_never_executed() -> None:
    written: list[dict[str, Any]] = []
    proposed: list[tuple[str, str, str, dict[str, Any]]] = []

    async def propose(tenant: str, user_id: str, tool: str, arguments: dict[str, Any]) -> Any:
        proposed.append((tenant, user_id, tool, arguments))
        return {"proposal_id": f"prop_{len(proposed)}", "status": "pending"}

    executor = ToolExecutor(registry(written))
    server = build_mcp_server(executor, publish_writes=True, propose=propose)
    async with Client(server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == {"get_order", "cancel_order", "issue_refund"}
        assert _hints(listed["cancel_order"]) == (False, True, False)
        assert _hints(listed["issue_refund"]) == (False, False, True)
        assert listed["issue_refund"].input_schema["required"] == ["order_id", "user_id"]

        cancel = {"order_id": "202405180001", "user_id": "u1", "tenant": "acme"}
        answer = await client.call_tool("cancel_order", cancel)
        assert not answer.is_error
        assert answer.structured_content == {"proposal_id": "prop_1", "status": "pending"}
        refund = await client.call_tool("issue_refund", {"order_id": "1", "user_id": "u2"})
        assert refund.structured_content == {"proposal_id": "prop_2", "status": "pending"}
        bad = await client.call_tool("cancel_order", {"order_id": "x", "user_id": "u1"})
        assert bad.is_error and "order_id: pattern" in bad.content[0].text
    # The customer is stripped where the tool does not take it, kept where it does.
    assert proposed == [
        ("acme", "u1", "cancel_order", {"order_id": "202405180001"}),
        ("default", "u2", "issue_refund", {"order_id": "1", "user_id": "u2"}),
    ]
    assert written == []  # nothing ran

    refusing = build_mcp_server(executor, publish_writes=True)
    async with Client(refusing) as client:
        refused = await client.call_tool(
            "cancel_order", {"order_id": "202405180001", "user_id": "u1"}
        )
        assert refused.is_error and "approval" in refused.content[0].text
    assert written == []
    await executor.aclose()


async def test_the_demo_packs_orders_are_checked_against_the_named_customer(
    backend: Any, backend_url: str
) -> None:
    async with httpx.AsyncClient() as http:
        executor = ToolExecutor(demo_registry(backend_url, http))
        async with Client(build_mcp_server(executor)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "get_order" in names and "create_return" not in names
            # 202405150456 belongs to u1002.
            theirs = await client.call_tool(
                "get_order", {"order_id": "202405150456", "user_id": "u1001"}
            )
            assert theirs.structured_content == {"status": "not_found", "message": "no such record"}
            assert "u1002" not in theirs.content[0].text
            own = await client.call_tool(
                "get_order", {"order_id": "202405150456", "user_id": "u1002"}
            )
            assert not own.is_error and own.structured_content["amount"] == 89.0
        await executor.aclose()


async def test_hermes_desk_mcp_serve_over_stdio() -> None:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve"])
    async with Client(params, read_timeout_seconds=60) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert {"get_order", "get_shipment", "kb_search"} <= set(listed)
        assert not {"create_return", "issue_refund", "send_sms_code"} & set(listed)
        assert all(t.annotations.read_only_hint for t in listed.values())
        found = await client.call_tool("kb_search", {"query": "发票", "user_id": "u1001"})
        assert not found.is_error
        refused = await client.call_tool("get_order", {"order_id": "not-an-id", "user_id": "u1"})
        assert refused.is_error  # validated before any backend call


async def test_mcp_serve_publishes_writes_when_configured_and_only_proposes_them(
    tmp_path: Path,
) -> None:
    env = {
        **os.environ,
        "HERMES_MCP__PUBLISH_WRITES": "true",
        "HERMES_SERVICE__DATA_DIR": str(tmp_path),
    }
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve"], env=env)
    async with Client(params, read_timeout_seconds=60) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert _hints(listed["create_return"]) == (False, False, True)  # de-duplicated by key
        assert _hints(listed["get_order"]) == (True, False, True)
        ret = {"order_id": "202405181001", "reason": "尺码不合适", "user_id": "u1001"}
        proposed = await client.call_tool("create_return", ret)
    assert not proposed.is_error
    assert proposed.structured_content is not None
    assert proposed.structured_content["status"] == "pending"
    assert "approval" in proposed.structured_content["message"]
    assert (tmp_path / "actions.db").exists(), "kept in the service's own proposal store"


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [*CLI, "mcp", "serve", "--transport", "http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


async def test_hermes_desk_mcp_serve_over_http(http_server: str) -> None:
    end = time.monotonic() + 60
    while True:
        try:
            async with Client(http_server, read_timeout_seconds=30) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                found = await client.call_tool("kb_search", {"query": "运费", "user_id": "u1"})
            break
        except Exception:
            if time.monotonic() > end:
                raise
            await anyio.sleep(0.3)
    assert "kb_search" in names and "get_order" in names
    assert not found.is_error
