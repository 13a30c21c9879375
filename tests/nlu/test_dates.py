"""Date normalisation tables, Chinese and English, against a fixed 'today' and a clock."""

from __future__ import annotations

from datetime import date

import pytest

from hermes_desk.nlu import SlotExtractor, find_dates
from hermes_desk.packs import load_pack
from hermes_desk.testing import FakeClock

RULES = load_pack("ecommerce").slot_rules

TODAY = date(2026, 5, 28)  # a Thursday

ZH = [
    ("今天", "2026-05-28"),
    ("昨天", "2026-05-27"),
    ("前天", "2026-05-26"),
    ("大前天", "2026-05-25"),
    ("明天", "2026-05-29"),
    ("后天", "2026-05-30"),
    ("大后天", "2026-05-31"),
    ("上周三", "2026-05-20"),
    ("上个星期天", "2026-05-24"),
    ("这周五", "2026-05-29"),
    ("本周一", "2026-05-25"),
    ("下周一", "2026-06-01"),
    ("下礼拜二", "2026-06-02"),
    ("3天前", "2026-05-25"),
    ("三天前", "2026-05-25"),
    ("两周前", "2026-05-14"),
    ("5天后", "2026-06-02"),
    ("5月20日", "2026-05-20"),
    ("5月20号", "2026-05-20"),
    ("五月二十号", "2026-05-20"),
    ("2024年5月20日", "2024-05-20"),
    ("2024-05-20", "2024-05-20"),
    ("2024/5/20", "2024-05-20"),
    ("5.20", "2026-05-20"),
    ("12月28日", "2025-12-28"),
]
EN = [
    ("today", "2026-05-28"),
    ("yesterday", "2026-05-27"),
    ("tomorrow", "2026-05-29"),
    ("last Friday", "2026-05-22"),
    ("last Thursday", "2026-05-21"),
    ("next Monday", "2026-06-01"),
    ("next Thursday", "2026-06-04"),
    ("this Friday", "2026-05-29"),
    ("3 days ago", "2026-05-25"),
    ("a week ago", "2026-05-21"),
    ("in 2 days", "2026-05-30"),
    ("May 20", "2026-05-20"),
    ("May 20th, 2024", "2024-05-20"),
    ("20 May 2024", "2024-05-20"),
    ("2024-05-20", "2024-05-20"),
    ("Dec 28", "2025-12-28"),
]


@pytest.mark.parametrize(("text", "iso"), ZH)
def test_chinese_dates(text: str, iso: str) -> None:
    found = find_dates(f"我{text}下的单", TODAY)
    assert [d.iso for d in found] == [iso]


@pytest.mark.parametrize(("text", "iso"), EN)
def test_english_dates(text: str, iso: str) -> None:
    found = find_dates(f"I ordered it {text}, where is it?", TODAY)
    assert [d.iso for d in found] == [iso]


@pytest.mark.parametrize("text", ["退款5.20元", "it costs $5.20", "订单123456789012", "我没买东西"])
def test_not_dates(text: str) -> None:
    assert find_dates(text, TODAY) == []


def test_invalid_calendar_dates_are_ignored() -> None:
    assert find_dates("2月30日 and 2024-13-01", TODAY) == []


def test_extractor_resolves_against_injected_clock_in_its_timezone() -> None:
    # 2026-05-28 20:26:40 UTC is already 29 May in Shanghai.
    clock = FakeClock(1_780_000_000.0)
    assert SlotExtractor(RULES, clock, "Asia/Shanghai").extract("昨天")["date"] == "2026-05-28"
    assert SlotExtractor(RULES, clock, "UTC").extract("昨天")["date"] == "2026-05-27"
    clock.advance(86_400)
    assert SlotExtractor(RULES, clock, "Asia/Shanghai").extract("yesterday")["date"] == "2026-05-29"


def test_several_dates_are_all_listed() -> None:
    slots = SlotExtractor(RULES, FakeClock(1_780_000_000.0), "UTC").extract("从昨天到明天")
    assert slots["dates"] == ["2026-05-27", "2026-05-29"]


def test_a_run_of_digits_before_a_month_is_no_date() -> None:
    """ "我要退货2024052012345月18日买的" (an order number run into "5月18日") failed the turn: the
    digits were read as a month, too large for a date."""
    today = date(2024, 6, 1)
    assert [d.iso for d in find_dates("2024052012345月18日买的", today)] == []
    assert [d.iso for d in find_dates("202405201234 5月18日买的", today)] == ["2024-05-18"]
