"""The back office's after-sales rules: whose order it is, what may be refunded, and when."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

IN_TRANSIT = ("202405201234", "u1001", 428.9)  # shipped, parcel in transit
DELIVERED = ("202405181001", "u1001", 158.0)
PAID = ("202405231122", "u1003", 198.0)  # paid, waiting for the courier
LOST = ("202405120345", "u1004", 599.0)  # shipped, the carrier lost the parcel


def _return(
    client: httpx.Client, order: tuple[str, str, float], key: str, **over: Any
) -> httpx.Response:
    body = {"order_id": order[0], "user_id": order[1], "reason": "不想要了", "idempotency_key": key}
    return client.post("/returns", json={**body, **over})


def _refund(
    client: httpx.Client, order: tuple[str, str, float], amount: float, key: str, **over: Any
) -> httpx.Response:
    body = {"order_id": order[0], "user_id": order[1], "amount": amount, "idempotency_key": key}
    return client.post("/refunds", json={**body, **over})


def _refunded(client: httpx.Client, order_id: str) -> float:
    return float(client.get(f"/orders/{order_id}").json()["refunded_amount"])


# -- ownership ----------------------------------------------------------------------------------


def test_shipments_and_phones_name_their_owner(client: httpx.Client) -> None:
    assert client.get("/shipments/202405201234").json()["user_id"] == "u1001"
    assert client.get("/shipments/202405220318").json()["user_id"] == "u1002"
    assert client.get("/phones/13912345678").json() == {
        "phone": "13912345678",
        "registered": True,
        "user_id": "u1002",
    }
    assert client.get("/phones/13700000000").json()["user_id"] is None


def test_another_customers_order_reads_as_unknown(client: httpx.Client) -> None:
    foreign_return = _return(client, DELIVERED, "r1", user_id="u1002")
    unknown_return = _return(client, DELIVERED, "r2", order_id="999999999999")
    assert foreign_return.status_code == unknown_return.status_code == 404
    foreign_refund = _refund(client, PAID, 10, "f1", user_id="u1001")
    unknown_refund = _refund(client, PAID, 10, "f2", order_id="999999999999")
    assert foreign_refund.status_code == unknown_refund.status_code == 404
    # The same body either way, but for the id the caller sent: nothing tells them apart.
    for foreign, unknown, order_id in (
        (foreign_return, unknown_return, DELIVERED[0]),
        (foreign_refund, unknown_refund, PAID[0]),
    ):
        assert foreign.json() == {
            key: value.replace("999999999999", order_id) if isinstance(value, str) else value
            for key, value in unknown.json().items()
        }
        assert foreign.json()["code"] == "not_found"
    assert client.get(f"/orders/{DELIVERED[0]}").json()["status"] == "delivered"
    assert _refunded(client, PAID[0]) == 0.0


def test_the_acting_customer_is_required(client: httpx.Client) -> None:
    no_user = {"order_id": PAID[0], "amount": 10, "idempotency_key": "f"}
    assert client.post("/refunds", json=no_user).status_code == 422
    no_user = {"order_id": PAID[0], "reason": "x", "idempotency_key": "r"}
    assert client.post("/returns", json=no_user).status_code == 422


def test_a_ticket_about_another_customers_order_is_refused(client: httpx.Client) -> None:
    body = {
        "user_id": "u1002",
        "order_id": DELIVERED[0],
        "summary": "查一下",
        "idempotency_key": "t",
    }
    assert client.post("/tickets", json=body).status_code == 404
    own = {**body, "order_id": "202405150456", "idempotency_key": "t2"}
    assert client.post("/tickets", json=own).status_code == 200


# -- refunds ------------------------------------------------------------------------------------


def test_a_paid_order_is_cancelled_by_a_refund_at_once(client: httpx.Client) -> None:
    refund = _refund(client, PAID, 198.0, "f1")
    assert refund.status_code == 200
    assert refund.json() == {
        "refund_id": refund.json()["refund_id"],
        "order_id": PAID[0],
        "amount": 198.0,
        "status": "processing",
        "expected_days": 3,
    }
    order = client.get(f"/orders/{PAID[0]}").json()
    assert (order["status"], order["refunded_amount"]) == ("cancelled", 198.0)
    again = _refund(client, PAID, 1, "f2")
    assert again.status_code == 409 and again.json()["code"] == "not_refundable"


def test_refunds_never_exceed_what_was_paid(client: httpx.Client) -> None:
    too_much = _refund(client, PAID, 198.01, "f1")
    assert too_much.status_code == 409
    assert too_much.json()["code"] == "over_refundable"
    assert too_much.json()["refundable"] == 198.0
    assert "198.00" in too_much.json()["error"]
    # Partial refunds add up, in cents; what is left is what the next one may take.
    for key, amount in (("f2", 0.1), ("f3", 0.2), ("f4", 100.0)):
        assert _refund(client, PAID, amount, key).status_code == 200
    assert _refunded(client, PAID[0]) == 100.3
    over = _refund(client, PAID, 97.71, "f5")
    assert over.status_code == 409 and over.json()["refundable"] == 97.7
    assert _refund(client, PAID, 0.004, "f6").status_code == 422, "less than a cent"
    assert _refund(client, PAID, 97.7, "f7").status_code == 200
    assert client.get(f"/orders/{PAID[0]}").json()["status"] == "cancelled"


def test_an_already_refunded_order_has_nothing_left(client: httpx.Client) -> None:
    refused = _refund(client, ("202405170666", "u1006", 459.0), 1, "f")
    assert refused.status_code == 409
    assert (refused.json()["code"], refused.json()["refundable"]) == ("over_refundable", 0)
    unpaid = _refund(client, ("202405250077", "u1001", 129.0), 1, "f2")
    assert unpaid.status_code == 409 and unpaid.json()["code"] == "not_refundable"


@pytest.mark.parametrize("order", [IN_TRANSIT, DELIVERED], ids=["in_transit", "delivered"])
def test_a_shipped_order_is_refunded_only_once_its_return_is_received(
    client: httpx.Client, order: tuple[str, str, float]
) -> None:
    order_id, _, amount = order
    before = _refund(client, order, amount, "f1")
    assert before.status_code == 409 and before.json()["code"] == "return_not_received"
    ret = _return(client, order, "r1")
    assert ret.status_code == 200
    assert client.get(f"/orders/{order_id}").json()["status"] == "returning"
    still = _refund(client, order, amount, "f2")
    assert still.status_code == 409 and still.json()["code"] == "return_not_received"

    received = client.post(f"/_returns/{ret.json()['return_id']}/receive")
    assert received.status_code == 200
    assert received.json() == {
        "return_id": ret.json()["return_id"],
        "order_id": order_id,
        "received": True,
    }
    after = _refund(client, order, amount, "f3")
    assert after.status_code == 200, after.text
    order_now = client.get(f"/orders/{order_id}").json()
    assert (order_now["status"], order_now["refunded_amount"]) == ("refunded", amount)
    refused = [e for e in client.get("/_log").json()["entries"] if e["endpoint"] == "issue_refund"]
    assert [e["status"] for e in refused] == [409, 409, 200]


def test_a_partly_refunded_return_stays_open(client: httpx.Client) -> None:
    ret = _return(client, DELIVERED, "r1").json()
    client.post(f"/_returns/{ret['return_id']}/receive")
    assert _refund(client, DELIVERED, 58.0, "f1").status_code == 200
    assert client.get(f"/orders/{DELIVERED[0]}").json()["status"] == "returning"
    second = _return(client, DELIVERED, "r2")
    assert second.status_code == 409 and second.json()["code"] == "return_exists"
    assert _refund(client, DELIVERED, 100.0, "f2").status_code == 200


def test_a_lost_parcel_is_refunded_without_waiting_for_a_return(client: httpx.Client) -> None:
    assert client.get(f"/shipments/{LOST[0]}").json()["status"] == "lost"
    refund = _refund(client, LOST, 599.0, "f1")
    assert refund.status_code == 200, refund.text


def test_the_sample_returning_order_needs_its_parcel_received(client: httpx.Client) -> None:
    order = ("202405100789", "u1003", 299.0)
    assert client.get(f"/orders/{order[0]}").json()["status"] == "returning"
    assert _refund(client, order, 299.0, "f1").json()["code"] == "return_not_received"
    ret = _return(client, order, "r1").json()
    assert ret["status"] == "approved"
    client.post(f"/_returns/{ret['return_id']}/receive")
    assert _refund(client, order, 299.0, "f2").status_code == 200


# -- returns ------------------------------------------------------------------------------------


def test_one_open_return_per_order_but_a_replay_answers_the_first(
    client: httpx.Client,
) -> None:
    first = _return(client, IN_TRANSIT, "r1")
    assert first.status_code == 200 and first.json()["status"] == "pending_review"
    replay = _return(client, IN_TRANSIT, "r1")
    assert replay.status_code == 200 and replay.json() == first.json()
    assert replay.headers["Idempotent-Replayed"] == "true"
    second = _return(client, IN_TRANSIT, "r2", reason="质量问题")
    assert second.status_code == 409
    assert second.json()["code"] == "return_exists"
    outcomes = [e["outcome"] for e in client.get("/_log").json()["entries"]]
    assert outcomes == ["executed", "replayed", "error"]


def test_unpaid_and_cancelled_orders_cannot_be_returned(client: httpx.Client) -> None:
    unpaid = _return(client, ("202405250077", "u1001", 129.0), "r1")
    cancelled = _return(client, ("202405211314", "u1005", 177.0), "r2")
    for refused, status in ((unpaid, "pending_payment"), (cancelled, "cancelled")):
        assert refused.status_code == 409
        assert refused.json()["code"] == "not_returnable"
        assert refused.json()["order_status"] == status


def test_receiving_is_an_admin_route_that_is_logged_but_never_faulted(
    client: httpx.Client,
) -> None:
    unknown = client.post("/_returns/RT99999999/receive")
    assert unknown.status_code == 404 and unknown.json()["code"] == "not_found"
    ret = _return(client, DELIVERED, "r1").json()
    client.put("/_faults/*", json={"error_rate": 1.0})
    received = client.post(f"/_returns/{ret['return_id']}/receive")
    assert received.status_code == 200
    again = client.post(f"/_returns/{ret['return_id']}/receive")
    assert again.json() == received.json()
    assert "receive_return" not in client.get("/_faults").json()["endpoints"]
    entries = [
        e for e in client.get("/_log").json()["entries"] if e["endpoint"] == "receive_return"
    ]
    assert [(e["method"], e["outcome"], e["status"]) for e in entries] == [
        ("POST", "error", 404),
        ("POST", "executed", 200),
        ("POST", "executed", 200),
    ]
