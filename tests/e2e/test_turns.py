"""One customer turn through sessions → NLU → tools → memory → reply, over HTTP."""

from __future__ import annotations

import json

import httpx

from hermes_desk.api.schemas import TurnOut
from tests.e2e.conftest import Service


def test_order_status_turn_reaches_the_demo_backend(service: Service) -> None:
    session = service.open_session("u1001")
    assert session["resumed"] is False
    out = service.turn(session["session_id"], "u1001", "我的订单202405201234现在什么状态？")

    assert out["intent"]["name"] == "order_status"
    assert out["slots"]["order_id"] == "202405201234"
    assert len(out["tool_calls"]) == 1
    call = out["tool_calls"][0]
    assert call["tool"] == "get_shipment" and call["status"] == "ok"
    shipment = httpx.get(f"{service.backend_url}/shipments/202405201234").json()
    suggestion = out["suggestion"]["text"]
    assert shipment["status_text"] in suggestion and shipment["eta"] in suggestion
    assert out["suggestion"]["source"] == "offline" and out["suggestion"]["compliant"]
    names = {e["event"] for e in out["events"]}
    assert {"tool.call", "turn.handled"} <= names
    assert all(e["request_id"] == session["session_id"] for e in out["events"])


def test_out_of_scope_turn_calls_no_tool(service: Service) -> None:
    session = service.open_session("u1002")
    before = httpx.get(f"{service.backend_url}/_log").json()["last_seq"]
    out = service.turn(session["session_id"], "u1002", "这个东西好吃吗")
    assert out["intent"]["name"] == "oos"
    assert out["tool_calls"] == []
    assert httpx.get(f"{service.backend_url}/_log").json()["last_seq"] == before


def test_slots_carry_over_to_a_follow_up(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "帮我查一下订单202405201234")
    out = service.turn(sid, "u1001", "那什么时候能到？")
    assert out["slots"]["order_id"] == "202405201234"
    assert out["intent"]["name"] in {"order_status", "logistics"}
    assert [c["status"] for c in out["tool_calls"]] == ["ok"]


def test_missing_order_id_asks_for_it_without_calling_a_tool(service: Service) -> None:
    sid = service.open_session("u1003")["session_id"]
    out = service.turn(sid, "u1003", "我的快递到哪了")
    assert out["intent"]["name"] in {"order_status", "logistics"}
    assert out["tool_calls"] == []
    assert out["missing_slots"] == ["order_id"]
    assert "订单号" in out["suggestion"]["text"]


def test_password_reset_proves_the_customer_by_sms_then_waits_for_the_agent(
    service: Service,
) -> None:
    sid = service.open_session("u1001")["session_id"]
    first = service.turn(sid, "u1001", "我忘记密码了，手机号13800138000")
    assert first["intent"]["name"] == "password_reset"
    assert first["workflow"]["status"] == "waiting_input"
    assert first["workflow"]["waiting_for"] == "sms_code"
    assert "13800138000" not in first["suggestion"]["text"]

    wrong = service.turn(sid, "u1001", "验证码是000000")
    assert wrong["workflow"]["waiting_for"] == "sms_code", "a wrong code is asked again"
    code = httpx.get(f"{service.backend_url}/sms/outbox/13800138000").json()["code"]
    verified = service.turn(sid, "u1001", f"验证码是{code}")
    assert verified["workflow"]["id"] == first["workflow"]["id"]
    assert verified["workflow"]["waiting_for"] == "approval:reset_password"
    [proposal] = verified["proposals"]
    assert proposal["tool"] == "reset_password"
    assert proposal["arguments"]["phone"] != "13800138000", "masked on the agent's screen"
    assert verified["suggestion"]["situation"] == "proposed"
    assert "8000" in verified["suggestion"]["text"]

    approved = service.client.post(
        f"/v1/proposals/{proposal['id']}/approve",
        json={"user_id": "u1001", "agent_id": "agent-1"},
    )
    assert approved.json()["status"] == "executed", approved.text
    view = service.client.get(
        f"/v1/workflows/{first['workflow']['id']}", params={"user_id": "u1001"}
    ).json()
    assert view["status"] == "completed"
    assert {s["name"] for s in view["steps"] if s["status"] == "succeeded"} >= {
        "check_phone",
        "verify_code",
        "reset_password",
    }
    assert view["snapshots"], "every step leaves a snapshot"
    # The temporary password went to the phone, and nowhere the agent can see it.
    [message] = httpx.get(f"{service.backend_url}/sms/outbox/13800138000").json()["messages"]
    temporary = message.rsplit(" ", 1)[-1]
    assert temporary not in str(view) and temporary not in approved.text


def test_a_phone_of_another_customer_is_not_reset(service: Service) -> None:
    sid = service.open_session("u1009")["session_id"]
    out = service.turn(sid, "u1009", "我忘记密码了，手机号13912345678")  # u1002's phone
    assert out["workflow"]["status"] == "failed", "the phone is not this customer's"
    sent = httpx.get(f"{service.backend_url}/sms/outbox/13912345678")
    assert sent.status_code == 404, "no code was sent"


def test_agent_utterances_are_recorded_without_assist(service: Service) -> None:
    sid = service.open_session("u1004")["session_id"]
    response = service.client.post(
        f"/v1/sessions/{sid}/turns",
        json={"user_id": "u1004", "text": "您好，请问有什么可以帮您？", "speaker": "agent"},
    )
    assert response.status_code == 200
    assert response.json()["intent"] is None
    turns = service.client.get(f"/v1/sessions/{sid}", params={"user_id": "u1004"}).json()["turns"]
    assert [t["role"] for t in turns] == ["agent"]


def test_health_readiness_metrics_tools_and_docs(service: Service) -> None:
    assert service.client.get("/healthz").json()["status"] == "ok"
    ready = service.client.get("/readyz").json()
    assert ready["status"] == "ready" and "order_status" in ready["intents"]
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "订单202405201234到哪了")
    metrics = service.client.get("/metrics").text
    assert 'tool="get_shipment"' in metrics and 'status="ok"' in metrics
    tools = service.client.get("/v1/tools").json()
    assert any(t["name"] == "get_shipment" for t in tools["tools"])
    spec = service.client.get("/openapi.json").json()
    assert "/v1/sessions/{session_id}/turns" in spec["paths"]


def test_every_served_turn_is_exactly_what_its_documented_model_serialises(
    service: Service,
) -> None:
    # The route sends the turn's view as it is (no second pass through TurnOut): every field
    # TurnOut has must be there, with the types it declares, and nothing it does not have.
    sid = service.open_session("u1001")["session_id"]
    bodies = [
        service.turn(sid, "u1001", text)
        for text in (
            "我的订单202405201234现在什么状态？",
            "那什么时候能到？",
            "我忘记密码了，手机号13800138000",
            "谢谢",
        )
    ]
    agent = service.client.post(
        f"/v1/sessions/{sid}/turns",
        json={"user_id": "u1001", "text": "好的，验证码已发送到您的手机", "speaker": "agent"},
    )
    assert agent.status_code == 200, agent.text
    bodies.append(agent.json())
    assert {b["speaker"] for b in bodies} == {"customer", "agent"}
    for body in bodies:
        model = TurnOut.model_validate(body)
        assert json.loads(model.model_dump_json()) == body
