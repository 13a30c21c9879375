"""WebSocket tickets across workers: two services (two "workers") sharing the session backend,
a ticket issued by one opens one socket on either, never a second one on the other; a store
that does not answer grants nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from tests.api.conftest import Service
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from hermes_desk.api.app import create_app
from hermes_desk.api.tickets import TicketBook
from hermes_desk.config import Settings
from hermes_desk.errors import BackendUnavailableError
from hermes_desk.testing.servers import serve_in_thread

pytestmark = pytest.mark.anyio

KEY = "key-of-acme-0123456789"
KEYS = {KEY: "acme"}


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def workers(
    request: pytest.FixtureRequest, tmp_path: Path, model_dir: Path, backend_url: str
) -> Iterator[tuple[Service, Service]]:
    """Two services on one session backend: one data folder (SQLite) or one Redis database."""
    sessions: dict[str, str] = {"store": "sqlite"}
    if request.param == "redis":
        sessions = {"store": "redis", "redis_url": request.getfixturevalue("redis_url")}
    with ExitStack() as stack:
        pair = []
        for name in ("one", "two"):
            data_dir = tmp_path if request.param == "sqlite" else tmp_path / name
            settings = Settings(
                service={"data_dir": data_dir, "backend_url": backend_url, "api_keys": KEYS},
                sessions=sessions,
                nlu={"model_dir": model_dir},
                workflows={"watchdog_interval_s": 3600},
            )
            url = stack.enter_context(serve_in_thread(create_app(settings)))
            pair.append(Service(url, backend_url, settings))
        yield pair[0], pair[1]


async def _first(socket: ClientConnection) -> dict[str, object]:
    message = json.loads(await socket.recv())
    assert isinstance(message, dict)
    return message


async def _closed_with(socket: ClientConnection) -> int | None:
    with pytest.raises(ConnectionClosed):
        while True:
            await socket.recv()
    return socket.close_code


async def test_a_ticket_used_on_one_worker_is_refused_on_the_other(
    workers: tuple[Service, Service],
) -> None:
    one, two = workers
    async with httpx.AsyncClient(base_url=one.url, headers={"x-api-key": KEY}) as http:
        opened = await http.post("/v1/sessions", json={"user_id": "u1001"})
        sid = opened.json()["session_id"]
        issued = await http.post(f"/v1/sessions/{sid}/ws-ticket", json={"user_id": "u1001"})
        ticket = issued.json()["ticket"]
        spare = await http.post(f"/v1/sessions/{sid}/ws-ticket", json={"user_id": "u1001"})
    async with connect(two.ws_url(sid, user_id="u1001", ticket=ticket)) as socket:
        ready = await _first(socket)
        assert ready["type"] == "ready" and ready["session_id"] == sid
    for worker in (one, two):
        async with connect(worker.ws_url(sid, user_id="u1001", ticket=ticket)) as socket:
            refused = await _first(socket)
            assert refused["type"] == "error", "one socket per ticket, on any worker"
            assert await _closed_with(socket) == 4401
    # Another ticket for the same session still opens its one socket, here on the first worker.
    async with connect(one.ws_url(sid, user_id="u1001", ticket=spare.json()["ticket"])) as socket:
        assert (await _first(socket))["type"] == "ready"


async def test_a_ticket_store_that_does_not_answer_grants_nothing() -> None:
    from hermes_desk.api.ticket_redis_store import RedisTicketUseStore

    book = TicketBook(KEYS, uses=RedisTicketUseStore("redis://127.0.0.1:1/0"))  # nothing there
    ticket, _ = book.issue("acme", "s1", "u1001", now=1000.0)
    try:
        with pytest.raises(BackendUnavailableError, match="ticket store"):
            await book.redeem(ticket, session_id="s1", user="u1001", now=1001.0)
    finally:
        await book.aclose()
