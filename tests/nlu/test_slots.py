from __future__ import annotations

import pytest

from hermes_desk.nlu import SlotExtractor, extract_durations
from hermes_desk.nlu.slots import extract_amounts, extract_order_ids, extract_phones
from hermes_desk.testing import FakeClock


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("订单123456789012还没到", ["123456789012"]),
        ("order 123456789012 and 210987654321", ["123456789012", "210987654321"]),
        ("１２３４５６７８９０１２", ["123456789012"]),
        ("1234567890123 has 13 digits", []),
        ("12345678901 has 11", []),
    ],
)
def test_order_ids(text: str, ids: list[str]) -> None:
    assert extract_order_ids(text) == ids


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
def test_phones(text: str, phones: list[str]) -> None:
    assert extract_phones(text) == phones


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
    slots = SlotExtractor(FakeClock(), "Asia/Shanghai").extract(
        "订单123456789012退款¥35，手机+86 13800138000，上周三买的"
    )
    assert slots["order_id"] == "123456789012"
    assert slots["phone"] == "13800138000"
    assert slots["amount"] == 35.0
    assert slots["date"] == "2026-05-20"
    assert "dates" not in slots


def test_extract_nothing() -> None:
    assert SlotExtractor(FakeClock()).extract("你好") == {}
