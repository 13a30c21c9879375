"""Account-security and after-sales actions, and how bad bodies are refused."""

from __future__ import annotations

import re

import httpx
import pytest

from demo_backend import BackendState, create_app, read_captcha
from hermes_desk.testing.servers import serve_in_thread

PHONE = "13800138000"


def test_sms_code_round_trip(client: httpx.Client) -> None:
    sent = client.post("/sms/send", json={"phone": PHONE, "idempotency_key": "s1"}).json()
    assert sent["sent"] is True and sent["request_id"]
    code = client.get(f"/sms/outbox/{PHONE}").json()["code"]
    assert re.fullmatch(r"\d{6}", code)
    wrong = "000000" if code != "000000" else "111111"
    assert client.post("/sms/verify", json={"phone": PHONE, "code": wrong}).json() == {
        "valid": False
    }
    assert client.post("/sms/verify", json={"phone": PHONE, "code": code}).json() == {"valid": True}


def test_new_send_replaces_the_code(client: httpx.Client) -> None:
    client.post("/sms/send", json={"phone": PHONE, "idempotency_key": "a"})
    first = client.get(f"/sms/outbox/{PHONE}").json()["code"]
    codes = {first}
    for key in ("b", "c", "d"):
        client.post("/sms/send", json={"phone": PHONE, "idempotency_key": key})
        codes.add(client.get(f"/sms/outbox/{PHONE}").json()["code"])
    latest = client.get(f"/sms/outbox/{PHONE}").json()["code"]
    assert len(codes) > 1
    if first != latest:
        assert not client.post("/sms/verify", json={"phone": PHONE, "code": first}).json()["valid"]
    assert client.post("/sms/verify", json={"phone": PHONE, "code": latest}).json()["valid"]


def test_expired_code_is_invalid() -> None:
    now = [1_000_000.0]
    state = BackendState(seed=1, now=lambda: now[0], sms_code_ttl_s=300)
    state.send_sms(PHONE)
    code = state.outbox(PHONE)["code"]
    now[0] += 301
    assert state.verify_sms(PHONE, code) == {"valid": False}


def test_outbox_without_a_code_is_404(client: httpx.Client) -> None:
    assert client.get("/sms/outbox/13912345678").status_code == 404


def test_captcha(client: httpx.Client) -> None:
    body = client.post("/captcha", json={"phone": PHONE, "idempotency_key": "c1"}).json()
    assert body["captcha_id"]
    assert body["image"].startswith("data:image/svg+xml;base64,")


def test_captcha_answer_is_checked_case_insensitively_until_replaced(
    client: httpx.Client, state: BackendState
) -> None:
    def new_captcha(key: str) -> str:
        body = client.post("/captcha", json={"phone": PHONE, "idempotency_key": key}).json()
        return str(body["captcha_id"])

    captcha_id = new_captcha("c2")
    answer = state.captchas[captcha_id]["answer"]
    image = client.post("/captcha", json={"phone": PHONE, "idempotency_key": "c2"}).json()["image"]
    assert read_captcha(image) == answer  # what the customer reads off the picture
    for not_ours in ("data:image/svg+xml;base64,PHN2Zy8+", "no image", "data:,"):
        with pytest.raises(ValueError):
            read_captcha(not_ours)
    wrong = "AAAA" if answer != "AAAA" else "BBBB"
    check = {"captcha_id": captcha_id, "answer": wrong}
    assert client.post("/captcha/verify", json=check).json() == {"valid": False}
    check["answer"] = answer.lower()
    assert client.post("/captcha/verify", json=check).json() == {"valid": True}
    assert PHONE in state.verified_phones
    # A check re-sent after a crash gets the same answer …
    assert client.post("/captcha/verify", json=check).json() == {"valid": True}
    # … until a new captcha for the phone replaces this one.
    new_captcha("c3")
    assert client.post("/captcha/verify", json=check).status_code == 404
    bad = client.post("/captcha/verify", json={"captcha_id": captcha_id})
    assert bad.status_code == 422


def test_password_update(client: httpx.Client, state: BackendState) -> None:
    body = {"phone": PHONE, "new_password": "n3w-Secret!", "idempotency_key": "p1"}
    assert client.post("/password", json=body).json()["updated"] is True
    assert "n3w-Secret!" not in str(state.password_digests)
    unregistered = {**body, "phone": "13700000000", "idempotency_key": "p2"}
    assert client.post("/password", json=unregistered).status_code == 404


def test_password_can_require_a_verified_phone() -> None:
    state = BackendState(seed=3, require_verified_phone=True)
    with serve_in_thread(create_app(state)) as url, httpx.Client(base_url=url) as client:
        body = {"phone": PHONE, "new_password": "abcdef12", "idempotency_key": "p1"}
        assert client.post("/password", json=body).status_code == 403
        client.post("/sms/send", json={"phone": PHONE, "idempotency_key": "s1"})
        code = client.get(f"/sms/outbox/{PHONE}").json()["code"]
        assert client.post("/sms/verify", json={"phone": PHONE, "code": code}).json()["valid"]
        again = {**body, "idempotency_key": "p2"}
        assert client.post("/password", json=again).json()["updated"] is True


def test_returns_refunds_tickets(client: httpx.Client) -> None:
    ret = client.post(
        "/returns",
        json={"order_id": "202405181001", "reason": "七天无理由", "idempotency_key": "r1"},
    ).json()
    assert ret["return_id"] and ret["status"] == "approved"
    refund = client.post(
        "/refunds", json={"order_id": "202405181001", "amount": 158.0, "idempotency_key": "f1"}
    ).json()
    assert refund["refund_id"] and refund["status"] == "processing"
    ticket = client.post(
        "/tickets",
        json={
            "user_id": "u1001",
            "order_id": "202405201234",
            "summary": "物流已超过7天未更新",
            "idempotency_key": "t1",
        },
    ).json()
    assert ticket["ticket_id"]
    no_order = client.post(
        "/tickets", json={"user_id": "u1001", "summary": "服务态度差", "idempotency_key": "t2"}
    )
    assert no_order.status_code == 200


def test_business_refusals(client: httpx.Client) -> None:
    unknown = client.post(
        "/returns", json={"order_id": "999999999999", "reason": "x", "idempotency_key": "r"}
    )
    assert unknown.status_code == 404
    cancelled = client.post(
        "/returns", json={"order_id": "202405211314", "reason": "x", "idempotency_key": "r2"}
    )
    assert cancelled.status_code == 409
    too_much = client.post(
        "/refunds", json={"order_id": "202405181001", "amount": 10_000, "idempotency_key": "f"}
    )
    assert too_much.status_code == 422
    assert (
        client.post(
            "/tickets", json={"user_id": "u9999", "summary": "x", "idempotency_key": "t"}
        ).status_code
        == 404
    )


def test_bad_bodies_are_422_and_change_nothing(client: httpx.Client, state: BackendState) -> None:
    cases = [
        ("/sms/send", {"idempotency_key": "k"}),
        ("/sms/send", {"phone": "23800138000", "idempotency_key": "k"}),
        ("/sms/verify", {"phone": PHONE}),
        ("/password", {"phone": PHONE, "new_password": "123", "idempotency_key": "k"}),
        ("/refunds", {"order_id": "202405181001", "amount": -5, "idempotency_key": "k"}),
        ("/refunds", {"order_id": "202405181001", "amount": "lots", "idempotency_key": "k"}),
        ("/returns", {"order_id": "202405181001", "reason": "", "idempotency_key": "k"}),
        ("/tickets", {"user_id": "u1001"}),
    ]
    for path, body in cases:
        response = client.post(path, json=body)
        assert response.status_code == 422, (path, body)
        assert response.json()["error"] == "invalid request"
    not_json = client.post(
        "/refunds", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert not_json.status_code == 422
    binary = client.post(
        "/refunds", content=b"\xff\x00garbage", headers={"content-type": "application/json"}
    )
    assert binary.status_code in {400, 422}
    assert "error" in binary.json()
    assert state.refunds == {} and state.returns == {} and state.sms_outbox == {}


def test_rejected_password_is_not_echoed(client: httpx.Client) -> None:
    response = client.post(
        "/password", json={"phone": PHONE, "new_password": "abc", "idempotency_key": "k"}
    )
    assert response.status_code == 422
    assert "abc" not in response.text
