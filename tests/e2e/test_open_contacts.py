"""A second contact while the first is still open: its notes show what the customer said there.

Over real HTTP: the key facts of the customer's other open session are in the new session's notes
(marked as coming from an open contact, not verified, in the customer's language), in its turns
too; never in another customer's or another tenant's; and once the first session closes they are
shown once, from memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread
from tests.e2e.conftest import Service, make_settings

Notes = list[dict[str, Any]]


def _by_key(notes: Notes) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for note in notes:
        out.setdefault(str(note["key"]), []).append(note)
    return out


def _said(turn: dict[str, Any]) -> dict[str, Any]:
    return {f["key"]: f["value"] for f in turn["key_facts"] if f["is_key_fact"]}


def test_a_second_open_contact_shows_the_first_ones_key_facts_once(service: Service) -> None:
    first = service.open_session("u1001")
    a = first["session_id"]
    said = service.turn(a, "u1001", "以后不要给我打电话，发短信就行")
    assert _said(said) == {"contact_preference_no_calls": True, "contact_preference_channel": "sms"}

    second = service.open_session("u1001", resume=False)
    b = second["session_id"]
    assert b != a and second["resumed"] is False
    shown = _by_key(second["notes"])
    assert set(shown) == {"contact_preference_no_calls", "contact_preference_channel"}
    for (note,) in shown.values():
        assert note["origin"] == "open_contact" and note["fact_id"] is None
        assert note["source_session"] == a
        assert note["text"].startswith("（另一进行中的会话所述，未核实）")  # the customer's Chinese
    assert shown["contact_preference_channel"][0]["text"].endswith("希望通过短信联系")
    assert shown["contact_preference_no_calls"][0]["text"].endswith("不希望接到电话")
    # Nothing reached memory yet: the facts are the open contact's, not the customer's record.
    assert service.client.get("/v1/users/u1001/notes").json()["notes"] == []

    # The turns of the second contact show them too (read as it opened, no look-up per turn).
    asked = service.turn(b, "u1001", "我的订单202405201234到哪了")
    assert {n["key"]: n["origin"] for n in asked["notes"]} == {
        "contact_preference_no_calls": "open_contact",
        "contact_preference_channel": "open_contact",
    }

    # Another customer sees nothing of it, at the start or in a turn.
    stranger = service.open_session("u1002", resume=False)
    assert stranger["notes"] == []
    assert service.turn(stranger["session_id"], "u1002", "我的订单到哪了")["notes"] == []

    # The first contact ends: its facts move to memory and are shown once, from there.
    closed = service.close(a, "u1001")
    assert {n["key"] for n in closed["notes"]} == set(shown)
    looked = service.client.get(f"/v1/sessions/{b}", params={"user_id": "u1001"}).json()
    after = _by_key(looked["notes"])
    assert set(after) == set(shown)
    assert all(len(notes) == 1 and notes[0]["origin"] == "memory" for notes in after.values())
    turned = _by_key(service.turn(b, "u1001", "好的")["notes"])
    assert set(turned) == set(shown)
    assert all(len(notes) == 1 and notes[0]["origin"] == "memory" for notes in turned.values())


def test_open_contact_notes_speak_english_and_stay_in_their_tenant(
    tmp_path: Path, backend_url: str
) -> None:
    key_a, key_b = "key-a-0123456789ab", "key-b-0123456789ab"
    settings = make_settings(tmp_path, backend_url, api_keys={key_a: "acme", key_b: "globex"})
    acme, globex = {"x-api-key": key_a}, {"x-api-key": key_b}
    with (
        serve_in_thread(create_app(settings)) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):

        def open_session(headers: dict[str, str], user: str) -> dict[str, Any]:
            body = {"user_id": user, "resume": False}
            response = client.post("/v1/sessions", json=body, headers=headers)
            assert response.status_code == 201, response.text
            return dict(response.json())

        def turn(headers: dict[str, str], sid: str, user: str, text: str) -> dict[str, Any]:
            body = {"user_id": user, "text": text}
            response = client.post(f"/v1/sessions/{sid}/turns", json=body, headers=headers)
            assert response.status_code == 200, response.text
            return dict(response.json())

        a = open_session(acme, "u2001")["session_id"]
        said = turn(acme, a, "u2001", "It has been 10 days and I'm upset")
        assert _said(said) == {"logistics_delay_days": 10}

        # The same customer id under another tenant is another customer.
        other_tenant = open_session(globex, "u2001")
        assert other_tenant["notes"] == []
        answer = turn(globex, other_tenant["session_id"], "u2001", "Where is my parcel?")
        assert answer["notes"] == []

        second = open_session(acme, "u2001")
        (note,) = second["notes"]
        assert note["key"] == "logistics_delay_days" and note["value"] == 10
        assert note["origin"] == "open_contact" and note["source_session"] == a
        assert note["text"] == "(said in another open contact, not verified) Parcel 10 days late"


def _shared(data_dir: Path, backend_url: str, redis_url: str, postgres_dsn: str) -> Settings:
    return Settings(
        service={"data_dir": data_dir, "backend_url": backend_url},
        sessions={"store": "redis", "redis_url": redis_url},
        workflows={"watchdog_interval_s": 3600},
        memory={"store": "postgres", "postgres_dsn": postgres_dsn},
    )


@pytest.mark.redis
@pytest.mark.postgres
def test_two_workers_on_redis_show_the_other_open_contact(
    tmp_path: Path, backend_url: str, redis_url: str, postgres_dsn: str
) -> None:
    one = _shared(tmp_path / "one", backend_url, redis_url, postgres_dsn)
    two = _shared(tmp_path / "two", backend_url, redis_url, postgres_dsn)
    with (
        serve_in_thread(create_app(one)) as url_one,
        serve_in_thread(create_app(two)) as url_two,
        httpx.Client(base_url=url_one, timeout=30) as first,
        httpx.Client(base_url=url_two, timeout=30) as second,
    ):
        body = {"user_id": "u3001", "resume": False}
        a = first.post("/v1/sessions", json=body).json()["session_id"]
        said = first.post(
            f"/v1/sessions/{a}/turns",
            json={"user_id": "u3001", "text": "Please don't call me, text me instead"},
        ).json()
        assert _said(said) == {
            "contact_preference_no_calls": True,
            "contact_preference_channel": "sms",
        }

        opened = second.post("/v1/sessions", json=body).json()
        shown = {n["key"]: n for n in opened["notes"]}
        assert set(shown) == {"contact_preference_no_calls", "contact_preference_channel"}
        assert {n["origin"] for n in shown.values()} == {"open_contact"}
        assert shown["contact_preference_channel"]["text"] == (
            "(said in another open contact, not verified) Prefers contact by text message"
        )
        stranger = second.post("/v1/sessions", json={"user_id": "u3002", "resume": False})
        assert stranger.json()["notes"] == []

        assert first.delete(f"/v1/sessions/{a}", params={"user_id": "u3001"}).status_code == 200
        b = opened["session_id"]
        looked = second.get(f"/v1/sessions/{b}", params={"user_id": "u3001"}).json()
        after = _by_key(looked["notes"])
        assert set(after) == set(shown)
        assert all(len(n) == 1 and n[0]["origin"] == "memory" for n in after.values())
