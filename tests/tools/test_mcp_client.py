"""MCP servers' tools as Hermes Desk tools: a real example server process, stdio and HTTP."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from hermes_desk.config import McpServerSettings
from hermes_desk.events import MemorySink
from hermes_desk.testing.servers import free_port
from hermes_desk.tools.executor import ToolExecutor, ToolStatus
from hermes_desk.tools.mcp_binding import McpServerConnection, McpToolSource, mcp_tool_specs
from hermes_desk.tools.registry import ToolRegistry

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp_server" / "inventory_server.py"
STDIO = McpServerSettings(name="inventory", command=[sys.executable, str(EXAMPLE)], timeout_s=30)


def start_http(port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)


async def wait_ready(settings: McpServerSettings, deadline_s: float = 30.0) -> None:
    connection = McpServerConnection(settings)
    end = time.monotonic() + deadline_s
    while not await connection.ping(5):
        if time.monotonic() > end:
            raise RuntimeError("the example MCP server did not start")
        await anyio.sleep(0.2)


@pytest.fixture
def http_port() -> Iterator[int]:
    yield free_port()


async def test_stdio_server_tools_are_listed_validated_gated_and_called() -> None:
    registry = ToolRegistry()
    source = McpToolSource([STDIO])
    added = await source.refresh(registry)
    assert sorted(added) == ["get_stock", "list_skus"]
    spec = registry.get("get_stock")
    assert spec is not None
    assert spec.spec.parameters["required"] == ["sku"]
    assert spec.spec.response_format is not None  # the server's outputSchema
    assert spec.spec.binding.kind == "mcp"
    assert spec.spec.effect == "write"  # the example server gives no readOnlyHint

    sink = MemorySink()
    executor = ToolExecutor(registry, events=sink)
    ok = await executor.execute(
        {"name": "get_stock", "arguments": {"sku": "SKU-1001"}},
        request_id="s1",
        allowed_tools=["get_stock"],
    )
    assert ok.status is ToolStatus.OK
    assert ok.result["stock"] == 42 and ok.result["in_stock"] is True

    bad = await executor.execute(
        {"name": "get_stock", "arguments": {"sku": 7}}, request_id="s1", allowed_tools=None
    )
    assert bad.status is ToolStatus.INVALID_ARGS  # refused before anything is sent

    gated = await executor.execute(
        {"name": "get_stock", "arguments": {"sku": "SKU-1001"}},
        request_id="s1",
        allowed_tools=["list_skus"],
    )
    assert gated.status is ToolStatus.NOT_ALLOWED

    unknown = await executor.execute(
        {"name": "get_stock", "arguments": {"sku": "SKU-9"}}, request_id="s1", allowed_tools=None
    )
    assert unknown.status is ToolStatus.ERROR and unknown.fallback
    statuses = [e.data.get("status") for e in sink.events("s1")]
    assert statuses.count("ok") == 1 and "invalid_args" in statuses
    await executor.aclose()


async def test_http_server_killed_and_back(http_port: int) -> None:
    settings = McpServerSettings(
        name="inventory", url=f"http://127.0.0.1:{http_port}/mcp", timeout_s=10
    )
    registry = ToolRegistry()
    source = McpToolSource([settings])
    # down at start: recorded, retried on the next refresh
    assert await source.refresh(registry) == []
    assert "inventory" in source.errors

    proc = start_http(http_port)
    try:
        await wait_ready(settings)
        assert sorted(await source.refresh(registry)) == ["get_stock", "list_skus"]
        assert source.errors == {}
        executor = ToolExecutor(registry)
        call = {"name": "get_stock", "arguments": {"sku": "SKU-1003"}}
        first = await executor.execute(call, request_id="s", allowed_tools=None)
        assert first.status is ToolStatus.OK and first.result["stock"] == 7

        stop(proc)
        down = await executor.execute(call, request_id="s", allowed_tools=None)
        assert down.status in {ToolStatus.ERROR, ToolStatus.TIMEOUT}
        assert down.fallback

        proc = start_http(http_port)
        await wait_ready(settings)
        back = await executor.execute(call, request_id="s", allowed_tools=None)
        assert back.status is ToolStatus.OK and back.result["stock"] == 7
        await executor.aclose()
    finally:
        stop(proc)


async def test_unreachable_server_health_is_false(http_port: int) -> None:
    settings = McpServerSettings(name="gone", url=f"http://127.0.0.1:{http_port}/mcp", timeout_s=3)
    assert await McpServerConnection(settings).ping(3) is False


def test_settings_need_exactly_one_transport() -> None:
    from hermes_desk.config import Settings
    from hermes_desk.errors import ConfigError

    with pytest.raises(ConfigError):
        Settings.load(llm={"mcp_servers": [{"name": "x"}]})
    with pytest.raises(ConfigError):
        Settings.load(llm={"mcp_servers": [{"name": "x", "command": ["a"], "url": "http://x"}]})


def test_mcp_is_imported_lazily() -> None:
    code = (
        "import sys, hermes_desk.tools.mcp_binding, hermes_desk.tools.mcp_server, "
        "hermes_desk.cli.mcp; print('mcp' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_remote_tool_reads_only_when_its_annotations_say_read_only() -> None:
    from mcp_types import Tool, ToolAnnotations

    schema = {"type": "object", "properties": {"sku": {"type": "string"}}}
    listed = [
        Tool(name="look", input_schema=schema, annotations=ToolAnnotations(read_only_hint=True)),
        Tool(
            name="reserve",
            input_schema=schema,
            annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True),
        ),
        Tool(name="mystery", input_schema=schema),  # no annotations: the safe side
        Tool(name="vague", input_schema=schema, annotations=ToolAnnotations(title="?")),
    ]
    specs = mcp_tool_specs(McpServerConnection(STDIO), listed)
    assert {spec.name: spec.effect for spec, _ in specs} == {
        "look": "read", "reserve": "write", "mystery": "write", "vague": "write",
    }  # fmt: skip
