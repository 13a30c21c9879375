"""Tickets and their notes: one ticket per idempotency key, notes only on the customer's own."""

from __future__ import annotations

import httpx

from demo_backend import BackendState

TICKET = {"user_id": "u1001", "order_id": "202405201234", "summary": "物流已超过7天未更新"}


def _ticket(client: httpx.Client, key: str) -> str:
    body = client.post("/tickets", json={**TICKET, "idempotency_key": key}).json()
    return str(body["ticket_id"])


def test_the_same_key_answers_the_same_ticket(client: httpx.Client, state: BackendState) -> None:
    answers = [client.post("/tickets", json={**TICKET, "idempotency_key": "t1"}) for _ in range(3)]
    assert {a.status_code for a in answers} == {200}
    assert answers[0].json() == answers[1].json() == answers[2].json()
    header = {"Idempotency-Key": "t2"}
    by_header = [client.post("/tickets", json=TICKET, headers=header).json() for _ in range(2)]
    assert by_header[0] == by_header[1] != answers[0].json()
    assert len(state.tickets) == 2
    other_body = client.post("/tickets", json={**TICKET, "summary": "x", "idempotency_key": "t1"})
    assert other_body.status_code == 409, "a key is never reused for a second ticket"
    assert len(state.tickets) == 2


def test_a_note_is_added_to_the_customers_ticket(client: httpx.Client) -> None:
    ticket_id = _ticket(client, "t1")
    first = client.post(
        f"/tickets/{ticket_id}/notes",
        json={"user_id": "u1001", "note": "客户再次来电催促", "idempotency_key": "n1"},
    )
    assert first.status_code == 200
    assert first.json() == {"ticket_id": ticket_id, "status": "open", "notes": 1}
    second = client.post(
        f"/tickets/{ticket_id}/notes",
        json={"user_id": "u1001", "note": "已联系快递公司"},
        headers={"Idempotency-Key": "n2"},
    )
    assert second.json()["notes"] == 2


def test_notes_are_idempotent_by_key(client: httpx.Client, state: BackendState) -> None:
    ticket_id = _ticket(client, "t1")
    note = {"user_id": "u1001", "note": "补充：外包装破损", "idempotency_key": "n1"}
    answers = [client.post(f"/tickets/{ticket_id}/notes", json=note) for _ in range(3)]
    assert [a.json()["notes"] for a in answers] == [1, 1, 1]
    assert answers[2].headers["Idempotent-Replayed"] == "true"
    assert state.tickets[ticket_id]["notes"] == ["补充：外包装破损"]
    # The key belongs to that note on that ticket: used for another ticket, it is refused.
    other = _ticket(client, "t2")
    elsewhere = client.post(f"/tickets/{other}/notes", json=note)
    assert elsewhere.status_code == 409
    assert state.tickets[other]["notes"] == []
    entries = [
        e for e in client.get("/_log").json()["entries"] if e["endpoint"] == "add_ticket_note"
    ]
    assert [e["outcome"] for e in entries] == ["executed", "replayed", "replayed", "error"]


def test_an_unknown_or_foreign_ticket_is_404_alike(
    client: httpx.Client, state: BackendState
) -> None:
    ticket_id = _ticket(client, "t1")
    foreign = client.post(
        f"/tickets/{ticket_id}/notes",
        json={"user_id": "u1002", "note": "看看别人的工单", "idempotency_key": "n1"},
    )
    unknown = client.post(
        "/tickets/TK99999999/notes",
        json={"user_id": "u1001", "note": "x", "idempotency_key": "n2"},
    )
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.json() == {"error": f"ticket {ticket_id} not found", "code": "not_found"}
    assert unknown.json() == {"error": "ticket TK99999999 not found", "code": "not_found"}
    assert state.tickets[ticket_id]["notes"] == []


def test_notes_can_be_faulted_like_any_route(client: httpx.Client, state: BackendState) -> None:
    ticket_id = _ticket(client, "t1")
    client.put("/_faults/add_ticket_note", json={"error_rate": 1.0, "status_code": 502})
    note = {"user_id": "u1001", "note": "补充说明", "idempotency_key": "n1"}
    faulted = client.post(f"/tickets/{ticket_id}/notes", json=note)
    assert faulted.status_code == 502
    assert faulted.json() == {"error": "injected fault", "endpoint": "add_ticket_note"}
    assert state.tickets[ticket_id]["notes"] == []
    client.delete("/_faults/add_ticket_note")
    assert client.post(f"/tickets/{ticket_id}/notes", json=note).json()["notes"] == 1
