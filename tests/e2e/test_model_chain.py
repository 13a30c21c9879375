"""The service with a model chain, against the loopback OpenAI-compatible server (real LiteLLM)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.openai_server import OpenAIServer, rate_limited, reply
from hermes_desk.testing.servers import serve_in_thread

pytestmark = pytest.mark.filterwarnings("ignore:.*will not protect items:UserWarning")


@pytest.fixture
def model_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[OpenAIServer, str]]:
    monkeypatch.setenv("HERMES_TEST_MODEL_KEY", "sk-loopback")
    server = OpenAIServer()
    with server.run() as base_url:
        yield server, base_url


def _settings(tmp_path: Path, backend_url: str, base_url: str) -> Settings:
    return Settings(
        service={"data_dir": tmp_path, "backend_url": backend_url},
        workflows={"watchdog_interval_s": 3600},
        llm={
            "chain": ["openai/primary", "offline"],
            "api_base": base_url,
            "retries": 0,
            "links": {"openai/primary": {"api_key_env": "HERMES_TEST_MODEL_KEY"}},
        },
    )


def _turn(client: httpx.Client, text: str) -> dict[str, object]:
    sid = client.post("/v1/sessions", json={"user_id": "u1001"}).json()["session_id"]
    response = client.post(f"/v1/sessions/{sid}/turns", json={"user_id": "u1001", "text": text})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _usage(client: httpx.Client, sid: str) -> dict[str, object]:
    view = client.get(f"/v1/sessions/{sid}", params={"user_id": "u1001"}).json()
    return dict(view["model_usage"])


def test_model_slots_fill_what_the_extractors_missed_and_the_model_words_the_reply(
    tmp_path: Path, backend_url: str, model_server: tuple[OpenAIServer, str]
) -> None:
    server, base_url = model_server
    server.script(
        reply('{"order_id": "202405201234"}'),  # the slot channel (JSON mode)
        reply("您好，您的包裹正在路上。"),  # the reply, after the tool result
        model="primary",
    )
    settings = _settings(tmp_path, backend_url, base_url)
    with (
        serve_in_thread(create_app(settings)) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        out = _turn(client, "帮我查一下那个订单到哪了")
        usage = _usage(client, str(out["session_id"]))
    assert usage["calls"] == 2 and int(usage["total_tokens"]) > 0  # type: ignore[call-overload]
    assert "openai/primary" in usage["by_link"]  # type: ignore[operator]
    assert out["intent"]["name"] in ("order_status", "logistics")  # type: ignore[index]
    assert out["slots"]["order_id"] == "202405201234"  # type: ignore[index]
    assert [c["status"] for c in out["tool_calls"]] == ["ok"]  # type: ignore[union-attr]
    assert out["suggestion"]["source"] == "openai/primary"  # type: ignore[index]
    assert out["suggestion"]["text"] == "您好，您的包裹正在路上。"  # type: ignore[index]
    assert server.requests[0].get("response_format") is not None
    slot_prompt = str(server.requests[0]["messages"][0]["content"])
    assert '"pattern": "^[0-9]{12}$"' in slot_prompt, "the model sees the slot's JSON Schema"
    assert '"listed"' not in slot_prompt, "not the engine's own keys"
    reply_prompt = str(server.requests[1]["messages"][0]["content"])
    assert reply_prompt.startswith("你是电商客服坐席的助手"), "the pack's rules (pack.yaml)"


def test_slot_json_that_fails_its_schema_is_ignored_and_429_falls_back_offline(
    tmp_path: Path, backend_url: str, model_server: tuple[OpenAIServer, str]
) -> None:
    server, base_url = model_server
    server.script(reply('{"order_id": "12"}'), rate_limited(), model="primary")
    settings = _settings(tmp_path, backend_url, base_url)
    with (
        serve_in_thread(create_app(settings)) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        out = _turn(client, "帮我查一下那个订单到哪了")
    assert "order_id" not in out["slots"]  # type: ignore[operator]
    assert out["tool_calls"] == []
    assert out["missing_slots"] == ["order_id"]
    assert out["suggestion"]["source"] == "offline"  # type: ignore[index]
    assert "订单号" in out["suggestion"]["text"]  # type: ignore[index]
    events = {e["event"] for e in out["events"]}  # type: ignore[union-attr]
    assert {"llm.slots", "llm.call"} <= events
