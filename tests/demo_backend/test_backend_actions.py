"""Account-security and after-sales actions, and how bad bodies are refused."""

from __future__ import annotations

import re

import httpx
import pytest

from demo_backend import BackendState, read_captcha

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
    assert PHONE not in state.verified_phones, "a captcha never proves who is on the line"
    # A check re-sent after a crash gets the same answer …
    assert client.post("/captcha/verify", json=check).json() == {"valid": True}
    # … until a new captcha for the phone replaces this one.
    new_captcha("c3")
    assert client.post("/captcha/verify", json=check).status_code == 404
    bad = client.post("/captcha/verify", json={"captcha_id": captcha_id})
    assert bad.status_code == 422


def _verify_by_sms(client: httpx.Client, key: str) -> None:
    client.post("/sms/send", json={"phone": PHONE, "idempotency_key": key})
    code = client.get(f"/sms/outbox/{PHONE}").json()["code"]
    assert client.post("/sms/verify", json={"phone": PHONE, "code": code}).json()["valid"]


def test_password_changes_need_the_sms_code_and_never_a_captcha(
    client: httpx.Client, state: BackendState
) -> None:
    body = {"phone": PHONE, "new_password": "n3w-Secret!", "idempotency_key": "p1"}
    refused = client.post("/password", json=body)
    assert refused.status_code == 409 and refused.json()["code"] == "not_verified"
    captcha = client.post("/captcha", json={"phone": PHONE, "idempotency_key": "c"}).json()
    answer = state.captchas[captcha["captcha_id"]]["answer"]
    solved = {"captcha_id": captcha["captcha_id"], "answer": answer}
    assert client.post("/captcha/verify", json=solved).json()["valid"]
    reset = {"phone": PHONE, "idempotency_key": "r1"}
    assert client.post("/password/reset", json=reset).status_code == 409, "captcha is not proof"
    _verify_by_sms(client, "s1")
    assert client.post("/password", json={**body, "idempotency_key": "p2"}).json()["updated"]
    assert "n3w-Secret!" not in str(state.password_digests)
    unregistered = {**body, "phone": "13700000000", "idempotency_key": "p3"}
    assert client.post("/password", json=unregistered).status_code == 404


def test_a_reset_sends_a_temporary_password_to_the_phone_only(
    client: httpx.Client, state: BackendState
) -> None:
    _verify_by_sms(client, "s1")
    answer = client.post("/password/reset", json={"phone": PHONE, "idempotency_key": "r1"})
    assert answer.status_code == 200
    body = answer.json()
    assert body == {"sent": True, "channel": "sms", "phone_tail": PHONE[-4:], "user_id": "u1001"}
    [message] = client.get(f"/sms/outbox/{PHONE}").json()["messages"]
    temporary = message.rsplit(" ", 1)[-1]
    assert temporary not in answer.text
    replay = client.post("/password/reset", json={"phone": PHONE, "idempotency_key": "r1"})
    assert replay.json() == body and len(client.get(f"/sms/outbox/{PHONE}").json()["messages"]) == 1
    again = client.post("/password/reset", json={"phone": PHONE, "idempotency_key": "r2"})
    assert again.status_code == 409, "the proof is used up"


def test_returns_refunds_tickets(client: httpx.Client) -> None:
    ret = client.post(
        "/returns",
        json={"order_id": "202405181001", "reason": "七天无理由", "user_id": "u1001",
              "idempotency_key": "r1"},
    ).json()  # fmt: skip
    assert ret["return_id"] and ret["status"] == "approved"
    refund = {"order_id": "202405181001", "amount": 158.0, "user_id": "u1001"}
    early = client.post("/refunds", json={**refund, "idempotency_key": "f1"})
    assert early.status_code == 409 and early.json()["code"] == "return_not_received"
    received = client.post(f"/_returns/{ret['return_id']}/receive")
    assert received.json()["received"] is True
    done = client.post("/refunds", json={**refund, "idempotency_key": "f2"}).json()
    assert done["refund_id"] and done["status"] == "processing"
    more = client.post("/refunds", json={**refund, "amount": 1, "idempotency_key": "f3"})
    assert more.status_code == 409 and more.json()["refundable"] == 0
    ticket = {"user_id": "u1001", "order_id": "202405201234", "summary": "物流已超过7天未更新",
              "idempotency_key": "t1"}  # fmt: skip
    first = client.post("/tickets", json=ticket).json()
    assert client.post("/tickets", json=ticket).json() == first, "one ticket per key"
    note = {"user_id": "u1001", "note": "还是没有更新", "idempotency_key": "n1"}
    added = client.post(f"/tickets/{first['ticket_id']}/notes", json=note).json()
    assert added == {"ticket_id": first["ticket_id"], "status": "open", "notes": 1}
    foreign = client.post(f"/tickets/{first['ticket_id']}/notes",
                          json={**note, "user_id": "u1002", "idempotency_key": "n2"})  # fmt: skip
    assert foreign.status_code == 404
    no_order = client.post(
        "/tickets", json={"user_id": "u1001", "summary": "服务态度差", "idempotency_key": "t2"}
    )
    assert no_order.status_code == 200


def test_a_paid_order_not_yet_shipped_is_refunded_at_once(client: httpx.Client) -> None:
    body = {"order_id": "202405231122", "user_id": "u1003"}
    ret = client.post("/returns", json={**body, "reason": "不想要了", "idempotency_key": "r"})
    assert ret.status_code == 200
    twice = client.post("/returns", json={**body, "reason": "again", "idempotency_key": "r2"})
    assert twice.status_code == 409 and twice.json()["code"] == "return_exists"
    refund = client.post("/refunds", json={**body, "amount": 198.0, "idempotency_key": "f"})
    assert refund.status_code == 200, refund.text
    # Paid back in full before it shipped: the order is cancelled, nothing more to return.
    order = client.get("/orders/202405231122").json()
    assert (order["status"], order["refunded_amount"]) == ("cancelled", 198.0)
    after = client.post("/returns", json={**body, "reason": "again", "idempotency_key": "r3"})
    assert after.status_code == 409 and after.json()["code"] == "not_returnable"


def test_business_refusals(client: httpx.Client) -> None:
    unknown = client.post(
        "/returns",
        json={
            "order_id": "999999999999",
            "reason": "x",
            "user_id": "u1001",
            "idempotency_key": "r",
        },
    )
    assert unknown.status_code == 404
    foreign = client.post(
        "/returns",
        json={
            "order_id": "202405181001",
            "reason": "x",
            "user_id": "u1009",
            "idempotency_key": "r1",
        },
    )
    assert foreign.status_code == 404, "another customer's order looks unknown"
    assert foreign.json()["error"] == unknown.json()["error"].replace(
        "999999999999", "202405181001"
    )
    cancelled = client.post(
        "/returns",
        json={
            "order_id": "202405211314",
            "reason": "x",
            "user_id": "u1005",
            "idempotency_key": "r2",
        },
    )
    assert cancelled.status_code == 409
    too_much = client.post(
        "/refunds",
        json={
            "order_id": "202405231122",
            "amount": 10_000,
            "user_id": "u1003",
            "idempotency_key": "f",
        },
    )
    assert too_much.status_code == 409 and too_much.json()["code"] == "over_refundable"
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
        (
            "/refunds",
            {"order_id": "202405181001", "amount": -5, "user_id": "u1001", "idempotency_key": "k"},
        ),
        (
            "/refunds",
            {
                "order_id": "202405181001",
                "amount": "lots",
                "user_id": "u1001",
                "idempotency_key": "k",
            },
        ),
        (
            "/returns",
            {"order_id": "202405181001", "reason": "", "user_id": "u1001", "idempotency_key": "k"},
        ),
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
