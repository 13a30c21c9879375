"""Masking personal numbers (spec D3): what is found, how it is masked, per tenant."""

from __future__ import annotations

import pytest

from hermes_desk.config import PrivacySettings
from hermes_desk.events import Event, MemorySink
from hermes_desk.masking import Masker, Masking, MaskingSink, is_masked


@pytest.fixture
def mask() -> Masker:
    return Masking().for_tenant("any")


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("手机号13912345678", "手机号139****5678"),
        ("call +86 139-1234-5678 please", "call 139****5678 please"),
        ("座机010-12345678", "座机010-******78"),
        ("身份证110101199003071234", "身份证**************1234"),
        ("身份证11010119900307123X。", "身份证**************123X。"),
        ("卡号6222 0212 3456 7890 123", "卡号***************0123"),
        ("card 4111111111111111", "card ************1111"),
        ("邮箱zhang.san@example.com，", "邮箱z***@example.com，"),
        ("验证码是 482913", "验证码是 ******"),
        ("the code is 4821", "the code is ****"),
        ("新密码设成abc12345", "新密码设成******"),
        ("新密码我想设成Hx7vq2024!", "新密码我想设成******"),
        ("my password is Hunter22!", "my password is ******"),
        ("password: sunshine", "password: ******"),
        ("手机号１３９１２３４５６７８", "手机号139****5678"),  # full-width digits
        ("13800138000 或 １３９１２３４５６７８", "138****8000 或 139****5678"),
    ],
)
def test_each_kind_is_masked_keeping_what_an_agent_reads_back(
    mask: Masker, said: str, shown: str
) -> None:
    assert mask.text(said) == shown


@pytest.mark.parametrize(
    "said",
    [
        "订单202405201234到哪了",  # a 12-digit order id is no card
        "退款¥35.5，2026-12-01 到账",
        "运单 SF1234567890123",
        "I paid 1500 dollars",
        # a password's name before words that are no password
        "password reset link",
        "the password is wrong",
        "the new password isn't accepted",
        "Your password is reset; a temporary password has been sent by SMS.",
        "密码 reset 怎么弄",
        "设置新密码（6–20 位，建议包含字母和数字）",
        "新密码设置不了",
    ],
)
def test_business_numbers_are_left_alone(mask: Masker, said: str) -> None:
    assert mask.text(said) == said


def test_structured_data_is_masked_by_pattern_and_by_key(mask: Masker) -> None:
    data = {
        "phone": "13912345678",
        "sms_code": "482913",
        "order_id": "202405201234",
        "registered": True,
        "phone_tail": "5678",
        "error": {"code": "timeout"},
        "notes": [{"text": "my mail is a.b@example.cn"}],
        "prompt_tokens": 12,
    }
    assert mask.data(data) == {
        "phone": "139****5678",
        "sms_code": "****13",
        "order_id": "202405201234",
        "registered": True,
        "phone_tail": "5678",
        "error": {"code": "timeout"},
        "notes": [{"text": "my mail is a***@example.cn"}],
        "prompt_tokens": 12,
    }
    assert mask.data(mask.data(data)) == mask.data(data), "masking twice changes nothing"
    assert is_masked("139****5678") and not is_masked("202405201234")


def test_prose_arguments_are_masked_but_a_writes_own_identifiers_stay(mask: Masker) -> None:
    arguments = {"phone": "13912345678", "description": "客户说他的电话是13912345678"}
    assert mask.prose(arguments) == {
        "phone": "13912345678",
        "description": "客户说他的电话是139****5678",
    }


def test_masking_is_configured_per_tenant() -> None:
    masking = Masking(
        PrivacySettings(
            tenants={"lab": {"mask": False}, "mail-only": {"kinds": ["email"]}},
        )
    )
    text = "13912345678 / a.b@example.com"
    assert masking.for_tenant("acme").text(text) == "139****5678 / a***@example.com"
    assert masking.for_tenant("lab").text(text) == text
    assert masking.for_tenant("mail-only").text(text) == "13912345678 / a***@example.com"
    off = Masking(PrivacySettings(mask=False))
    assert off.for_tenant("acme").text(text) == text and not off.for_tenant("x").enabled


def test_the_masking_sink_masks_every_event_before_the_sinks_behind_it() -> None:
    recent = MemorySink()
    sink = MaskingSink(recent, Masking(PrivacySettings(tenants={"lab": {"mask": False}})))
    query = {"query": "my card is 4111 1111 1111 1111"}
    sink.emit(Event("tool.call", "ses_1", 1.0, {"tenant": "acme", "arguments": query}))
    sink.emit(Event("tool.call", "ses_2", 1.0, {"tenant": "lab", "arguments": query}))
    first, second = recent.events()
    assert first.data["arguments"] == {"query": "my card is ************1111"}
    assert second.data["arguments"] == query, "that tenant chose to keep numbers"


@pytest.mark.parametrize(
    "text",
    [
        "验证码已发送到尾号 8000 的手机，请告诉我您收到的 6 位验证码。",
        "The code was sent to the phone ending in 8000.",
    ],
)
def test_a_phone_tail_after_the_word_code_is_no_code(text: str) -> None:
    assert Masker().text(text) == text


def test_a_code_after_its_name_is_still_masked() -> None:
    assert "482193" not in Masker().text("我的验证码是 482193")
