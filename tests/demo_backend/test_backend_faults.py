"""Fault injection per endpoint: errors, latency, hangs, the wildcard, and clearing."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from demo_backend import BackendState, FaultConfig, create_app
from hermes_desk.testing.servers import serve_in_thread

TICKET = {"user_id": "u1001", "summary": "投诉快递员态度", "idempotency_key": "t-1"}


def _wait_for(predicate: object, what: str, limit_s: float = 10.0) -> None:
    """Poll a condition the server reaches on its own; the limit only bounds a broken run."""
    assert callable(predicate)
    deadline = time.monotonic() + limit_s
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        time.sleep(0.01)


def test_error_rate_one_always_fails_and_does_no_work(
    client: httpx.Client, state: BackendState
) -> None:
    assert client.put("/_faults/create_ticket", json={"error_rate": 1.0}).status_code == 200
    for _ in range(3):
        response = client.post("/tickets", json=TICKET)
        assert response.status_code == 503
        assert response.json() == {"error": "injected fault", "endpoint": "create_ticket"}
    assert state.tickets == {}
    # Other endpoints are unaffected.
    assert client.get("/orders/202405201234").status_code == 200
    assert client.delete("/_faults/create_ticket").json() == {"cleared": True}
    assert client.post("/tickets", json=TICKET).status_code == 200
    assert client.post("/tickets", json=TICKET).status_code == 200
    entries = client.get("/_log").json()["entries"]
    outcomes = [e["outcome"] for e in entries if e["endpoint"] == "create_ticket"]
    assert outcomes == ["fault", "fault", "fault", "executed", "replayed"]
    assert len(state.tickets) == 1


def test_custom_status_code(client: httpx.Client) -> None:
    client.put("/_faults/get_order", json={"error_rate": 1, "status_code": 500})
    assert client.get("/orders/202405201234").status_code == 500


def test_error_rate_is_random_but_seeded() -> None:
    def run(seed: int) -> list[int]:
        state = BackendState(seed=seed)
        with serve_in_thread(create_app(state)) as url, httpx.Client(base_url=url) as http:
            http.put("/_faults/health", json={"error_rate": 0.5})
            return [http.get("/health").status_code for _ in range(40)]

    first, again = run(42), run(42)
    assert first == again
    assert set(first) == {200, 503}


class _Always(random.Random):
    def random(self) -> float:
        return 0.0


def test_injected_rng_decides_error_rolls() -> None:
    state = BackendState(rng=_Always())
    assert state.faults.roll_error(FaultConfig(error_rate=0.01)) is True
    assert state.faults.roll_error(FaultConfig(error_rate=0.0)) is False


class _RecordingSleep:
    """An instant async sleep that records what was asked, and can signal the first call."""

    def __init__(self, *, real: bool = False) -> None:
        self.calls: list[float] = []
        self.started = threading.Event()
        self.real = real

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        self.started.set()
        await asyncio.sleep(seconds if self.real else 0)


def test_latency_is_applied_before_answering() -> None:
    sleep = _RecordingSleep()
    state = BackendState(seed=1, sleep=sleep)
    with serve_in_thread(create_app(state)) as url, httpx.Client(base_url=url) as http:
        http.put("/_faults/get_shipment", json={"latency_ms": 250})
        response = http.get("/shipments/202405201234")
        assert response.status_code == 200
        assert sleep.calls == [0.25]
        http.get("/orders/202405201234")
        assert sleep.calls == [0.25]


@pytest.fixture
def hang_sleep() -> _RecordingSleep:
    return _RecordingSleep(real=True)


@pytest.fixture
def hanging_state(hang_sleep: _RecordingSleep) -> BackendState:
    return BackendState(seed=1, sleep=hang_sleep)


@pytest.fixture
def hanging_url(hanging_state: BackendState) -> Iterator[str]:
    with serve_in_thread(create_app(hanging_state)) as url:
        yield url
        # Release anything still hanging so the server can stop at once.
        httpx.delete(f"{url}/_faults")


def test_timeout_hangs_and_a_client_that_gives_up_changes_nothing(
    hanging_url: str, hanging_state: BackendState
) -> None:
    with httpx.Client(base_url=hanging_url, timeout=10) as http:
        http.put("/_faults/create_ticket", json={"timeout": True, "hang_s": 30})
        with pytest.raises(httpx.TimeoutException):
            http.post("/tickets", json=TICKET, timeout=0.3)
        # The server notices the client left, records a fault, and never does the work.
        _wait_for(lambda: hanging_state.log.last_seq >= 1, "the hang is logged")
        entry = hanging_state.log.since(0)[0]
        assert (entry["endpoint"], entry["outcome"], entry["status"]) == (
            "create_ticket",
            "fault",
            504,
        )
        assert entry["idempotency_key"] == "t-1"
        assert hanging_state.tickets == {}
        # The server stayed responsive during the hang.
        assert http.get("/health").status_code == 200
        http.delete("/_faults")
        retry = http.post("/tickets", json=TICKET)
        assert retry.status_code == 200
        assert len(hanging_state.tickets) == 1


def test_clearing_a_timeout_releases_the_hanging_request(
    hanging_url: str, hanging_state: BackendState, hang_sleep: _RecordingSleep
) -> None:
    result: dict[str, httpx.Response] = {}
    with httpx.Client(base_url=hanging_url, timeout=20) as http:
        http.put("/_faults/get_order", json={"timeout": True, "hang_s": 30, "error_rate": 1})

        def call() -> None:
            with httpx.Client(base_url=hanging_url, timeout=20) as other:
                result["response"] = other.get("/orders/202405201234")

        worker = threading.Thread(target=call)
        worker.start()
        assert hang_sleep.started.wait(timeout=10), "the request never started hanging"
        assert "response" not in result
        http.delete("/_faults/get_order")
        worker.join(timeout=15)
    assert result["response"].status_code == 200
    assert result["response"].json()["order_id"] == "202405201234"


def test_hang_then_answer_normally() -> None:
    sleep = _RecordingSleep()
    state = BackendState(seed=1, sleep=sleep)
    with serve_in_thread(create_app(state)) as url, httpx.Client(base_url=url) as http:
        http.put("/_faults/get_order", json={"timeout": True, "hang_s": 0.2})
        response = http.get("/orders/202405201234")
        assert response.status_code == 200
        assert sum(sleep.calls) == pytest.approx(0.2)
        assert state.log.since(0)[-1]["outcome"] == "executed"


def test_wildcard_applies_to_all_and_own_fault_wins(client: httpx.Client) -> None:
    client.put("/_faults/*", json={"error_rate": 1, "status_code": 502})
    assert client.get("/health").status_code == 502
    assert client.get("/users/u1001").status_code == 502
    client.put("/_faults/health", json={"error_rate": 0})
    assert client.get("/health").status_code == 200
    assert client.get("/users/u1001").status_code == 502
    # Control routes are never faulted.
    assert client.get("/_faults").status_code == 200
    assert client.delete("/_faults").json() == {"cleared": True}
    assert client.get("/users/u1001").status_code == 200


def test_fault_admin(client: httpx.Client) -> None:
    listing = client.get("/_faults").json()
    assert listing["faults"] == {}
    assert "get_order" in listing["endpoints"] and "send_sms" in listing["endpoints"]
    set_response = client.put("/_faults/send_sms", json={"latency_ms": 5})
    assert set_response.json()["fault"]["status_code"] == 503
    assert client.get("/_faults").json()["faults"]["send_sms"]["latency_ms"] == 5
    assert client.put("/_faults/no_such_thing", json={}).status_code == 404
    assert client.put("/_faults/send_sms", json={"error_rate": 2}).status_code == 422
    assert client.put("/_faults/send_sms", json={"latency_ms": -1}).status_code == 422
    assert client.delete("/_faults/get_user").json() == {"cleared": False}
    assert client.delete("/_faults/send_sms").json() == {"cleared": True}
    assert client.get("/_faults").json()["faults"] == {}
