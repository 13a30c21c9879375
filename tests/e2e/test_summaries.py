"""After-contact and transfer summaries over HTTP: written from what happened, in the
conversation's language, with a disposition from the pack's list; confirmed (edited) by the
agent and kept with the archive; model-written with a chain, the offline one as fallback."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.packs import load_pack
from hermes_desk.testing.openai_server import OpenAIServer, reply, server_error
from hermes_desk.testing.servers import serve_in_thread
from tests.e2e.conftest import Service

pytestmark = pytest.mark.filterwarnings("ignore:.*will not protect items:UserWarning")

PACK_DISPOSITIONS = load_pack("ecommerce").dispositions.ids


def _summary(service: Service, sid: str, user: str, **params: str) -> dict[str, Any]:
    response = service.client.get(f"/v1/sessions/{sid}/summary", params={"user_id": user, **params})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _archived_summary(service: Service, sid: str) -> str:
    conn = sqlite3.connect(service.settings.database_path)
    try:
        row = conn.execute(
            "SELECT summary FROM session_archive WHERE session_id = ?", (sid,)
        ).fetchone()
    finally:
        conn.close()
    assert row is not None
    return str(row[0])


def test_a_chinese_contact_is_summed_up_in_chinese_with_its_open_item(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "我忘记密码了，手机号13800138000")
    service.turn(sid, "u1001", "另外我的订单202405201234现在什么状态？")

    summary = _summary(service, sid, "u1001")
    assert summary["kind"] == "after_contact" and summary["language"] == "zh"
    text = summary["text"]
    assert "订单号 202405201234" in text
    assert "手机号 138****8000" in text and "13800138000" not in text
    assert "get_shipment（成功）" in text
    assert "未决事项" in text and "等待客户提供短信验证码" in text, "the reset waits for the code"
    disposition = summary["disposition"]
    assert disposition["proposed"] == "pending_customer" == disposition["chosen"]
    assert disposition["choices"] == PACK_DISPOSITIONS
    assert disposition["labels"]["pending_customer"] == "待客户回复"
    assert summary["source"] == "offline" and summary["confirmed"] is False
    assert "建议结案类型：待客户回复" in text


def test_an_english_contact_is_summed_up_in_english_and_kept_with_the_archive(
    service: Service,
) -> None:
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "Where is my order 202405201234?")
    live = _summary(service, sid, "u1001")
    assert live["language"] == "en"
    assert "Key details: order 202405201234" in live["text"]
    assert "Look-ups: get_shipment (ok)" in live["text"]
    assert live["disposition"]["proposed"] == "resolved"
    assert live["disposition"]["labels"]["resolved"] == "Resolved"

    service.close(sid, "u1001")
    ended = _summary(service, sid, "u1001")
    assert ended["text"] == live["text"], "written again from the same record at the close"
    assert _archived_summary(service, sid) == ended["text"]


def test_the_agent_edits_and_confirms_the_summary_and_disposition(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "我的订单202405201234现在什么状态？")
    service.close(sid, "u1001")
    proposed = _summary(service, sid, "u1001")
    url = f"/v1/sessions/{sid}/summary"
    body = {
        "user_id": "u1001",
        "agent_id": "agent-7",
        "text": "客户查询订单状态，已告知。客户手机 13912345678 要求回电。",
        "disposition": "callback_scheduled",
    }

    unknown = service.client.put(url, json={**body, "disposition": "closed_forever"})
    assert unknown.status_code == 422
    assert unknown.json()["error"]["field"] == "disposition"
    assert "callback_scheduled" in unknown.json()["error"]["message"], "the choices are named"
    foreign = service.client.put(url, json={**body, "user_id": "u1002"})
    assert foreign.status_code == 404
    assert _summary(service, sid, "u1001") == proposed, "refusals change nothing"

    confirmed = service.client.put(url, json=body)
    assert confirmed.status_code == 200, confirmed.text
    out = confirmed.json()
    assert out["confirmed"] is True and out["confirmed_by"] == "agent-7"
    assert out["source"] == "agent"
    assert out["disposition"]["chosen"] == "callback_scheduled"
    assert out["disposition"]["proposed"] == "resolved", "what the service proposed stays known"
    assert "139****5678" in out["text"] and "13912345678" not in out["text"]
    assert _summary(service, sid, "u1001") == out
    assert _archived_summary(service, sid) == out["text"]


def test_confirming_as_proposed_keeps_the_writer_and_a_live_confirmation_survives_the_close(
    service: Service,
) -> None:
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "我的订单202405201234现在什么状态？")
    proposed = _summary(service, sid, "u1001")
    body = {
        "user_id": "u1001",
        "agent_id": "agent-7",
        "text": proposed["text"],
        "disposition": proposed["disposition"]["proposed"],
    }
    out = service.client.put(f"/v1/sessions/{sid}/summary", json=body).json()
    assert out["confirmed"] is True and out["source"] == "offline"
    service.turn(sid, "u1001", "好的谢谢")
    service.close(sid, "u1001")
    assert _summary(service, sid, "u1001") == out, "the close keeps the agent's confirmation"
    assert _archived_summary(service, sid) == out["text"]


def test_a_transfer_summary_hands_the_live_conversation_over(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "我的订单202405201234现在什么状态？")
    service.turn(sid, "u1001", "我要投诉，快递员态度太差了")
    handover = _summary(service, sid, "u1001", kind="transfer")
    assert handover["kind"] == "transfer"
    assert handover["disposition"]["proposed"] == "transferred"
    assert handover["text"].startswith("转接摘要")
    assert "客户最后说：「我要投诉，快递员态度太差了」" in handover["text"]
    assert "待坐席批准" in handover["text"], "the complaint's ticket awaits the agent"
    after = _summary(service, sid, "u1001")
    assert after["kind"] == "after_contact" and after["text"] != handover["text"]


def test_a_summary_is_only_for_its_own_customer(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    response = service.client.get(f"/v1/sessions/{sid}/summary", params={"user_id": "u1002"})
    assert response.status_code == 404
    response = service.client.get(
        f"/v1/sessions/{sid}/summary", params={"user_id": "u1001", "kind": "weekly"}
    )
    assert response.status_code == 422


@pytest.fixture
def chained(
    tmp_path: Path, backend_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Service, OpenAIServer]]:
    monkeypatch.setenv("HERMES_TEST_MODEL_KEY", "sk-loopback")
    server = OpenAIServer()
    with server.run() as base_url:
        settings = Settings(
            service={"data_dir": tmp_path, "backend_url": backend_url},
            workflows={"watchdog_interval_s": 3600},
            llm={
                "chain": ["openai/primary", "offline"],
                "api_base": base_url,
                "retries": 0,
                "links": {"openai/primary": {"api_key_env": "HERMES_TEST_MODEL_KEY"}},
            },
        )
        with (
            serve_in_thread(create_app(settings)) as url,
            httpx.Client(base_url=url, timeout=60) as client,
        ):
            yield Service(url, backend_url, client, settings), server


def test_with_a_model_chain_the_model_writes_the_summary_and_offline_is_the_fallback(
    chained: tuple[Service, OpenAIServer],
) -> None:
    service, server = chained
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "我忘记密码了，手机号13800138000")

    server.script(reply("客户申请重置密码，验证码已发送，等待客户报出验证码。"), model="primary")
    written = _summary(service, sid, "u1001")
    assert written["text"] == "客户申请重置密码，验证码已发送，等待客户报出验证码。"
    assert written["source"] == "model:openai/primary"
    assert written["disposition"]["proposed"] == "pending_customer"
    asked = json.dumps(server.requests[-1]["messages"], ensure_ascii=False)
    assert "结束后小结" in asked and "138****8000" in asked
    assert "13800138000" not in asked, "the model is given masked facts"

    server.script(server_error(500), model="primary")
    fallback = _summary(service, sid, "u1001")
    assert fallback["source"] == "offline"
    assert "建议结案类型：待客户回复" in fallback["text"]

    server.script(reply("   "), model="primary")
    assert _summary(service, sid, "u1001")["source"] == "offline", "an empty answer is no summary"
