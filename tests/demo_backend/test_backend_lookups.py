"""Data look-ups over HTTP: users, phones, orders, shipments, payment methods, features."""

from __future__ import annotations

import re
from datetime import date

import httpx
from demo_backend.state import SAMPLE_TODAY

from demo_backend import BackendState, load_sample_data


def test_health(client: httpx.Client) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_sample_data_shape() -> None:
    data = load_sample_data()
    assert len(data["users"]) >= 10
    assert len(data["orders"]) >= 20
    user_ids = {u["user_id"] for u in data["users"]}
    for user in data["users"]:
        assert re.fullmatch(r"u\d{4}", user["user_id"])
        assert re.fullmatch(r"1[3-9]\d{9}", user["phone"])
        assert re.search(r"[\u4e00-\u9fff]", user["name"])
        assert user["user_id"] in data["payment_methods"]
        assert user["user_id"] in data["supports"]
    for order in data["orders"]:
        assert re.fullmatch(r"\d{12}", order["order_id"])
        assert order["user_id"] in user_ids
        total = sum(item["qty"] * item["price"] for item in order["items"])
        assert abs(order["amount"] - total) < 0.01
    statuses = {s["status"] for s in data["shipments"]}
    assert {"pending", "in_transit", "delivered", "delayed", "lost"} <= statuses
    for shipment in data["shipments"]:
        eta = date.fromisoformat(shipment["eta"])
        # A parcel still on its way is not due before the data's today: a reply that gives its
        # date would promise a day already past (a late one is "delayed").
        if shipment["status"] in ("pending", "in_transit", "out_for_delivery"):
            assert eta >= SAMPLE_TODAY, shipment["order_id"]


def test_user_and_unknown_user(client: httpx.Client) -> None:
    user = client.get("/users/u1001").json()
    assert user["user_id"] == "u1001"
    assert user["name"] == "张伟"
    missing = client.get("/users/u9999")
    assert missing.status_code == 404
    assert "error" in missing.json()


def test_phone_registration(client: httpx.Client) -> None:
    registered = client.get("/phones/13800138000").json()
    assert registered == {"phone": "13800138000", "registered": True, "user_id": "u1001"}
    unknown = client.get("/phones/13700000000").json()
    assert unknown == {"phone": "13700000000", "registered": False, "user_id": None}
    assert client.get("/phones/12345").status_code == 422


def test_reference_order_and_shipment(client: httpx.Client) -> None:
    order = client.get("/orders/202405201234").json()
    assert order["user_id"] == "u1001"
    assert order["order_id"] == "202405201234"
    assert {"status", "items", "amount", "created_at"} <= order.keys()
    assert all({"name", "qty", "price"} <= item.keys() for item in order["items"])
    assert order["amount"] == round(sum(i["qty"] * i["price"] for i in order["items"]), 2)

    shipment = client.get("/shipments/202405201234").json()
    assert shipment["status"] == "in_transit"
    assert shipment["status_text"] == "运输中"
    assert shipment["days_in_transit"] == 7
    assert shipment["carrier"]
    date.fromisoformat(shipment["eta"])
    assert shipment["last_update"]


def test_user_orders_listed_newest_first(client: httpx.Client) -> None:
    body = client.get("/users/u1001/orders").json()
    ids = [o["order_id"] for o in body["orders"]]
    assert "202405201234" in ids
    created = [o["created_at"] for o in body["orders"]]
    assert created == sorted(created, reverse=True)
    assert all(o["user_id"] == "u1001" for o in body["orders"])


def test_unknown_order_and_missing_shipment(client: httpx.Client) -> None:
    assert client.get("/orders/999999999999").status_code == 404
    assert client.get("/shipments/999999999999").status_code == 404
    # An unpaid order exists but has not shipped.
    assert client.get("/orders/202405250077").status_code == 200
    no_shipment = client.get("/shipments/202405250077")
    assert no_shipment.status_code == 404
    assert "shipment" in no_shipment.json()["error"]


def test_delayed_and_lost_shipments_have_chinese_text(client: httpx.Client) -> None:
    assert client.get("/shipments/202405220318").json()["status_text"] == "延误"
    assert client.get("/shipments/202405120345").json()["status_text"] == "丢失"


def test_payment_methods(client: httpx.Client) -> None:
    body = client.get("/users/u1001/payment-methods").json()
    assert body["user_id"] == "u1001"
    types = {m["type"] for m in body["methods"]}
    assert {"alipay", "cod"} <= types
    assert all(m["label"] for m in body["methods"])
    assert client.get("/users/u0000/payment-methods").status_code == 404


def test_feature_support(client: httpx.Client) -> None:
    assert client.get("/users/u1001/supports/cod").json()["supported"] is True
    assert client.get("/users/u1002/supports/cod").json()["supported"] is False
    body = client.get("/users/u1002/supports/invoice").json()
    assert body == {"user_id": "u1002", "feature": "invoice", "supported": True}
    unknown = client.get("/users/u1001/supports/teleport")
    assert unknown.status_code == 404
    assert "cod" in unknown.json()["features"]


def test_unknown_route_is_json_404(client: httpx.Client) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404
    assert response.json() == {"error": "Not Found"}


def test_each_state_starts_fresh(client: httpx.Client, state: BackendState) -> None:
    response = client.post(
        "/returns",
        json={
            "order_id": "202405181001",
            "reason": "尺码不合适",
            "user_id": "u1001",
            "idempotency_key": "r1",
        },
    )
    assert response.status_code == 200
    assert client.get("/orders/202405181001").json()["status"] == "returning"
    assert BackendState().order("202405181001")["status"] == "delivered"


def test_sample_dates_move_to_today_keeping_their_distance() -> None:
    import datetime as dt

    from demo_backend.state import SAMPLE_TODAY, BackendState

    today = dt.date(2026, 11, 30)
    moved = BackendState(today=today).shipment("202405201234")
    written = BackendState().shipment("202405201234")
    shift = today - SAMPLE_TODAY
    assert moved["eta"] == (dt.date.fromisoformat(written["eta"]) + shift).isoformat()
    assert moved["last_update"].startswith(today.isoformat())
    assert moved["last_update"][10:] == written["last_update"][10:], "time of day kept"
    assert moved["order_id"] == written["order_id"] == "202405201234"
    assert moved["days_in_transit"] == written["days_in_transit"]
