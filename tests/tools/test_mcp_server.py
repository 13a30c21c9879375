"""``hermes-desk mcp serve`` and ``build_mcp_server`` seen through the official SDK's client."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from hermes_desk.testing.servers import free_port
from hermes_desk.tools.binding import PythonBinding
from hermes_desk.tools.executor import ToolExecutor
from hermes_desk.tools.mcp_server import NOTES_TOOL, build_mcp_server
from hermes_desk.tools.registry import ToolRegistry
from hermes_desk.tools.spec import BindingSpec, ToolSpec

pytestmark = pytest.mark.anyio

CLI = [sys.executable, "-c", "from hermes_desk.cli.main import main; main()"]
PARAMS = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "pattern": "^[0-9]{12}$"}},
    "required": ["order_id"],
    "additionalProperties": False,
}


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    async def get_order(order_id: str) -> dict[str, Any]:
        return {"order_id": order_id, "status": "shipped"}

    reg.add(
        ToolSpec(
            name="get_order",
            description="查询订单",
            parameters=PARAMS,
            binding=BindingSpec(kind="python"),
            response_format={"type": "object", "required": ["status"]},
            fallback="订单系统繁忙，请稍后再试。",
        ),
        PythonBinding(get_order),
    )
    return reg


async def notes(tenant: str, user_id: str) -> list[str]:
    return [f"{tenant}/{user_id}: 物流已延迟 7 天"]


async def test_in_process_list_and_call_go_through_the_executor() -> None:
    executor = ToolExecutor(registry())
    server = build_mcp_server(executor, notes=notes)
    async with Client(server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == {"get_order", NOTES_TOOL}
        assert listed["get_order"].input_schema == PARAMS
        ok = await client.call_tool("get_order", {"order_id": "202405180001"})
        assert not ok.is_error
        assert ok.structured_content == {"order_id": "202405180001", "status": "shipped"}
        bad = await client.call_tool("get_order", {"order_id": "12"})
        assert bad.is_error
        assert bad.content[0].text == "订单系统繁忙，请稍后再试。"  # the tool's fallback
        got = await client.call_tool(NOTES_TOOL, {"user_id": "u1"})
        assert got.structured_content == {"notes": ["default/u1: 物流已延迟 7 天"]}
    await executor.aclose()


async def test_hermes_desk_mcp_serve_over_stdio() -> None:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve"])
    async with Client(params, read_timeout_seconds=60) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"get_order", "get_shipment", "kb_search"} <= names
        found = await client.call_tool("kb_search", {"query": "发票"})
        assert not found.is_error
        refused = await client.call_tool("get_order", {"order_id": "not-an-id"})
        assert refused.is_error  # validated before any backend call


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
                found = await client.call_tool("kb_search", {"query": "运费"})
            break
        except Exception:
            if time.monotonic() > end:
                raise
            await anyio.sleep(0.3)
    assert "kb_search" in names and "get_order" in names
    assert not found.is_error
