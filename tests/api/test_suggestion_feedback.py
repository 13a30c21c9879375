"""Suggestion feedback through a real service: events per turn, the tenant's report, /metrics."""

from __future__ import annotations

from typing import Any

import httpx
from tests.api.conftest import OTHER_TENANT_KEY, Api

ORDER = "202405201234"


def _turn(api: Api, sid: str, user: str, text: str) -> dict[str, Any]:
    response = api.client.post(f"/v1/sessions/{sid}/turns", json={"user_id": user, "text": text})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _feedback(api: Api, sid: str, turn: int, **body: Any) -> httpx.Response:
    payload = {"user_id": "u1001", "agent_id": "agent-7", **body}
    return api.client.post(f"/v1/sessions/{sid}/suggestions/{turn}/feedback", json=payload)


def _report(api: Api) -> dict[str, Any]:
    response = api.client.get("/v1/metrics/suggestions")
    assert response.status_code == 200, response.text
    return dict(response.json())


def _intent_counts(report: dict[str, Any], intent: str) -> dict[str, Any]:
    empty = {"shown": 0, "inserted": 0, "copied": 0, "edited": 0,
             "rated": {"total": 0, "useful": 0, "not_useful": 0}}  # fmt: skip
    return dict(report["by_intent"].get(intent, empty))


def test_an_agent_edits_inserts_and_rates_a_suggestion(api: Api) -> None:
    before = _intent_counts(_report(api), "order_status")
    sid = api.open_session("u1001")
    outcome = _turn(api, sid, "u1001", f"我的订单{ORDER}现在什么状态？")
    turn, suggestion = outcome["turn_index"], outcome["suggestion"]["text"]
    assert outcome["intent"]["name"] == "order_status"

    edited = f"{suggestion} 如有其他问题请随时联系我们。"
    inserted = _feedback(api, sid, turn, event="inserted", text=edited)
    assert inserted.status_code == 200, inserted.text
    recorded = inserted.json()["recorded"]
    assert [r["event"] for r in recorded] == ["edited", "inserted"], "a changed text is an edit"
    assert recorded[0]["text"] == edited and recorded[0]["suggestion"] == suggestion
    assert all(r["first"] for r in recorded) and inserted.json()["intent"] == "order_status"

    rated = _feedback(api, sid, turn, event="rated", useful=False, reason="缺少物流单号")
    assert rated.status_code == 200, rated.text
    again = _feedback(api, sid, turn, event="rated", useful=True, reason="改过之后可用")
    assert again.json()["recorded"][0]["first"] is False

    after = _intent_counts(_report(api), "order_status")
    assert after["shown"] == before["shown"] + 1
    assert after["inserted"] == before["inserted"] + 1
    assert after["edited"] == before["edited"] + 1
    assert after["rated"]["useful"] == before["rated"]["useful"] + 1, "the latest rating counts"
    assert after["rated"]["not_useful"] == before["rated"]["not_useful"]

    events = api.client.get(
        f"/v1/sessions/{sid}/suggestions/feedback", params={"user_id": "u1001"}
    ).json()["events"]
    kept = {e["event"]: e for e in events}
    assert set(kept) == {"shown", "inserted", "edited", "rated"}
    assert kept["rated"]["useful"] is True and kept["rated"]["reason"] == "改过之后可用"
    assert kept["edited"]["text"] == edited and kept["edited"]["agent_id"] == "agent-7"

    exposition = api.client.get("/metrics").text
    line = 'hermes_suggestion_events_total{intent="order_status",kind="edited",tenant="acme"}'
    assert line in exposition
    assert 'kind="shown",tenant="acme"' in exposition


def test_bad_feedback_is_refused_and_changes_nothing(api: Api) -> None:
    sid = api.open_session("u1001")
    turn = _turn(api, sid, "u1001", "你们支持哪些支付方式")["turn_index"]
    before = _report(api)
    bad: list[dict[str, Any]] = [
        {"event": "rated"},  # no verdict
        {"event": "inserted", "useful": True},  # only ratings say useful
        {"event": "copied", "reason": "x"},
        {"event": "edited"},  # no text
        {"event": "liked"},
        {"event": "rated", "useful": True, "reason": "x" * 501},
        {"event": "inserted", "text": "   "},
        {"event": "inserted", "text": "bin\u0000ary"},
        {"event": "rated", "useful": "yes"},
        {"event": "rated", "useful": True, "extra": 1},
    ]
    for body in bad:
        response = _feedback(api, sid, turn, **body)
        assert response.status_code == 422, (body, response.text)
        error = response.json()["error"]
        assert error["code"] == "validation_error" and error["problems"], body
    unchanged = _feedback(api, sid, turn, event="edited", text=_suggestion(api, sid, turn))
    assert unchanged.status_code == 422 and "unchanged" in unchanged.json()["error"]["message"]
    assert _report(api) == before


def _suggestion(api: Api, sid: str, turn: int) -> str:
    events = api.client.get(
        f"/v1/sessions/{sid}/suggestions/feedback", params={"user_id": "u1001"}
    ).json()["events"]
    return str(next(e["suggestion"] for e in events if e["turn_index"] == turn))


def test_feedback_on_no_suggestion_or_anothers_session_is_not_found(api: Api) -> None:
    sid = api.open_session("u1001")
    turn = _turn(api, sid, "u1001", "怎么开发票")["turn_index"]
    agent_line = api.client.post(
        f"/v1/sessions/{sid}/turns",
        json={"user_id": "u1001", "text": "好的，我帮您看一下", "speaker": "agent"},
    ).json()["turn_index"]
    for index in (turn + 1, agent_line, 999):
        response = _feedback(api, sid, index, event="copied")
        assert response.status_code == 404, (index, response.text)
    wrong_user = api.client.post(
        f"/v1/sessions/{sid}/suggestions/{turn}/feedback",
        json={"user_id": "u1002", "agent_id": "a", "event": "copied"},
    )
    assert wrong_user.status_code == 404
    with httpx.Client(base_url=api.url, headers={"X-API-Key": OTHER_TENANT_KEY}) as other:
        before = other.get("/v1/metrics/suggestions").json()
        response = other.post(
            f"/v1/sessions/{sid}/suggestions/{turn}/feedback",
            json={"user_id": "u1001", "agent_id": "a", "event": "copied"},
        )
        assert response.status_code == 404
        assert before["tenant"] == "globex" and before["shown"] == 0, "tenants are apart"
    assert _feedback(api, sid, turn, event="copied").status_code == 200


def test_the_report_needs_a_key(api: Api) -> None:
    assert httpx.get(f"{api.url}/v1/metrics/suggestions").status_code == 401
    assert httpx.get(f"{api.url}/v1/pack/labels").status_code == 401


def test_pack_labels_name_every_intent_in_both_languages(api: Api) -> None:
    body = api.client.get("/v1/pack/labels").json()
    assert body["pack"] == "ecommerce" and body["languages"] == ["zh", "en"]
    intents = body["labels"]["intents"]
    ready = api.client.get("/readyz").json()
    assert sorted(intents) == ready["intents"]
    assert intents["oos"] == {"zh": "超出范围", "en": "Out of scope"}
    assert body["labels"]["statuses"]["waiting_input"]["en"] == "waiting for the customer"
    assert set(body["labels"]["tools"]) == set(ready["tools"])
