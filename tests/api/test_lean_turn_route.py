"""The turns' lean handler (``TurnRoute``) answers exactly as FastAPI's own handler would: it
resolves every dependency the route has, and every request it does not take itself — and every
refusal — gets FastAPI's answer, byte for byte."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import iter_route_contexts
from tests.api.conftest import API_KEY, Api, contract_settings

from demo_backend import BackendState, business_today
from demo_backend import create_app as create_backend
from hermes_desk.api.app import create_app
from hermes_desk.api.deps import get_runtime
from hermes_desk.api.routes.turns import LEAN_DEPENDENCIES, TurnRoute
from hermes_desk.testing.servers import serve_in_thread


@dataclass
class Served(Api):
    app: FastAPI

    @contextmanager
    def fastapis_handler(self) -> Iterator[None]:
        """Every request to FastAPI's own handler: a dependency overridden with itself."""
        self.app.dependency_overrides[get_runtime] = get_runtime
        try:
            yield
        finally:
            self.app.dependency_overrides.clear()

    def both(self, path: str, **request: Any) -> tuple[httpx.Response, httpx.Response]:
        """The request answered by the lean handler, then by FastAPI's."""
        lean = self.client.post(path, **request)
        with self.fastapis_handler():
            checked = self.client.post(path, **request)
        return lean, checked


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, pack_model_dir: Path) -> Iterator[Served]:
    with serve_in_thread(create_backend(BackendState(today=business_today()))) as backend_url:
        settings = contract_settings(
            data_dir=tmp_path_factory.mktemp("lean"), backend_url=backend_url
        )
        app = create_app(settings)
        with (
            serve_in_thread(app) as url,
            httpx.Client(base_url=url, headers={"X-API-Key": API_KEY}, timeout=60) as client,
        ):
            yield Served(url, settings, client, app)


def _calls(dependant: Dependant) -> set[Any]:
    found: set[Any] = set()
    for sub in dependant.dependencies:
        found |= {sub.call} | _calls(sub)
    return found


def test_the_lean_handler_resolves_every_dependency_of_the_route(served: Served) -> None:
    (route,) = [
        r
        for r in iter_route_contexts(list(served.app.routes))
        if isinstance(r.original_route, TurnRoute)
    ]
    assert _calls(route.dependant) == set(LEAN_DEPENDENCIES)
    assert [p.name for p in route.dependant.path_params] == ["session_id"]
    assert [p.name for p in route.dependant.body_params] == ["body"]
    assert not route.dependant.query_params and not route.dependant.header_params


_JSON = {"content-type": "application/json"}
REFUSED: list[dict[str, Any]] = [
    {"json": {"user_id": "u1001"}},  # no text
    {"json": {"user_id": "u1001", "text": 7}},  # strict: not a string
    {"json": {"user_id": "u1001", "text": "hi", "speaker": "robot"}},
    {"json": {"user_id": "u1001", "text": "hi", "extra": 1}},  # extra fields forbidden
    {"json": {"user_id": "not a valid id!", "text": "hi"}},
    {"json": [{"user_id": "u1001", "text": "hi"}]},  # an array
    {"json": "hi"},
    {"content": b'{"user_id": "u1001", "text": NaN}', "headers": _JSON},
    {"content": b"", "headers": _JSON},
    {"content": b'{"user_id": "u1001", "text": "hi"}', "headers": {"content-type": "text/plain"}},
    {"json": {"user_id": "u1001", "text": "   "}},  # blank: the assistant's own refusal
    {"json": {"user_id": "u1001", "text": "hi"}, "headers": {"X-API-Key": "wrong-key"}},
]


@pytest.mark.parametrize("request_", REFUSED, ids=range(len(REFUSED)))
def test_a_refused_turn_gets_fastapis_answer_byte_for_byte(
    served: Served, request_: dict[str, Any]
) -> None:
    sid = served.open_session("u1001")
    lean, checked = served.both(f"/v1/sessions/{sid}/turns", **request_)
    assert lean.status_code == checked.status_code and lean.status_code >= 400, lean.text
    assert lean.content == checked.content


def test_unknown_and_closed_sessions_are_refused_alike(served: Served) -> None:
    body = {"json": {"user_id": "u1002", "text": "我的订单到哪了"}}
    lean, checked = served.both("/v1/sessions/ses_nosuchsession/turns", **body)
    assert (lean.status_code, lean.content) == (checked.status_code, checked.content)
    assert lean.status_code == 404
    sid = served.open_session("u1002")
    assert served.client.delete(f"/v1/sessions/{sid}", params={"user_id": "u1002"}).is_success
    lean, checked = served.both(f"/v1/sessions/{sid}/turns", **body)
    assert lean.status_code == checked.status_code == 409
    assert lean.json()["error"] == checked.json()["error"]


def test_a_turn_is_answered_alike_by_both_handlers(served: Served) -> None:
    texts = ("我的订单202405201234现在什么状态？", "那物流呢")
    lean_sid, checked_sid = served.open_session("u1003"), served.open_session("u1004")
    for text in texts:
        lean = served.client.post(
            f"/v1/sessions/{lean_sid}/turns", json={"user_id": "u1003", "text": text}
        )
        with served.fastapis_handler():
            checked = served.client.post(
                f"/v1/sessions/{checked_sid}/turns", json={"user_id": "u1004", "text": text}
            )
        assert lean.status_code == checked.status_code == 200, (lean.text, checked.text)
        first, second = lean.json(), checked.json()
        assert set(first) == set(second)
        for answer in (first, second):
            answer["intent"].pop("latency_ms")
        assert first["intent"] == second["intent"] and first["turn_index"] == second["turn_index"]
        assert [c["tool"] for c in first["tool_calls"]] == [c["tool"] for c in second["tool_calls"]]
