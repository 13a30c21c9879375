"""A session outlives ``kill -9`` of the real service (spec D1): every answered turn is still
there, the next turn continues its numbering, a password reset waiting for the SMS code finishes
in the same session with the same workflow, and closing it hands its key facts to memory."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.conftest import ServeProcess

USER = "u1001"
PHONE = "13800138000"


def _turn(client: httpx.Client, sid: str, text: str) -> dict[str, Any]:
    response = client.post(f"/v1/sessions/{sid}/turns", json={"user_id": USER, "text": text})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _session(client: httpx.Client, sid: str) -> dict[str, Any]:
    response = client.get(f"/v1/sessions/{sid}", params={"user_id": USER})
    assert response.status_code == 200, response.text
    return dict(response.json())


@pytest.mark.slow
def test_a_session_survives_sigkill_and_finishes_its_reset(
    serve_process: ServeProcess, backend_url: str
) -> None:
    serve_process.start()
    with httpx.Client(base_url=serve_process.url, timeout=30) as client:
        sid = client.post("/v1/sessions", json={"user_id": USER}).json()["session_id"]
        sent = [
            "请不要给我打电话，有事发短信",
            "订单202405201234的快递已经超过5天了还没到，我很着急",
            f"我忘记密码了，手机号{PHONE}",
        ]
        answers = [_turn(client, sid, text) for text in sent]
        started = answers[-1]["workflow"]
        assert started["status"] == "waiting_input" and started["waiting_for"] == "sms_code"
        facts = {f["key"] for a in answers for f in a["key_facts"] if f["is_key_fact"]}
        assert {"contact_preference_no_calls", "logistics_delay_days"} <= facts
        before = _session(client, sid)["turns"]

    serve_process.kill()
    serve_process.start()

    with httpx.Client(base_url=serve_process.url, timeout=30) as client:
        view = _session(client, sid)
        assert view["status"] == "open"
        assert view["turns"] == before, "every answered turn is on disk, as it was answered"
        # Stored as answered, the phone masked (the running reset keeps it in its own state).
        stored = [*sent[:2], "我忘记密码了，手机号138****8000"]
        assert [t["text"] for t in view["turns"] if t["role"] == "user"] == stored
        for answer, text in zip(answers, stored, strict=True):
            assert view["turns"][answer["turn_index"]]["text"] == text
        assert {"contact_preference_no_calls", "logistics_delay_days"} <= {
            f["key"] for f in view["short_term"]
        }
        assert [w["id"] for w in view["workflows"]] == [started["id"]]

        resumed = client.post("/v1/sessions", json={"user_id": USER})
        assert resumed.status_code == 200 and resumed.json()["session_id"] == sid
        assert resumed.json()["resumed"] is True

        code = httpx.get(f"{backend_url}/sms/outbox/{PHONE}").json()["code"]
        verified = _turn(client, sid, f"验证码是{code}")
        assert verified["turn_index"] == len(before), "the numbering continues"
        assert verified["workflow"]["id"] == started["id"], "the same reset, not a new one"
        assert verified["workflow"]["waiting_for"] == "approval:reset_password"
        [proposal] = [p for p in verified["proposals"] if p["tool"] == "reset_password"]
        decision = {"user_id": USER, "agent_id": "agent-1"}
        approved = client.post(f"/v1/proposals/{proposal['id']}/approve", json=decision)
        assert approved.status_code == 200 and approved.json()["status"] == "executed"
        workflow = client.get(f"/v1/workflows/{started['id']}", params={"user_id": USER})
        assert workflow.json()["status"] == "completed"

        closed = client.delete(f"/v1/sessions/{sid}", params={"user_id": USER})
        assert closed.status_code == 200, closed.text
        notes = client.get(f"/v1/users/{USER}/notes").json()["notes"]
        remembered = {n["key"]: (n["value"], n["source_session"]) for n in notes}
        assert remembered["contact_preference_no_calls"] == (True, sid)
        assert remembered["logistics_delay_days"] == (5, sid)


@pytest.mark.slow
def test_a_turn_answered_just_before_the_kill_is_kept(serve_process: ServeProcess) -> None:
    serve_process.start()
    with httpx.Client(base_url=serve_process.url, timeout=30) as client:
        sid = client.post("/v1/sessions", json={"user_id": USER}).json()["session_id"]
        first = _turn(client, sid, "帮我查一下订单202405201234")
        serve_process.kill()  # at once after the answer: no time for anything to flush
    serve_process.start()
    with httpx.Client(base_url=serve_process.url, timeout=30) as client:
        turns = _session(client, sid)["turns"]
        assert turns[first["turn_index"]]["text"] == "帮我查一下订单202405201234"
        follow = _turn(client, sid, "那什么时候能到？")
        assert follow["turn_index"] == len(turns)
        assert follow["slots"].get("order_id") == "202405201234", "dialogue state survived"
