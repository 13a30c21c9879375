"""What a turn and a session answer, field by field: every tool call of a turn (its reads and
the workflow steps it ran), a ranking consistent with the intent, the customer-turn count on
close, and a session found without ``?user_id=``."""

from __future__ import annotations

from typing import Any

import httpx
from tests.api.conftest import OTHER_TENANT_KEY, Api


def _turn(api: Api, sid: str, user: str, text: str) -> dict[str, Any]:
    response = api.client.post(f"/v1/sessions/{sid}/turns", json={"user_id": user, "text": text})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_tool_calls_hold_the_workflow_steps_the_turn_ran(api: Api) -> None:
    sid = api.open_session("u1001")
    first = _turn(api, sid, "u1001", "我忘记密码了，手机号13800138000")
    assert first["workflow"]["name"] == "password_reset"
    steps = [c for c in first["tool_calls"] if c["source"] == "workflow"]
    assert [(c["step"], c["tool"], c["status"]) for c in steps] == [
        (s["name"], s["tool"], "ok")
        for s in first["workflow"]["steps"]
        if s["tool"] and s["status"] == "succeeded"
    ]
    assert {c["tool"] for c in steps} >= {"check_phone", "send_sms_code"}
    code = httpx.get(f"{api.settings.service.backend_url}/sms/outbox/13800138000").json()["code"]
    verified = _turn(api, sid, "u1001", f"验证码是{code}")
    fed = {c["tool"] for c in verified["tool_calls"] if c["source"] == "workflow"}
    assert "verify_sms_code" in fed
    assert all(c["tool"] != "check_phone" for c in verified["tool_calls"]), "only this turn's"
    fields = set(first["tool_calls"][0])
    assert all(set(c) == fields for c in [*first["tool_calls"], *verified["tool_calls"]])


def test_the_ranking_is_the_deciding_models_and_agrees_with_the_intent(api: Api) -> None:
    sid = api.open_session("u1003")
    for text in (
        "我的订单202405201234现在什么状态？",
        "202405201234",
        "好的谢谢",
        "今天天气怎么样",
    ):
        intent = _turn(api, sid, "u1003", text)["intent"]
        ranking = intent["ranking"]
        assert intent["ranking_model"] in {"context", "classifier"}
        assert 1 <= len(ranking) <= 3
        assert [p for _, p in ranking] == sorted((p for _, p in ranking), reverse=True)
        if intent["decided_by"] == "model":
            assert ranking[0][0] == intent["name"], intent
            assert not intent["out_of_scope"]
        elif intent["decided_by"] == "out_of_scope":
            assert intent["out_of_scope"] and intent["name"] == "oos"
        else:
            assert intent["decided_by"] == "conversation" and intent["carried"], intent
            assert ranking[0][0] != intent["name"]


def test_close_counts_the_customers_turns(api: Api) -> None:
    sid = api.open_session("u1004")
    for text in ("我的订单202405201234现在什么状态？", "那预计哪天到？", "好的", "谢谢"):
        _turn(api, sid, "u1004", text)
    agent = api.client.post(
        f"/v1/sessions/{sid}/turns",
        json={"user_id": "u1004", "text": "不客气", "speaker": "agent"},
    )
    assert agent.status_code == 200
    transcript = api.transcript(sid, "u1004")
    assert len(transcript) > 5, "tool calls and results are in the transcript too"
    closed = api.client.delete(f"/v1/sessions/{sid}", params={"user_id": "u1004"})
    assert closed.status_code == 200, closed.text
    assert closed.json()["turns"] == 4


def test_a_session_is_found_by_id_without_user_id(api: Api) -> None:
    sid = api.open_session("u1005")
    found = api.client.get(f"/v1/sessions/{sid}")
    assert found.status_code == 200, found.text
    assert found.json()["user_id"] == "u1005"
    proposals = api.client.get(f"/v1/sessions/{sid}/proposals")
    assert proposals.status_code == 200 and proposals.json() == {"proposals": []}
    mismatch = api.client.get(f"/v1/sessions/{sid}", params={"user_id": "u9999"})
    assert mismatch.status_code == 404, "a user_id given must be the session's"
    assert api.client.get("/v1/sessions/ses_unknown").status_code == 404
    closed = api.client.delete(f"/v1/sessions/{sid}")
    assert closed.status_code == 200 and closed.json()["turns"] == 0


def test_another_tenants_session_is_not_found_without_user_id(api: Api) -> None:
    sid = api.open_session("u1006")
    other = {"X-API-Key": OTHER_TENANT_KEY}
    assert httpx.get(f"{api.url}/v1/sessions/{sid}", headers=other).status_code == 404
    assert httpx.delete(f"{api.url}/v1/sessions/{sid}", headers=other).status_code == 404
    assert api.client.get(f"/v1/sessions/{sid}").status_code == 200, "still there"
