"""Two contacts through the HTTP API: what contact 1 said is on screen when contact 2 starts."""

from __future__ import annotations

from tests.e2e.conftest import Service


def _keys(notes: list[dict[str, object]]) -> set[object]:
    return {n["key"] for n in notes}


def test_notes_from_contact_one_open_contact_two_and_stay_with_their_user(
    service: Service,
) -> None:
    first = service.open_session("u1001")
    assert first["notes"] == []
    sid = first["session_id"]
    service.turn(sid, "u1001", "我的订单202405201234现在什么状态？")
    late = service.turn(sid, "u1001", "物流已经超过7天了，我很生气")
    assert {"key": "logistics_delay_days", "value": 7} in [
        {"key": f["key"], "value": f["value"]} for f in late["key_facts"] if f["is_key_fact"]
    ]
    service.turn(sid, "u1001", "以后不要给我打电话，有事发短信")
    closed = service.close(sid, "u1001")
    assert {"logistics_delay_days", "contact_preference_no_calls"} <= _keys(closed["notes"])

    second = service.open_session("u1001")
    assert second["session_id"] != sid and second["resumed"] is False
    assert {"logistics_delay_days", "contact_preference_no_calls"} <= _keys(second["notes"])
    delay = next(n for n in second["notes"] if n["key"] == "logistics_delay_days")
    assert delay["value"] == 7 and delay["source_session"] == sid

    via_users = service.client.get("/v1/users/u1001/notes").json()["notes"]
    assert _keys(via_users) == _keys(second["notes"])

    stranger = service.open_session("u1002")
    assert stranger["notes"] == []
    assert service.client.get("/v1/users/u1002/notes").json()["notes"] == []
    other = service.turn(stranger["session_id"], "u1002", "我的订单到哪了")
    assert other["notes"] == []


def test_a_session_resumes_within_the_idle_window(service: Service) -> None:
    first = service.open_session("u1005")
    again = service.open_session("u1005")
    assert again["session_id"] == first["session_id"] and again["resumed"] is True
    fresh = service.open_session("u1005", resume=False)
    assert fresh["session_id"] != first["session_id"]
