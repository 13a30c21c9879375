from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hermes_desk.config import MemorySettings
from hermes_desk.events import MemorySink
from hermes_desk.memory import KeyFactFilter, MemoryService, SqliteMemoryStore
from hermes_desk.testing import FakeClock


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def keyfacts() -> KeyFactFilter:
    return KeyFactFilter.bundled()


@pytest.fixture
def sink() -> MemorySink:
    return MemorySink()


@pytest.fixture
async def service(
    tmp_path: Path, fake_clock: FakeClock, keyfacts: KeyFactFilter, sink: MemorySink
) -> AsyncIterator[MemoryService]:
    store = SqliteMemoryStore.open(tmp_path / "memory.db")
    svc = MemoryService(store, MemorySettings(), clock=fake_clock, keyfacts=keyfacts, events=sink)
    yield svc
    await svc.close()
