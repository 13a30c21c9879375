"""The assembled runtime in-process, with a fake clock: expiry hands key facts to memory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from demo_backend import BackendState, business_today
from demo_backend import create_app as create_backend
from hermes_desk.config import Settings
from hermes_desk.errors import NotFoundError
from hermes_desk.runtime import Runtime, build_runtime
from hermes_desk.testing import FakeClock
from hermes_desk.testing.servers import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("pack_model_dir")]


@pytest.fixture(scope="module")
def backend_url() -> Iterator[str]:
    with serve_in_thread(create_backend(BackendState(today=business_today()))) as url:
        yield url


@pytest.fixture
async def runtime(
    tmp_path: Path, backend_url: str, fake_clock: FakeClock
) -> AsyncIterator[Runtime]:
    settings = Settings(service={"data_dir": tmp_path, "backend_url": backend_url})
    built = build_runtime(settings, clock=fake_clock)
    await built.start()
    yield built
    await built.stop()


async def test_idle_expiry_archives_and_promotes_key_facts(
    runtime: Runtime, fake_clock: FakeClock
) -> None:
    assert runtime.assistant is not None
    session = await runtime.sessions.create("default", "u1001")
    out = await runtime.assistant.turn(
        "default", "u1001", session.id, "物流已经超过7天了，我很生气"
    )
    assert any(f["key"] == "logistics_delay_days" and f["is_key_fact"] for f in out.key_facts)
    assert await runtime.memory.notes("default", "u1001") == [], "short-term until the end"

    fake_clock.advance(14 * 60)
    assert await runtime.sessions.sweep() == 0, "idle, not since creation: still open"
    fake_clock.advance(2 * 60)
    assert await runtime.sessions.sweep() == 1
    notes = await runtime.memory.notes("default", "u1001")
    assert [(n.key, n.value) for n in notes] == [("logistics_delay_days", 7)]
    with pytest.raises(NotFoundError):
        await runtime.sessions.get("default", "u1001", session.id)
    assert runtime.sessions.archive is not None
    archived = await runtime.sessions.archive.get("default", "u1001", session.id)
    assert archived is not None and archived["reason"] == "expired"
    assert "超过7天" in str(archived["transcript"])
    assert await runtime.sessions.archive.get("default", "u1002", session.id) is None


async def test_notes_decay_below_the_floor_after_days(
    runtime: Runtime, fake_clock: FakeClock
) -> None:
    assert runtime.assistant is not None
    session = await runtime.sessions.create("default", "u1002")
    await runtime.assistant.turn("default", "u1002", session.id, "以后不要给我打电话")
    await runtime.sessions.close("default", "u1002", session.id)
    [note] = await runtime.memory.notes("default", "u1002")
    fake_clock.advance(34.66 * 3600)
    [half] = await runtime.memory.notes("default", "u1002")
    assert half.confidence == pytest.approx(note.confidence / 2, rel=0.01)
    fake_clock.advance(48 * 3600)
    assert await runtime.memory.notes("default", "u1002") == []
