"""Access logs name routes, never query strings, keys or customer ids (spec D3)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import httpx
import pytest

from hermes_desk.api.access_log import _KEY_PARAM, _KEY_PARAM_HINT, RedactingFilter, log_config
from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.masking import Masker
from hermes_desk.testing.servers import serve_in_thread

KEY = "access-log-key-0123456789"


def test_requests_are_logged_by_route_template_only(
    tmp_path: Path, pack_model_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(
        service={"data_dir": tmp_path, "api_keys": {KEY: "acme"}, "access_log": True},
        nlu={"model_dir": pack_model_dir},
        workflows={"watchdog_interval_s": 3600},
    )
    caplog.set_level(logging.INFO, logger="hermes_desk.access")
    with (
        serve_in_thread(create_app(settings)) as url,
        httpx.Client(base_url=url, headers={"x-api-key": KEY}) as client,
    ):
        sid = client.post("/v1/sessions", json={"user_id": "cust-42"}).json()["session_id"]
        client.get(f"/v1/sessions/{sid}", params={"user_id": "cust-42", "api_key": KEY})
        client.get("/v1/sessions/nope", params={"user_id": "cust-42"})
        client.get("/v1/customers/cust-42")  # no such route: the path is not logged
    lines = [r.getMessage() for r in caplog.records if r.name == "hermes_desk.access"]
    assert any(line.startswith("POST /v1/sessions 201") for line in lines), lines
    assert any(line.startswith("GET /v1/sessions/{session_id} 200") for line in lines), lines
    assert any(line.startswith("GET /v1/sessions/{session_id} 404") for line in lines), lines
    assert any(line.startswith("GET (no route) 404") for line in lines), lines
    joined = "\n".join(lines)
    assert "cust-42" not in joined and KEY not in joined and sid not in joined


def test_the_redacting_filter_cleans_whatever_reaches_a_handler() -> None:
    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "GET /ws?api_key=%s phone %s", (KEY, "13912345678"), None
    )
    assert RedactingFilter().filter(record)
    assert record.getMessage() == "GET /ws?api_key=*** phone 139****5678"


def test_serve_turns_uvicorns_access_log_off_and_redacts_every_handler() -> None:
    config = log_config()
    loggers = config["loggers"]
    assert isinstance(loggers, dict)
    assert loggers["uvicorn.access"]["handlers"] == []
    handlers = config["handlers"]
    assert isinstance(handlers, dict)
    assert all(h["filters"] == ["redact"] for h in handlers.values())


def test_no_access_log_unless_asked(
    tmp_path: Path, pack_model_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(
        service={"data_dir": tmp_path},
        nlu={"model_dir": pack_model_dir},
        workflows={"watchdog_interval_s": 3600},
    )
    caplog.set_level(logging.INFO, logger="hermes_desk.access")
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url) as client:
        assert client.post("/v1/sessions", json={"user_id": "cust-42"}).status_code == 201
    assert [r for r in caplog.records if r.name == "hermes_desk.access"] == []


@pytest.mark.parametrize(
    "said",
    [
        "GET /ws?api_key=abc123",
        "x-api-key: abc",
        'Authorization: "Bearer abc"',
        "AUTHORİZATİON=abc",
        "tıcket='t-1'",
        "\u212aey: nope api_\u212aey=abc",
        '{"token": "abc", "prompt_tokens": 12}',
        "the ticket is shown; token=",
        "no parameter here: tokens 12, ticket 7",
    ],
)
def test_key_parameters_are_redacted_as_by_the_full_pattern(said: str) -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, said, None, None)
    RedactingFilter().filter(record)
    assert record.getMessage() == Masker().text(_KEY_PARAM.sub(r"\1***", said))
    if _KEY_PARAM.search(said):
        assert _KEY_PARAM_HINT.search(said)


def test_the_key_hint_spells_letters_as_ignorecase_matches_them() -> None:
    every_character = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    for letter, written in [("k", "kK\u212a"), ("e", "eE"), ("y", "yY"), ("i", "iIİı")]:
        assert sorted(re.findall(letter, every_character, re.IGNORECASE)) == sorted(written)
    for letter in "ontOT":
        assert sorted(re.findall(letter, every_character, re.IGNORECASE)) == sorted(
            {letter.lower(), letter.upper()}
        )
