from hermes_desk.compliance import ComplianceChecker
from hermes_desk.packs import load_pack


def checker() -> ComplianceChecker:
    return ComplianceChecker(load_pack("ecommerce").compliance)


def test_clean_reply_passes_unchanged() -> None:
    outcome = checker().check("您好，订单 202405201234 预计 2026-12-02 送达。")
    assert outcome.passed
    assert outcome.text == "您好，订单 202405201234 预计 2026-12-02 送达。"
    assert outcome.violations == ()


def test_forbidden_promise_blocks_the_whole_reply() -> None:
    pack = load_pack("ecommerce")
    outcome = checker().check("放心，我们保证今天到！")
    assert not outcome.passed
    assert outcome.violations == ("no_absolute_promises",)
    assert outcome.text == pack.compliance.fallback_reply


def test_phone_numbers_are_masked_and_rest_kept() -> None:
    outcome = checker().check("已向 13800138000 发送短信。")
    assert not outcome.passed
    assert "13800138000" not in outcome.text
    assert outcome.text.endswith("8000 发送短信。")
    assert outcome.violations == ("no_full_phone",)


def test_a_waybill_holding_phone_like_digits_is_kept_whole() -> None:
    """ "运单号 772019961203378" holds 19961203378, eleven digits that read as a phone number: a
    waybill the customer tracks the parcel by was shown as 7720****3378-like noise."""
    outcome = checker().check("包裹目前运输中（申通快递，运单号 772019961203378）。")
    assert outcome.passed and "772019961203378" in outcome.text, outcome
    both = checker().check("运单号 772019961203378，联系电话 13800138000。")
    assert "772019961203378" in both.text and "13800138000" not in both.text
    assert both.violations == ("no_full_phone",)
    # a phone number with its country code is still one
    for written in ("+8613800138000", "008613800138000", "+86 13800138000"):
        coded = checker().check(f"联系电话 {written}。")
        assert "13800138000" not in coded.text and "8613800" not in coded.text, coded
        assert coded.violations == ("no_full_phone",)


def test_english_forbidden_phrases_match_case_insensitively() -> None:
    outcome = checker().check("This is GUARANTEED to arrive today.")
    assert not outcome.passed and "no_absolute_promises" in outcome.violations
