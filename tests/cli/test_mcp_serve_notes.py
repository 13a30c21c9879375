"""``hermes-desk mcp serve`` publishes the customers' notes from the service's memory store."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from hermes_desk.clock import SystemClock
from hermes_desk.config import MemorySettings
from hermes_desk.memory import CandidateFact, MemoryService, SqliteMemoryStore

pytestmark = pytest.mark.anyio

CLI = [sys.executable, "-c", "from hermes_desk.cli.main import main; main()"]


async def test_customer_notes_come_from_the_memory_store(tmp_path: Path) -> None:
    store = SqliteMemoryStore.open(tmp_path / "hermes.db")
    memory = MemoryService(store, MemorySettings(), clock=SystemClock())
    await memory.remember("default", "u1001", CandidateFact("logistics_delay_days", 7), "ses_1")
    await memory.close()

    env = {**os.environ, "HERMES_SERVICE__DATA_DIR": str(tmp_path)}
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "serve"], env=env)
    async with Client(params, read_timeout_seconds=60) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "customer_notes" in names
        mine = await client.call_tool("customer_notes", {"user_id": "u1001"})
        other = await client.call_tool("customer_notes", {"user_id": "u1002"})
    assert not mine.is_error
    assert mine.structured_content is not None
    [note] = mine.structured_content["notes"]
    assert note["key"] == "logistics_delay_days" and note["value"] == 7
    assert other.structured_content == {"notes": []}
