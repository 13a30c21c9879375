"""Each idempotency key executes once; repeats replay the stored answer and are logged so."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx

from demo_backend import BackendState

# A paid order not shipped yet: refundable at once (a cancellation).
REFUND = {
    "order_id": "202405231122",
    "amount": 50.0,
    "user_id": "u1003",
    "idempotency_key": "refund-1",
}


def _outcomes(client: httpx.Client, endpoint: str) -> list[str]:
    entries = client.get("/_log").json()["entries"]
    return [e["outcome"] for e in entries if e["endpoint"] == endpoint]


def test_repeat_replays_the_stored_result(client: httpx.Client, state: BackendState) -> None:
    first = client.post("/refunds", json=REFUND)
    second = client.post("/refunds", json=REFUND)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert second.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert len(state.refunds) == 1
    assert _outcomes(client, "issue_refund") == ["executed", "replayed"]


def test_every_keyed_post_is_idempotent(client: httpx.Client, state: BackendState) -> None:
    client.post("/sms/send", json={"phone": "13800138000", "idempotency_key": "k0"})
    code = client.get("/sms/outbox/13800138000").json()["code"]
    client.post("/sms/verify", json={"phone": "13800138000", "code": code})
    order = {"order_id": "202405231122", "user_id": "u1003"}
    bodies = {
        "/sms/send": {"phone": "13800138000", "idempotency_key": "k1"},
        "/captcha": {"phone": "13800138000", "idempotency_key": "k1"},
        "/password": {"phone": "13800138000", "new_password": "secret99", "idempotency_key": "k1"},
        "/returns": {**order, "reason": "不想要了", "idempotency_key": "k1"},
        "/refunds": {**order, "amount": 1.5, "idempotency_key": "k1"},
        "/tickets": {"user_id": "u1001", "summary": "催单", "idempotency_key": "k1"},
    }
    client.delete("/_log")
    for path, body in bodies.items():
        answers = [client.post(path, json=body).json() for _ in range(3)]
        assert answers[0] == answers[1] == answers[2], path
    assert len(state.returns) == len(state.refunds) == len(state.tickets) == 1
    assert len(state.captchas) == 1
    entries = client.get("/_log").json()["entries"]
    executed = [e for e in entries if e["outcome"] == "executed"]
    replayed = [e for e in entries if e["outcome"] == "replayed"]
    assert len(executed) == 6 and len(replayed) == 12


def test_sms_replay_does_not_send_a_new_code(client: httpx.Client) -> None:
    body = {"phone": "13800138000", "idempotency_key": "same"}
    client.post("/sms/send", json=body)
    code = client.get("/sms/outbox/13800138000").json()["code"]
    for _ in range(3):
        client.post("/sms/send", json=body)
    assert client.get("/sms/outbox/13800138000").json()["code"] == code


def test_key_reused_with_another_body_is_409(client: httpx.Client, state: BackendState) -> None:
    client.post("/refunds", json=REFUND)
    conflict = client.post("/refunds", json={**REFUND, "amount": 99.0})
    assert conflict.status_code == 409
    assert len(state.refunds) == 1
    assert _outcomes(client, "issue_refund") == ["executed", "error"]


def test_keys_are_scoped_per_endpoint(client: httpx.Client, state: BackendState) -> None:
    client.post("/refunds", json={**REFUND, "idempotency_key": "shared"})
    client.post(
        "/returns",
        json={"order_id": "202405231122", "reason": "质量问题", "user_id": "u1003",
              "idempotency_key": "shared"},
    )  # fmt: skip
    assert len(state.refunds) == 1 and len(state.returns) == 1


def test_header_key_works_like_a_body_key(client: httpx.Client, state: BackendState) -> None:
    body = {"user_id": "u1002", "summary": "包装破损"}
    headers = {"Idempotency-Key": "hdr-1"}
    a = client.post("/tickets", json=body, headers=headers).json()
    b = client.post("/tickets", json=body, headers=headers).json()
    assert a == b and len(state.tickets) == 1


def test_without_a_key_every_call_executes(client: httpx.Client, state: BackendState) -> None:
    body = {"user_id": "u1002", "summary": "包装破损"}
    ids = {client.post("/tickets", json=body).json()["ticket_id"] for _ in range(3)}
    assert len(ids) == 3 and len(state.tickets) == 3


def test_concurrent_repeats_execute_once(base_url: str, state: BackendState) -> None:
    def post(_: int) -> dict[str, object]:
        with httpx.Client(base_url=base_url, timeout=10) as http:
            result: dict[str, object] = http.post("/refunds", json=REFUND).json()
            return result

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(post, range(16)))
    assert all(a == answers[0] for a in answers)
    assert len(state.refunds) == 1
    outcomes = [e["outcome"] for e in state.log.since(0)]
    assert outcomes.count("executed") == 1 and outcomes.count("replayed") == 15


def test_refused_requests_are_not_stored(client: httpx.Client, state: BackendState) -> None:
    body = {"order_id": "202405181001", "amount": 5000.0, "idempotency_key": "big"}
    assert client.post("/refunds", json=body).status_code == 422
    assert client.post("/refunds", json=body).status_code == 422
    assert _outcomes(client, "issue_refund") == ["error", "error"]
