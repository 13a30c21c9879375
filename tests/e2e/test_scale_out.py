"""Two service workers sharing Redis (sessions, breakers, snapshots, proposals) and PostgreSQL
(memory): a conversation started on one continues on the other, and an approval given on one
worker runs the write once, whichever worker is asked twice."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread


def _settings(data_dir: Path, backend_url: str, redis_url: str, postgres_dsn: str) -> Settings:
    return Settings(
        service={"data_dir": data_dir, "backend_url": backend_url},
        sessions={"store": "redis", "redis_url": redis_url},
        tools={"breaker": {"store": "redis", "redis_url": redis_url}},
        workflows={"snapshot_store": "redis", "redis_url": redis_url, "watchdog_interval_s": 3600},
        actions={"store": "redis", "redis_url": redis_url},
        memory={"store": "postgres", "postgres_dsn": postgres_dsn},
    )


@pytest.fixture
def workers(
    tmp_path: Path, backend_url: str, redis_url: str, postgres_dsn: str
) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    a = _settings(tmp_path / "a", backend_url, redis_url, postgres_dsn)
    b = _settings(tmp_path / "b", backend_url, redis_url, postgres_dsn)
    with (
        serve_in_thread(create_app(a)) as url_a,
        serve_in_thread(create_app(b)) as url_b,
        httpx.Client(base_url=url_a, timeout=30) as client_a,
        httpx.Client(base_url=url_b, timeout=30) as client_b,
    ):
        yield client_a, client_b


def _turn(client: httpx.Client, sid: str, text: str) -> dict[str, object]:
    response = client.post(f"/v1/sessions/{sid}/turns", json={"user_id": "u1001", "text": text})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_conversation_moves_between_workers(
    workers: tuple[httpx.Client, httpx.Client], backend_url: str
) -> None:
    a, b = workers
    sid = a.post("/v1/sessions", json={"user_id": "u1001"}).json()["session_id"]
    first = _turn(a, sid, "帮我查一下订单202405201234")
    assert first["slots"] == {"order_id": "202405201234"}
    follow = _turn(b, sid, "那什么时候能到？")
    assert follow["slots"] == {"order_id": "202405201234"}, "dialogue state lives in Redis"
    _turn(b, sid, "物流已经超过7天了，我很生气")
    assert b.delete(f"/v1/sessions/{sid}", params={"user_id": "u1001"}).status_code == 200

    again = a.post("/v1/sessions", json={"user_id": "u1001"}).json()
    assert "logistics_delay_days" in {n["key"] for n in again["notes"]}, "memory in PostgreSQL"

    started = _turn(a, again["session_id"], "我忘记密码了，手机号13800138000")
    workflow = started["workflow"]
    assert isinstance(workflow, dict) and workflow["status"] == "waiting_input"
    code = httpx.get(f"{backend_url}/sms/outbox/13800138000").json()["code"]
    verified = _turn(b, again["session_id"], f"验证码 {code}")
    assert isinstance(verified["workflow"], dict) and verified["workflow"]["id"] == workflow["id"]
    assert verified["workflow"]["waiting_for"] == "approval:reset_password"
    [proposal] = verified["proposals"]
    assert isinstance(proposal, dict) and proposal["tool"] == "reset_password"
    decision = {"user_id": "u1001", "agent_id": "agent-1"}
    approved = a.post(f"/v1/proposals/{proposal['id']}/approve", json=decision)
    assert approved.status_code == 200 and approved.json()["status"] == "executed"
    twice = b.post(f"/v1/proposals/{proposal['id']}/approve", json=decision)
    assert twice.status_code == 409, "the other worker sees it decided"
    view = a.get(f"/v1/workflows/{workflow['id']}", params={"user_id": "u1001"}).json()
    assert view["status"] == "completed"
    messages = httpx.get(f"{backend_url}/sms/outbox/13800138000").json()["messages"]
    assert len(messages) == 1, "one temporary password, sent to the phone"
