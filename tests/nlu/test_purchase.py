"""Product, purchase date and reason of a return, deterministic and on a fixed day."""

from __future__ import annotations

from datetime import date

import pytest

from hermes_desk.nlu import SlotExtractor
from hermes_desk.nlu.slot_eval import _FixedDay
from hermes_desk.packs import load_pack

RULES = load_pack("ecommerce").slot_rules

TODAY = date(2024, 6, 1)  # a Saturday


@pytest.fixture
def extract() -> SlotExtractor:
    return SlotExtractor(RULES, _FixedDay(TODAY, "Asia/Shanghai"))


@pytest.mark.parametrize(
    ("text", "product", "bought", "reason"),
    [
        ("我昨天买的耳机想退货", "耳机", "2024-05-31", None),
        ("上周买的那件外套太大了，想退", "外套", "2024-05-25", "外套太大了"),
        ("前天收到的杯子漏水，我要退款", "杯子", "2024-05-30", "杯子漏水"),
        ("5月20号买的充电宝坏了", "充电宝", "2024-05-20", "充电宝坏了"),
        ("12月3号买的", None, "2023-12-03", None),  # a purchase is never in the future
        ("因为质量有问题想退货", None, None, "质量有问题"),
        ("想退这双鞋", "鞋", None, None),
        ("I want to return the headphones I bought yesterday", "headphones", "2024-05-31", None),
        ("the jacket I ordered last week is too small", "jacket", "2024-05-25", "too small"),
        ("I bought a kettle three days ago and it leaks", "kettle", "2024-05-29", "it leaks"),
        ("I want a refund because the screen is cracked", None, None, "the screen is cracked"),
        # The size wanted is the reason when nothing is said wrong.
        ("上周买的鞋子想换一双大一码的", "鞋子", "2024-05-25", "大一码"),
        ("想换大一号，鞋子质量有问题", None, None, "鞋子质量有问题"),  # what is wrong comes first
        (
            "I want to exchange my running shoes for a bigger size",
            "running shoes",
            None,
            "bigger size",
        ),
        # A request and the order said before it with spaces, not commas, are not the reason.
        ("我要退货 订单202405181001 质量有问题", None, None, "质量有问题"),
        ("我要换货 尺码不对", None, None, "尺码不对"),
        ("我收到的东西坏了 订单202405181001", None, None, "东西坏了"),  # not "东西坏了 订单"
        # Said as customers say it: "有点小", "don't fit", "shrank" (the default reason before).
        ("订单202405181001的衣服有点小 想退", None, None, "衣服有点小"),
        (
            "I want to return order 202405181001, the shoes don't fit",
            None,
            None,
            "the shoes don't fit",
        ),
        (
            "I'd like a refund, the t-shirts shrank after one wash",
            None,
            None,
            "the t-shirts shrank after one wash",
        ),
        ("的确太小了", None, None, "的确太小了"),  # 的确 is no label's 的
        # How the request is asked for is not the reason ("我不要了直接" before).
        ("那我不要了直接退款吧", None, None, "我不要了"),
        ("坏了，直接给我退款", None, None, "坏了"),
        ("太小了还是换一个吧", None, None, "太小了"),
        # When it came is not what was bought ("时候碎了", product "时候碎" before); the order's
        # label left by its number is not the reason ("订单 坏了" before).
        ("订单202405191888收到的时候碎了", None, None, "收到的时候碎了"),
        ("订单202405181001坏了，我要退货", None, None, "坏了"),
        ("昨天收到的杯子碎了", "杯子", "2024-05-31", "杯子碎了"),
        ("买的花瓶裂了", "花瓶", None, "花瓶裂了"),
        ("买大了", None, None, "买大了"),
        ("颜色不对，想退", None, None, "颜色不对"),
        ("actually also the colour is wrong", None, None, "actually also the colour is wrong"),
        # The order number, taken by its own extractor, leaves no gap in the reason.
        # "是碎的" and "开胶" said nothing wrong: the return went forward as "客户申请退货"; and
        # the number before 的 was left as "的杯子是碎的"
        ("收到的杯子是碎的", "杯子", None, "杯子是碎的"),
        ("202405181001的杯子是碎的", None, None, "杯子是碎的"),
        ("我的鞋子开胶了", None, None, "我的鞋子开胶了"),
        ("的确坏了", None, None, "的确坏了"),
        # a missing piece: the product was "杯子少了一个", and no reason
        ("我收到的杯子少了一个", "杯子", None, "杯子少了一个"),
        # what is asked about it is not the reason ("东西坏了咋整" went to the agent as the reason)
        ("东西坏了咋整", None, None, "东西坏了"),
        ("杯子碎了怎么办啊", None, None, "杯子碎了"),
        # the order's label left by its number, in English ("I got the wrong item in order")
        ("I got the wrong item in order 202405181001", None, None, "I got the wrong item"),
        # a word of the product's own is no stop ("多功" before) and no measure word ("装", "灯")
        ("我买的多功能锅坏了", "多功能锅", None, "多功能锅坏了"),
        ("买的套装少了一件", "套装", None, "套装少了一件"),
        ("买的台灯不亮", "台灯", None, "台灯不亮"),
        ("买的双肩包开线了", "双肩包", None, "双肩包开线了"),
        ("买的个杯子碎了", "杯子", None, "杯子碎了"),
        (
            "my air fryer 202405160123 stopped working after a week",
            None,
            None,
            "my air fryer stopped working after a week",
        ),
    ],
)
def test_purchase_slots(
    extract: SlotExtractor, text: str, product: str | None, bought: str | None, reason: str | None
) -> None:
    slots = extract.extract(text)
    assert slots.get("product") == product
    assert slots.get("purchase_date") == bought
    assert slots.get("reason") == reason


@pytest.mark.parametrize(
    "text", ["我要退货退款，订单202405241357", "我要投诉快递员", "这个东西好吃吗", "我想退货"]
)
def test_no_purchase_slots_where_none_are_said(extract: SlotExtractor, text: str) -> None:
    slots = extract.extract(text)
    assert not {"product", "purchase_date", "reason"} & set(slots), slots


def test_a_date_that_is_not_the_purchase_is_only_a_date(extract: SlotExtractor) -> None:
    slots = extract.extract("明天能送到吗")
    assert slots["date"] == "2024-06-02" and "purchase_date" not in slots


@pytest.mark.parametrize(
    "text",
    ["退款吧", "退款什么时候到账", "顺便问下订单202405170666退款退到哪了", "能只退一件吗",
     "我就是想退个款", "那我不要了，退款吧", "我要换一个新的", "换一个大的吧"],
)  # fmt: skip
def test_a_refund_or_a_particle_is_no_product(extract: SlotExtractor, text: str) -> None:
    """退款 is a refund, not 退 + the measure word 款 ("退款吧" named the product 吧); what is
    said of the one wanted instead is none either ("换一个新的" named the product 新)."""
    assert "product" not in extract.extract(text)
