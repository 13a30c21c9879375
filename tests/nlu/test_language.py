"""The language of a turn: the script that carries its words, ids and codes set aside."""

from __future__ import annotations

import pytest

from hermes_desk.nlu.language import detect_language, script_weights


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我的订单202405201234到哪了", "zh"),
        ("Where is my order 202405201234?", "en"),
        ("refund 要多久到账", "zh"),
        ("iPhone 到哪了", "zh"),
        ("DHL 说已经送达了", "zh"),
        ("I ordered the 小米 earbuds and they never came", "en"),
        ("It has been 10 days already and I am really upset", "en"),
        ("验证码X7K2", "zh"),
        ("my email is li.na@example.com, 发邮件给我", "zh"),
        ("ok了，谢谢", "zh"),
        # a Chinese street address in an English sentence is a value ("…new address is 上海…"
        # was answered in Chinese); Chinese around an address is Chinese
        ("ok do it, new address is 上海市浦东新区世纪大道100号", "en"),
        ("please send it to 北京市朝阳区建国路88号 instead", "en"),
        ("改到北京市朝阳区建国路88号", "zh"),
        ("我的地址是北京市朝阳区建国路88号 ok", "zh"),
        ("thanks, that's all", "en"),
    ],
)
def test_the_script_that_carries_the_words_decides(text: str, expected: str) -> None:
    assert detect_language(text) == expected


@pytest.mark.parametrize("text", ["202405201234", "123456", "ok", "OK", "👍", "X7K2", "  "])
def test_a_turn_without_language_keeps_the_conversations(text: str) -> None:
    assert detect_language(text, previous="en") == "en"
    assert detect_language(text, previous="zh") == "zh"
    assert detect_language(text, default="en") == "en"


def test_ids_links_and_addresses_carry_no_language() -> None:
    chinese, english = script_weights("订单 202405201234 https://shop.example.com/a/b x@y.com")
    assert english == 0.0 and chinese > 0


def test_a_tie_keeps_the_previous_language() -> None:
    # two Han characters weigh 1.33 words; "my order" two words: English by a little
    assert detect_language("my order 没到", previous="zh") == "en"
    assert detect_language("order 没到了", previous="en") == "zh"
