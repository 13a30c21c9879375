"""The request log: what ran, what was replayed, what failed, in order."""

from __future__ import annotations

import httpx


def test_entries_have_the_documented_fields(client: httpx.Client) -> None:
    client.get("/orders/202405201234")
    client.post("/sms/send", json={"phone": "13800138000", "idempotency_key": "k"})
    entries = client.get("/_log").json()["entries"]
    assert [e["endpoint"] for e in entries] == ["get_order", "send_sms"]
    first, second = entries
    assert set(first) == {"seq", "endpoint", "method", "idempotency_key", "outcome", "status", "at"}
    assert (first["method"], first["outcome"], first["status"]) == ("GET", "executed", 200)
    assert first["idempotency_key"] is None
    assert (second["method"], second["idempotency_key"]) == ("POST", "k")
    assert second["seq"] > first["seq"]


def test_since_returns_only_newer_entries(client: httpx.Client) -> None:
    client.get("/health")
    mark = client.get("/_log").json()["last_seq"]
    client.get("/users/u1001")
    client.get("/users/u0000")
    newer = client.get("/_log", params={"since": mark}).json()["entries"]
    assert [(e["endpoint"], e["outcome"], e["status"]) for e in newer] == [
        ("get_user", "executed", 200),
        ("get_user", "error", 404),
    ]
    assert client.get("/_log", params={"since": -1}).status_code == 422


def test_validation_errors_are_logged_under_the_route(client: httpx.Client) -> None:
    client.post("/refunds", json={"order_id": "202405181001"})
    (entry,) = client.get("/_log").json()["entries"]
    assert (entry["endpoint"], entry["outcome"], entry["status"]) == ("issue_refund", "error", 422)


def test_control_routes_are_not_logged(client: httpx.Client) -> None:
    client.get("/_faults")
    client.put("/_faults/health", json={})
    client.delete("/_faults")
    client.get("/nowhere")
    assert client.get("/_log").json()["entries"] == []


def test_clear_keeps_sequence_numbers_growing(client: httpx.Client) -> None:
    client.get("/health")
    client.get("/health")
    cleared = client.delete("/_log").json()
    assert cleared == {"cleared": True, "last_seq": 2}
    assert client.get("/_log").json()["entries"] == []
    client.get("/health")
    (entry,) = client.get("/_log").json()["entries"]
    assert entry["seq"] == 3
