"""What the REST edge refuses (spec D2): lone surrogates and over-deep JSON anywhere, malformed
JSON — always 422 with the JSON error body, and nothing stored. Every error body is JSON."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from tests.api.conftest import Api

from hermes_desk.api.app import create_app
from hermes_desk.api.payload import MAX_DEPTH
from hermes_desk.config import Settings

JSON = {"content-type": "application/json"}
LONE = "\\ud800"  # a lone surrogate as JSON spells it
BAD_UTF8 = "%ED%A0%80"  # the same surrogate in a URL (UTF-8 has no encoding for it)


def _operations() -> list[tuple[str, str, bool]]:
    """(method, path, takes a body) of every operation the service documents."""
    document = create_app(Settings()).openapi()
    return [
        (method.upper(), path, "requestBody" in operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]


OPERATIONS = _operations()
WITH_BODY = [op for op in OPERATIONS if op[2]]
WITH_PARAMS = [op for op in OPERATIONS if "{" in op[1]]


def _path(template: str, value: str = "x1") -> str:
    return re.sub(r"\{[^}]+\}", value, template)


def _refused(response: httpx.Response, code: str, fragment: str = "") -> dict[str, Any]:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["code"] == code, error
    assert error["problems"], error
    assert fragment in error["message"], error
    return dict(error)


@pytest.mark.parametrize(("method", "path", "_body"), WITH_BODY, ids=lambda v: str(v))
def test_a_lone_surrogate_in_any_body_is_refused(
    api: Api, method: str, path: str, _body: bool
) -> None:
    raw = f'{{"user_id": "u1001", "note": "hi {LONE}"}}'
    response = api.client.request(method, _path(path), content=raw, headers=JSON)
    error = _refused(response, "invalid_text", "lone surrogate")
    assert error["problems"][0]["field"] == "note"
    key = api.client.request(method, _path(path), content=f'{{"{LONE}": 1}}', headers=JSON)
    _refused(key, "invalid_text")


@pytest.mark.parametrize(("method", "path", "_body"), WITH_BODY, ids=lambda v: str(v))
def test_json_nested_deeper_than_the_limit_is_refused(
    api: Api, method: str, path: str, _body: bool
) -> None:
    depth = MAX_DEPTH + 1
    raw = '{"user_id": "u1001", "inputs": ' + "[" * depth + "]" * depth + "}"
    _refused(api.client.request(method, _path(path), content=raw, headers=JSON), "too_deep")
    very = "[" * 100_00 + "]" * 100_00
    _refused(api.client.request(method, _path(path), content=very, headers=JSON), "too_deep")


@pytest.mark.parametrize(("method", "path", "_body"), WITH_BODY, ids=lambda v: str(v))
def test_malformed_json_is_refused_as_json(api: Api, method: str, path: str, _body: bool) -> None:
    for raw in (b'{"user_id": "u1001", ', b"\xff\xfe{}", b"not json"):
        _refused(api.client.request(method, _path(path), content=raw, headers=JSON), "invalid_json")


@pytest.mark.parametrize(("method", "path", "_body"), WITH_PARAMS, ids=lambda v: str(v))
def test_a_lone_surrogate_in_a_path_parameter_is_refused(
    api: Api, method: str, path: str, _body: bool
) -> None:
    response = api.client.request(method, _path(path, f"x{BAD_UTF8}"), params={"user_id": "u1"})
    assert _refused(response, "invalid_text")["problems"] == [
        {"field": "path", "message": "the path is not valid UTF-8 text"}
    ]


@pytest.mark.parametrize(("method", "path", "_body"), OPERATIONS, ids=lambda v: str(v))
def test_a_lone_surrogate_in_a_query_parameter_is_refused(
    api: Api, method: str, path: str, _body: bool
) -> None:
    url = f"{_path(path)}?user_id=u{BAD_UTF8}"
    error = _refused(api.client.request(method, url), "invalid_text")
    assert error["problems"] == [{"field": "user_id", "message": "not valid UTF-8 text"}]


def test_refused_turns_and_workflow_inputs_store_nothing(api: Api) -> None:
    sid = api.open_session("u1001")
    for raw in (
        f'{{"user_id": "u1001", "text": "hi {LONE}"}}',
        f'{{"user_id": "u1001", "text": "hi", "speaker": "agent{LONE}"}}',
        '{"user_id": "u1001", "text": ' + "[" * 40 + "]" * 40 + "}",
    ):
        response = api.client.post(f"/v1/sessions/{sid}/turns", content=raw, headers=JSON)
        assert response.status_code == 422, response.text
    assert api.transcript(sid, "u1001") == []
    started = api.client.post(
        "/v1/workflows",
        content=(
            '{"name": "password_reset", "user_id": "u1001", "session_id": "'
            + sid
            + f'", "inputs": {{"phone": "138{LONE}"}}}}'
        ),
        headers=JSON,
    )
    _refused(started, "invalid_text")
    session = api.client.get(f"/v1/sessions/{sid}", params={"user_id": "u1001"}).json()
    assert session["workflows"] == [], "the refused workflow was never started"
    # The session still reads and closes: nothing unstorable got in.
    assert api.client.delete(f"/v1/sessions/{sid}").status_code == 200


def test_a_refused_session_open_creates_nothing(api: Api) -> None:
    refused = api.client.post(
        "/v1/sessions", content=f'{{"user_id": "u2001", "x": "{LONE}"}}', headers=JSON
    )
    _refused(refused, "invalid_text")
    opened = api.client.post("/v1/sessions", json={"user_id": "u2001"})
    assert opened.status_code == 201, "no session was opened by the refused request"


@pytest.mark.parametrize(
    ("method", "url", "status"),
    [
        ("GET", "/nowhere", 404),
        ("POST", "/v1/nothing/here", 404),
        ("GET", "/v1/sessions/ses_unknown", 404),
        ("GET", "/v1/proposals/p_unknown?user_id=u1", 404),
        ("PUT", "/v1/tools", 405),
        ("PATCH", "/v1/sessions/ses_x", 405),
        ("DELETE", "/v1/tools", 405),
    ],
)
def test_every_error_is_a_json_body(api: Api, method: str, url: str, status: int) -> None:
    response = api.client.request(method, url)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] and error["message"]


def test_a_request_without_a_key_gets_401_json(api: Api) -> None:
    response = httpx.get(f"{api.url}/v1/tools")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    bearer = httpx.get(f"{api.url}/v1/tools", headers={"Authorization": "Bearer wrong-key"})
    assert bearer.status_code == 401
