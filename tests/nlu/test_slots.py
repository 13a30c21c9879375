from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_desk.nlu import (
    EXTRACTORS,
    SlotExtractor,
    extract_durations,
    load_examples,
    rule_for,
    slot_rules,
)
from hermes_desk.nlu.slots import extract_amounts
from hermes_desk.packs import load_pack
from hermes_desk.testing import FakeClock

RULES = load_pack("ecommerce").slot_rules


def ecommerce() -> SlotExtractor:
    return SlotExtractor(RULES, FakeClock(), "Asia/Shanghai")


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("订单123456789012还没到", ["123456789012"]),
        ("order 123456789012 and 210987654321", ["123456789012", "210987654321"]),
        ("１２３４５６７８９０１２", ["123456789012"]),
        ("订单号 2024-0520-1234", ["202405201234"]),
        ("1234567890123 has 13 digits", []),
        ("12345678901 has 11", []),
    ],
)
def test_order_ids_come_from_the_packs_pattern(text: str, ids: list[str]) -> None:
    assert ecommerce().mentions(text)["order_id"] == ids


@pytest.mark.parametrize(
    ("text", "phones"),
    [
        ("手机13800138000", ["13800138000"]),
        ("+86 138-0013-8000", ["13800138000"]),
        ("my phone is 139 1234 5678", ["13912345678"]),
        ("8613800138000", ["13800138000"]),
        ("12800138000", []),
        ("订单123456789012", []),
    ],
)
def test_phones_come_from_the_packs_phone_extractor(text: str, phones: list[str]) -> None:
    assert ecommerce().mentions(text)["phone"] == phones


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("退款35元", 35.0),
        ("¥1,299.50", 1299.5),
        ("三百五十块", 350.0),
        ("两千块钱", 2000.0),
        ("refund $20", 20.0),
        ("it was 15 dollars", 15.0),
    ],
)
def test_amounts(text: str, amount: float) -> None:
    assert extract_amounts(text) == [amount]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("物流超过7天了", {"days": 7}),
        ("已经两周没更新", {"days": 14}),
        ("it has been 10 days", {"days": 10}),
        ("waited 48 hours", {"hours": 48}),
        ("3天前下的单", {}),
        ("ordered 3 days ago", {}),
    ],
)
def test_durations(text: str, expected: dict[str, float]) -> None:
    assert extract_durations(text) == expected


def test_extract_keeps_order_id_phone_and_amount_apart() -> None:
    slots = ecommerce().extract("订单123456789012退款¥35，手机+86 13800138000，上周三买的")
    assert slots["order_id"] == "123456789012"
    assert slots["phone"] == "13800138000"
    assert slots["amount"] == 35.0
    assert slots["date"] == "2026-05-20"
    assert "dates" not in slots


def test_extract_nothing() -> None:
    assert ecommerce().extract("你好") == {}


def test_a_code_the_pack_marks_none_is_not_read_from_any_turn() -> None:
    assert RULES["sms_code"].extractor == "none"
    assert "sms_code" not in ecommerce().extract("验证码是 123456")


def test_the_schema_chooses_the_extractor() -> None:
    assert rule_for("x", {"type": "string", "format": "date"}).extractor == "date"
    assert rule_for("x", {"type": "string", "pattern": "^A[0-9]{3}$"}).extractor == "pattern"
    assert rule_for("x", {"type": "string"}).extractor == "none"
    named = rule_for("x", {"type": "string", "format": "date", "extractor": "purchase_date"})
    assert named.extractor == "purchase_date", "a named extractor wins over the format"
    assert {
        "pattern",
        "phone",
        "amount",
        "date",
        "purchase_date",
        "product",
        "reason",
        "none",
    } <= set(EXTRACTORS)


def test_another_packs_slots_are_extracted_by_their_own_schemas() -> None:
    rules = slot_rules(
        {
            "plan_id": {"type": "string", "pattern": "^PL[0-9]{4}$", "extractor": {
                "name": "pattern", "ignore_case": True}},
            "msisdn": {"type": "string", "pattern": "^[2-9][0-9]{9}$", "listed": True,
                       "extractor": {"name": "phone", "country_code": "1", "groups": [3, 3, 4]}},
            "start": {"type": "string", "format": "date"},
        }
    )  # fmt: skip
    extractor = SlotExtractor(rules, FakeClock(), "UTC")
    found = extractor.extract("Move +1 415-555-0134 to plan pl2040 from 2026-06-01, not PL20401")
    assert found == {"plan_id": "PL2040", "msisdn": "4155550134", "start": "2026-06-01"}
    assert extractor.mentions("415 555 0134 or 212-555-0188?") == {
        "msisdn": ["4155550134", "2125550188"]
    }
    assert extractor.extract("订单123456789012") == {}, "no e-commerce id in this pack"
    assert extractor.extract("planPL2040") == {}, "a value does not run on from a word"


@pytest.mark.parametrize(
    ("schema", "field"),
    [
        ({"extractor": "postcode"}, "extractor"),
        ({"extractor": {"name": "phone", "groups": [3, 4, 4], "region": "x"}}, "extractor"),
        ({"extractor": {"name": "phone"}}, "extractor.groups"),
        ({"extractor": {"name": "phone", "groups": [3, "4"]}}, "extractor.groups"),
        ({"extractor": "pattern"}, "pattern"),
        ({"pattern": "([0-9"}, "pattern"),
        ({"pattern": "^[0-9]{4}$", "listed": "yes"}, "listed"),
        ({"pattern": "^[0-9]{4}$", "tail": 0}, "tail"),
    ],
)
def test_a_wrong_extraction_field_is_named(schema: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError) as info:
        rule_for("slot", {"type": "string", **schema})
    assert str(info.value).split(": ", 1)[0] == field


def test_read_gives_extract_and_mentions_together() -> None:
    pack = Path(__file__).resolve().parents[2] / "src" / "hermes_desk" / "packs" / "ecommerce"
    texts = [e.text for e in load_examples(pack / "nlu.jsonl")]
    texts += ["订单 2024-0520-1234 和 ２０２４０５２０５６７８", "电话１３８ ００１３ ８０００"]
    texts += ["昨天下单的", "上周五买的，退 99.5 元"]
    extractor = ecommerce()
    for text in texts:
        assert extractor.read(text) == (extractor.extract(text), extractor.mentions(text))
