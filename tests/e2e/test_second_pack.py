"""A second pack, written only as data (``tests/fixtures/packs/telecom``), runs end to end over
HTTP: its intents are read, its own slots are extracted by the extractors their schemas choose,
its tools reach its own back office and its replies speak the customer's language."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, HTTPException

from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.packs import load_pack
from hermes_desk.testing.servers import serve_in_thread

PACK = Path(__file__).resolve().parents[1] / "fixtures" / "packs" / "telecom"
CUSTOMER = "c-77"
LINE = "4155550134"
PLANS = {"PL2040": {"plan_id": "PL2040", "name": "Unlimited Plus", "data_gb": 40,
                    "monthly_fee": 45.0}}  # fmt: skip


def telecom_backend(calls: list[str]) -> FastAPI:
    app = FastAPI()

    @app.get("/customers/{customer}/lines/{msisdn}/balance")
    def balance(customer: str, msisdn: str) -> dict[str, Any]:
        calls.append(f"balance {customer} {msisdn}")
        if (customer, msisdn) != (CUSTOMER, LINE):
            raise HTTPException(404, "no such line for this customer")
        return {"msisdn": msisdn, "data_left_gb": 3.5, "renews_on": "2026-12-15"}

    @app.get("/plans/{plan_id}")
    def plan(plan_id: str) -> dict[str, Any]:
        calls.append(f"plan {plan_id}")
        if plan_id not in PLANS:
            raise HTTPException(404, "no such plan")
        return PLANS[plan_id]

    return app


@pytest.fixture
def telecom(tmp_path: Path) -> Iterator[tuple[httpx.Client, list[str]]]:
    calls: list[str] = []
    with serve_in_thread(telecom_backend(calls)) as backend_url:
        settings = Settings(
            service={"data_dir": tmp_path, "backend_url": backend_url, "pack": str(PACK)},
            workflows={"watchdog_interval_s": 3600},
        )
        with (
            serve_in_thread(create_app(settings)) as url,
            httpx.Client(base_url=url, timeout=60) as client,
        ):
            yield client, calls


def turn(client: httpx.Client, session: str, text: str) -> dict[str, Any]:
    response = client.post(
        f"/v1/sessions/{session}/turns", json={"user_id": CUSTOMER, "text": text}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_the_pack_is_only_data_and_declares_its_own_slots() -> None:
    pack = load_pack(PACK)
    assert set(pack.intents) == {"data_balance", "plan_change", "oos"}
    assert pack.slot_rules["msisdn"].extractor == "phone"
    assert pack.slot_rules["plan_id"].extractor == "pattern"
    assert "order_id" not in pack.slot_rules
    assert not list(PACK.glob("*.py")), "no code in the pack"


def test_a_telecom_conversation_end_to_end(telecom: tuple[httpx.Client, list[str]]) -> None:
    client, calls = telecom
    opened = client.post("/v1/sessions", json={"user_id": CUSTOMER})
    assert opened.status_code in (200, 201), opened.text
    sid = opened.json()["session_id"]

    balance = turn(client, sid, "How much data is left on +1 415-555-0134?")
    assert balance["intent"]["name"] == "data_balance"
    assert balance["slots"]["msisdn"] == LINE, "the pack's phone extractor: +1, groups 3-3-4"
    assert [(c["tool"], c["status"]) for c in balance["tool_calls"]] == [("get_balance", "ok")]
    assert calls == [f"balance {CUSTOMER} {LINE}"], "customer_id is the pack's turn argument"
    text = balance["suggestion"]["text"]
    assert text == "The line ending 0134 has 3.5 GB of data left; it renews on 2026-12-15."
    assert LINE not in text

    plan = turn(client, sid, "我想换成 pl2040 套餐")
    assert plan["intent"]["name"] == "plan_change"
    assert plan["slots"]["plan_id"] == "PL2040", "the pack's own pattern, either case"
    assert [(c["tool"], c["status"]) for c in plan["tool_calls"]] == [("get_plan", "ok")]
    assert calls[-1] == "plan PL2040"
    assert plan["suggestion"]["text"] == (
        "套餐 PL2040（Unlimited Plus）每月 40 GB 流量，月费 45 美元。需要为您更换吗？"
    )

    unknown = turn(client, sid, "And what does plan PL9999 include?")
    assert unknown["intent"]["name"] == "plan_change"
    assert unknown["slots"]["plan_id"] == "PL9999"
    assert calls[-1] == "plan PL9999"
    assert unknown["suggestion"]["situation"] == "not_found"
    assert unknown["suggestion"]["text"] == "There is no plan PL9999. Plan ids look like PL2040."

    missing = turn(client, sid, "查一下剩余流量")
    assert missing["intent"]["name"] == "data_balance"
    assert missing["slots"]["msisdn"] == LINE, "the line named earlier is carried"
    assert "尾号 0134" in missing["suggestion"]["text"], "in the language of this turn"

    before = len(calls)
    small_talk = turn(client, sid, "what's the weather like today")
    assert small_talk["intent"]["name"] == "oos"
    assert small_talk["tool_calls"] == []
    assert len(calls) == before, "out of scope reaches no back office"


def test_an_order_number_means_nothing_to_this_pack(
    telecom: tuple[httpx.Client, list[str]],
) -> None:
    client, calls = telecom
    sid = client.post("/v1/sessions", json={"user_id": CUSTOMER}).json()["session_id"]
    out = turn(client, sid, "how much data is left, order 202405201234")
    assert out["intent"]["name"] == "data_balance"
    assert "order_id" not in out["slots"] and "msisdn" not in out["slots"]
    assert out["missing_slots"] == ["msisdn"]
    assert out["tool_calls"] == [] and calls == []
    assert out["suggestion"]["text"] == (
        "Which line should I check? Please give me the 10-digit number."
    )


def test_several_lines_in_one_turn_and_a_reference_to_the_second(
    telecom: tuple[httpx.Client, list[str]],
) -> None:
    client, calls = telecom
    sid = client.post("/v1/sessions", json={"user_id": CUSTOMER}).json()["session_id"]
    both = turn(client, sid, "How much data is left on 415 555 0134 and 212-555-0188?")
    assert both["intent"]["name"] == "data_balance"
    assert both["slots"]["msisdn"] == LINE, "the first named is current"
    assert both["mentions"] == {"msisdn": [LINE, "2125550188"]}, "listed: true keeps both"
    # Each line named is looked up; the other customer's is not found, and said so.
    assert calls == [f"balance {CUSTOMER} {LINE}", f"balance {CUSTOMER} 2125550188"]
    assert both["suggestion"]["text"] == (
        "The line ending 0134 has 3.5 GB of data left; it renews on 2026-12-15. "
        "I could not find the line ending 0188 on your account. Could you check the number?"
    )

    second = turn(client, sid, "and the second one?")
    assert second["intent"]["name"] == "data_balance"
    assert second["slots"]["msisdn"] == "2125550188"
    assert calls[-1] == f"balance {CUSTOMER} 2125550188"
    assert second["suggestion"]["situation"] == "not_found", "not this customer's line"
    assert second["suggestion"]["text"] == (
        "I could not find the line ending 0188 on your account. Could you check the number?"
    )

    asked = turn(client, sid, "I want to change my plan")
    assert asked["intent"]["name"] == "plan_change"
    assert asked["missing_slots"] == ["plan_id"] and asked["tool_calls"] == []
    assert asked["suggestion"]["text"] == "Which plan would you like? Plan ids look like PL2040."
