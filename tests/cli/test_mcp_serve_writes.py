"""``hermes-desk mcp serve`` with ``mcp.publish_writes``: a client's call of a write tool is a
proposal in the service's own store, which an agent approves in the service; nothing runs before."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from tests.e2e.conftest import make_settings

from demo_backend import BackendState, business_today
from demo_backend import create_app as create_backend
from hermes_desk.api.app import create_app
from hermes_desk.testing.servers import serve_in_thread

pytestmark = pytest.mark.anyio

CLI = [sys.executable, "-c", "from hermes_desk.cli.main import main; main()"]


async def _tickets_created(backend_url: str) -> list[dict[str, object]]:
    async with httpx.AsyncClient() as client:
        entries = (await client.get(f"{backend_url}/_log")).json()["entries"]
    return [e for e in entries if e["endpoint"] == "create_ticket" and e["outcome"] == "executed"]


async def test_a_client_write_waits_for_an_agent_then_runs_once(
    tmp_path: Path, pack_model_dir: Path
) -> None:
    with serve_in_thread(create_backend(BackendState(today=business_today()))) as backend_url:
        env = {
            **os.environ,
            "HERMES_SERVICE__DATA_DIR": str(tmp_path),
            "HERMES_SERVICE__BACKEND_URL": backend_url,
            "HERMES_MCP__PUBLISH_WRITES": "true",
        }
        params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve"], env=env)
        async with Client(params, read_timeout_seconds=60) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "create_ticket" in tools
            called = await client.call_tool(
                "create_ticket", {"user_id": "u1001", "summary": "客户投诉快递员态度差"}
            )
            bad = await client.call_tool("create_ticket", {"user_id": "u1001", "summary": ""})
        assert not called.is_error, called
        result = called.structured_content
        assert result is not None and result["status"] == "pending"
        assert "客户投诉快递员态度差" in result["explanation"]
        assert bad.is_error, "arguments are checked against the tool's schema before proposing"
        assert await _tickets_created(backend_url) == [], "nothing runs on a client's say-so"

        settings = make_settings(tmp_path, backend_url)
        with serve_in_thread(create_app(settings)) as url:
            async with httpx.AsyncClient(base_url=url, timeout=30) as service:
                pid = result["proposal_id"]
                mine, other = ({"user_id": "u1001"}, {"user_id": "u1002"})
                hidden = await service.get(f"/v1/proposals/{pid}", params=other)
                assert hidden.status_code == 404, "another customer's proposal is not found"
                shown = (await service.get(f"/v1/proposals/{pid}", params=mine)).json()
                assert shown["status"] == "proposed" and shown["tool"] == "create_ticket"
                assert shown["session_id"] is None
                done = await service.post(
                    f"/v1/proposals/{pid}/approve", json={**mine, "agent_id": "agent-7"}
                )
                assert done.status_code == 200, done.text
                assert done.json()["status"] == "executed"
        [ticket] = await _tickets_created(backend_url)
        assert ticket["idempotency_key"] == pid
