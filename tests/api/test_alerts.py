"""Sentiment and alerts over the real service and the demo backend: every alert kind on the
REST turn, the session WebSocket's ``alert`` frames, and the supervisor's sessions and event
stream (per tenant)."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from tests.api.conftest import API_KEY, OTHER_TENANT_KEY, Api
from websockets.sync.client import ClientConnection, connect


def _turn(api: Api, sid: str, user: str, text: str, speaker: str = "customer") -> dict[str, Any]:
    response = api.client.post(
        f"/v1/sessions/{sid}/turns", json={"user_id": user, "text": text, "speaker": speaker}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def _kinds(outcome: dict[str, Any]) -> list[str]:
    return [a["kind"] for a in outcome["alerts"]]


def test_a_customer_turn_carries_its_sentiment_and_an_agent_turn_none(api: Api) -> None:
    sid = api.open_session("u1001")
    angry = _turn(api, sid, "u1001", "我真的很生气")
    assert angry["sentiment"]["label"] == "negative"
    assert -1 <= angry["sentiment"]["score"] < 0
    annoyed = _turn(api, sid, "u1001", "really annoyed, where is my order?")
    assert annoyed["sentiment"]["label"] == "negative"
    thanks = _turn(api, sid, "u1001", "好的 谢谢你")
    assert thanks["sentiment"]["label"] == "positive" and thanks["sentiment"]["score"] > 0
    agent = _turn(api, sid, "u1001", "不客气，还有什么可以帮您", speaker="agent")
    assert agent["sentiment"] is None and agent["alerts"] == []
    stored = api.transcript(sid, "u1001")
    assert len([t for t in stored if t["role"] == "user"]) == 3


def test_threats_and_abuse_in_customer_lines_raise_alerts(api: Api) -> None:
    sid = api.open_session("u1002")
    regulator = _turn(api, sid, "u1002", "再不给我处理我就打12315投诉你们")
    assert "regulator_threat" in _kinds(regulator)
    alert = next(a for a in regulator["alerts"] if a["kind"] == "regulator_threat")
    assert alert == {
        "kind": "regulator_threat",
        "severity": "critical",
        "message": alert["message"],
        "speaker": "customer",
        "turn_index": regulator["turn_index"],
        "rule": "regulator_threat",
    }
    assert "再不给我处理" not in alert["message"], "the pack's message, not the customer's words"
    assert "media_threat" in _kinds(_turn(api, sid, "u1002", "我要找媒体曝光你们"))
    assert "legal_threat" in _kinds(_turn(api, sid, "u1002", "I'm going to sue you"))
    assert "abuse" in _kinds(_turn(api, sid, "u1002", "你们客服全是白痴"))
    english = _turn(api, sid, "u1002", "I will report you to consumer protection")
    assert "regulator_threat" in _kinds(english)
    calm = _turn(api, sid, "u1002", "请问退货运费谁承担")
    assert calm["alerts"] == [] and calm["sentiment"]["label"] == "neutral"


def test_three_negative_turns_in_a_row_raise_a_streak_alert_once(api: Api) -> None:
    sid = api.open_session("u1003")
    first = _turn(api, sid, "u1003", "太慢了 真的很失望")
    second = _turn(api, sid, "u1003", "你们这服务太差了 烦死了")
    assert "negative_streak" not in _kinds(first) + _kinds(second)
    third = _turn(api, sid, "u1003", "气死我了 到底还要等多久")
    assert [a["sentiment"]["label"] for a in (first, second, third)] == ["negative"] * 3
    streak = next(a for a in third["alerts"] if a["kind"] == "negative_streak")
    assert streak["turn_index"] == third["turn_index"] and streak["speaker"] == "customer"
    fourth = _turn(api, sid, "u1003", "还是太慢了 很不满意")
    assert "negative_streak" not in _kinds(fourth), "once per run of three"
    reset = _turn(api, sid, "u1003", "好的 谢谢")
    assert "negative_streak" not in _kinds(reset)


def test_repeated_rejected_codes_raise_a_verification_alert(api: Api) -> None:
    sid = api.open_session("u1001")
    started = _turn(api, sid, "u1001", "我忘记密码了，手机号13800138000")
    assert started["workflow"]["name"] == "password_reset"
    real = httpx.get(f"{api.settings.service.backend_url}/sms/outbox/13800138000").json()["code"]
    first, second = [c for c in ("000000", "111111", "222222") if c != real][:2]
    once = _turn(api, sid, "u1001", f"验证码是{first}")
    assert "verification_failures" not in _kinds(once), once["workflow"]
    twice = _turn(api, sid, "u1001", f"验证码{second}")
    failed = [a for a in twice["alerts"] if a["kind"] == "verification_failures"]
    assert len(failed) == 1 and "2" in failed[0]["message"], twice["workflow"]


def test_agent_lines_with_compliance_slips_raise_alerts(api: Api) -> None:
    sid = api.open_session("u1002")
    slip = _turn(
        api, sid, "u1002", "保证今天到，绝对没问题，你的手机号13912345678对吧", speaker="agent"
    )
    assert sorted(_kinds(slip)) == ["full_number", "over_promise"]
    assert all(a["speaker"] == "agent" for a in slip["alerts"])
    assert all("13912345678" not in a["message"] for a in slip["alerts"])
    asked = _turn(api, sid, "u1002", "请把您的登录密码告诉我", speaker="agent")
    assert _kinds(asked) == ["credential_request"]
    careful = _turn(api, sid, "u1002", "我们不能保证今天送到，您尾号5678的手机会收到短信", "agent")
    assert careful["alerts"] == []


@contextmanager
def _socket(api: Api, sid: str, user: str) -> Iterator[ClientConnection]:
    url = f"{api.url.replace('http://', 'ws://')}/v1/sessions/{sid}/ws?user_id={user}"
    with connect(url, additional_headers={"X-API-Key": API_KEY}, open_timeout=30) as ws:
        ready = json.loads(ws.recv(timeout=30))
        assert ready["type"] == "ready"
        yield ws


def _until(ws: ClientConnection, kind: str, count: int = 1) -> list[dict[str, Any]]:
    """Frames received until ``count`` of type ``kind`` arrived (those returned)."""
    seen: list[dict[str, Any]] = []
    while len(seen) < count:
        frame = json.loads(ws.recv(timeout=60))
        assert frame["type"] != "error", frame
        if frame["type"] == kind:
            seen.append(frame)
    return seen


def test_the_session_socket_pushes_alert_frames_for_agent_and_customer_lines(api: Api) -> None:
    sid = api.open_session("u1001")
    with _socket(api, sid, "u1001") as ws:
        ws.send(
            json.dumps(
                {
                    "type": "segment",
                    "speaker": "agent",
                    "text": "保证今天到，绝对没问题，你的手机号13912345678对吧",
                }
            )
        )
        frames = _until(ws, "alert", 2)
        assert {f["kind"] for f in frames} == {"over_promise", "full_number"}
        assert all(f["speaker"] == "agent" and f["session_id"] == sid for f in frames)
        ws.send(json.dumps({"type": "segment", "text": "我要去消协投诉你们 太过分了"}))
        assist = _until(ws, "assist")[0]
        assert "regulator_threat" in [a["kind"] for a in assist["alerts"]]
        assert assist["sentiment"]["label"] == "negative"
        pushed = _until(ws, "alert")[0]
        assert pushed["kind"] == "regulator_threat" and pushed["seq"] == assist["seq"]


def test_asking_for_the_code_is_the_workflow_step_while_it_waits_for_one(api: Api) -> None:
    sid = api.open_session("u1001")
    before = _turn(api, sid, "u1001", "把收到的验证码报给我", speaker="agent")
    assert _kinds(before) == ["credential_request"], "no workflow waits for a code yet"
    started = _turn(api, sid, "u1001", "我忘记密码了，手机号13800138000")
    assert started["workflow"]["waiting_for"] == "sms_code"
    during = _turn(api, sid, "u1001", "把收到的验证码报给我", speaker="agent")
    assert during["alerts"] == []
    password = _turn(api, sid, "u1001", "您的密码是多少", speaker="agent")
    assert _kinds(password) == ["credential_request"], "a password is never the step"


def _events(api: Api, key: str) -> tuple[queue.Queue[tuple[str, Any]], threading.Event]:
    """Read the supervisor event stream in a thread: (event, data) pairs into a queue."""
    out: queue.Queue[tuple[str, Any]] = queue.Queue()
    stop = threading.Event()

    def read() -> None:
        with (
            httpx.Client(base_url=api.url, timeout=httpx.Timeout(60, read=30)) as client,
            client.stream("GET", "/v1/supervisor/events", headers={"X-API-Key": key}) as resp,
        ):
            out.put(("status", resp.status_code))
            kind = "message"
            for line in resp.iter_lines():
                if stop.is_set():
                    return
                if line.startswith("event:"):
                    kind = line[6:].strip()
                elif line.startswith("data:"):
                    out.put((kind, json.loads(line[5:])))

    threading.Thread(target=read, daemon=True).start()
    return out, stop


def _next(events: queue.Queue[tuple[str, Any]], kind: str, match: Any = None) -> Any:
    while True:
        got, data = events.get(timeout=60)
        if got == kind and (match is None or match(data)):
            return data


def test_the_supervisor_feed_streams_one_tenants_sessions_sentiment_and_alerts(api: Api) -> None:
    events, stop = _events(api, API_KEY)
    others, stop_others = _events(api, OTHER_TENANT_KEY)
    try:
        assert _next(events, "status") == 200
        assert "sessions" in _next(events, "snapshot")
        assert _next(others, "status") == 200
        _next(others, "snapshot")
        sid = api.open_session("u1002")
        opened = _next(events, "session_opened", lambda d: d["session"]["session_id"] == sid)
        assert opened["session"]["alert_count"] == 0
        _turn(api, sid, "u1002", "你们太差劲了 我要打12315")
        turn = _next(events, "turn", lambda d: d["session"]["session_id"] == sid)
        assert turn["session"]["sentiment"]["label"] == "negative"
        alert = _next(events, "alert", lambda d: d["session_id"] == sid)  # after its turn
        assert alert["alert"]["kind"] == "regulator_threat"
        listed = api.client.get("/v1/supervisor/sessions").json()["sessions"]
        mine = next(s for s in listed if s["session_id"] == sid)
        assert mine["alert_counts"] == {"regulator_threat": 1} and mine["critical"] is True
        assert [p["label"] for p in mine["sentiment_trend"]] == ["negative"]
        foreign = httpx.get(
            f"{api.url}/v1/supervisor/sessions", headers={"X-API-Key": OTHER_TENANT_KEY}
        ).json()["sessions"]
        assert sid not in {s["session_id"] for s in foreign}
        assert api.client.delete(f"/v1/sessions/{sid}", params={"user_id": "u1002"}).is_success
        closed = _next(events, "session_closed", lambda d: d["session_id"] == sid)
        assert closed["reason"] == "closed"
        listed = api.client.get("/v1/supervisor/sessions").json()["sessions"]
        assert sid not in {s["session_id"] for s in listed}
        while not others.empty():
            kind, data = others.get_nowait()
            assert sid not in json.dumps(data), f"the other tenant saw {kind}"
    finally:
        stop.set()
        stop_others.set()


def test_the_supervisor_routes_need_a_key(api: Api) -> None:
    assert httpx.get(f"{api.url}/v1/supervisor/sessions").status_code == 401
    refused = httpx.get(f"{api.url}/v1/supervisor/events", headers={"X-API-Key": "wrong-key"})
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "unauthorized"
