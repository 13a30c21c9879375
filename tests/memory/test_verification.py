"""Double sign: model facts wait in pending until a verifier (over real HTTP) or a person signs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI, HTTPException

from hermes_desk.events import MemorySink
from hermes_desk.memory import (
    FactStatus,
    HttpSupportsVerifier,
    MemoryService,
    VerificationScheduler,
    VerifierRegistry,
)
from hermes_desk.memory.fact import Fact
from hermes_desk.testing import FakeClock
from hermes_desk.testing.servers import free_port, serve_in_thread

pytestmark = pytest.mark.anyio

T, U = "acme", "u_12345"
SUPPORTED = {"apple_pay": True, "alipay": True, "cash_on_delivery": False}


@pytest.fixture(scope="module")
def backend_url() -> Iterator[str]:
    app = FastAPI()

    @app.get("/users/{user_id}/supports/{feature}")
    def supports(user_id: str, feature: str) -> dict[str, object]:
        if feature not in SUPPORTED:
            raise HTTPException(404, "unknown feature")
        return {"feature": feature, "supported": SUPPORTED[feature]}

    @app.get("/lines/{feature}/for/{user_id}")
    def line_feature(user_id: str, feature: str) -> dict[str, object]:
        return {"feature": feature, "supported": user_id == U and feature == "roaming"}

    with serve_in_thread(app) as url:
        yield url


async def test_the_verifier_asks_the_path_a_pack_gives(
    service: MemoryService, backend_url: str
) -> None:
    verifier = HttpSupportsVerifier(backend_url, prefix="has_", path="/lines/{feature}/for/{user}")
    try:
        roaming = await service.propose(T, U, "has_roaming", True, 0.9, "s1")
        volte = await service.propose(T, U, "has_volte", True, 0.9, "s1")
        assert await verifier.verify(roaming) is True
        assert await verifier.verify(volte) is False
        other = await service.propose(T, U, "supports_alipay", True, 0.9, "s1")
        assert await verifier.verify(other) is None, "another prefix is not its to check"
    finally:
        await verifier.aclose()


async def test_pending_facts_are_verified_or_rejected_by_the_backend(
    service: MemoryService, fake_clock: FakeClock, sink: MemorySink, backend_url: str
) -> None:
    wrong = await service.propose(T, U, "supports_apple_pay", False, 0.9, "s1")  # stale model
    right = await service.propose(T, U, "supports_alipay", True, 0.8, "s1")
    unknown = await service.propose(T, U, "supports_crypto", True, 0.8, "s1")
    free = await service.propose(T, U, "favourite_colour", "blue", 0.8, "s1")
    assert {f.status for f in (wrong, right, unknown, free)} == {FactStatus.PENDING}
    assert await service.notes(T, U) == []

    verifier = HttpSupportsVerifier(backend_url)
    registry = VerifierRegistry()
    registry.register("supports_*", verifier)
    scheduler = VerificationScheduler(service, registry, clock=fake_clock)
    try:
        counts = await scheduler.run_once()
    finally:
        await verifier.aclose()
    assert counts == {"verified": 1, "rejected": 2, "undecided": 0, "no_verifier": 1}
    status = {f.key: f.status for f in await service.facts(T, U)}
    assert status == {
        "supports_apple_pay": FactStatus.REJECTED,
        "supports_alipay": FactStatus.ACTIVE,
        "supports_crypto": FactStatus.REJECTED,
        "favourite_colour": FactStatus.PENDING,
    }
    assert [n.key for n in await service.notes(T, U)] == ["supports_alipay"]
    assert {e.data["key"] for e in sink.events(name="memory.fact.rejected")} == {
        "supports_apple_pay",
        "supports_crypto",
    }
    assert [e.data["key"] for e in sink.events(name="memory.fact.verified")] == ["supports_alipay"]
    # a person signs what no verifier covers
    await service.approve(T, U, free.id)
    assert {n.key for n in await service.notes(T, U)} == {"supports_alipay", "favourite_colour"}


async def test_an_unreachable_backend_leaves_facts_pending(
    service: MemoryService, fake_clock: FakeClock
) -> None:
    await service.propose(T, U, "supports_alipay", True, 0.8)
    verifier = HttpSupportsVerifier(f"http://127.0.0.1:{free_port()}", timeout_s=1.0)
    registry = VerifierRegistry()
    registry.register("supports_*", verifier)
    try:
        counts = await VerificationScheduler(service, registry, clock=fake_clock).run_once()
    finally:
        await verifier.aclose()
    assert counts["undecided"] == 1
    assert [f.status for f in await service.facts(T, U)] == [FactStatus.PENDING]


class _Flaky:
    def __init__(self) -> None:
        self.calls = 0

    async def verify(self, fact: Fact) -> bool | None:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("boom")
        return True


async def test_the_schedule_runs_every_interval_and_survives_a_broken_verifier(
    service: MemoryService, fake_clock: FakeClock
) -> None:
    await service.propose(T, U, "supports_alipay", True, 0.8)
    registry = VerifierRegistry()
    registry.register("supports_*", _Flaky())
    slept: list[float] = []

    class Stop(Exception):
        pass

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        fake_clock.advance(seconds)
        if len(slept) == 2:
            raise Stop

    scheduler = VerificationScheduler(service, registry, clock=fake_clock, sleep=sleep)
    with pytest.raises(Stop):
        await scheduler.run_forever()
    assert slept == [300.0, 300.0]  # the default five minutes
    assert scheduler.runs == 2
    assert [f.status for f in await service.facts(T, U)] == [FactStatus.ACTIVE]


def test_registry_matches_globs_in_order() -> None:
    registry = VerifierRegistry()
    first, second = _Flaky(), _Flaky()
    registry.register("supports_*", first)
    registry.register("*", second)
    assert registry.for_key("supports_x") is first
    assert registry.for_key("other") is second
    assert registry.patterns() == ["supports_*", "*"]
