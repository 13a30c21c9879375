from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hermes_desk.errors import PackError
from hermes_desk.memory import KeyFactFilter, evaluate_filter
from hermes_desk.memory.keyfacts import parse_number


@pytest.mark.parametrize(
    ("text", "number"),
    [("7", 7), ("7.5", 7.5), ("七", 7), ("十五", 15), ("二十三", 23), ("两百", 200),
     ("seven", 7), ("半", 0.5), ("abc", None), ("", None)],
)  # fmt: skip
def test_parse_number(text: str, number: float | None) -> None:
    assert parse_number(text) == number


@pytest.mark.parametrize(
    ("text", "signals"),
    [
        ("昨天下单的，到现在还没发货，我很生气", {"time", "negation", "emotion"}),
        ("我已经打了3次电话了", {"quantity"}),
        ("不好意思，我想问一下发票", set()),
        ("I ordered 3 items yesterday and none arrived", {"time", "quantity", "negation"}),
        ("This is ridiculous!!", {"emotion"}),
        ("Hello, how are you", set()),
    ],
)
def test_signals(keyfacts: KeyFactFilter, text: str, signals: set[str]) -> None:
    assert set(keyfacts.signals_in(text)) == signals


@pytest.mark.parametrize(
    ("text", "intent", "key", "value", "key_fact"),
    [
        ("我的快递已经超过7天了还没到", "logistics", "logistics_delay_days", 7, True),
        ("物流超过七天还没有更新，太失望了", "logistics", "logistics_delay_days", 7, True),
        ("都两周了还没收到货", "logistics", "logistics_delay_days", 14, True),
        ("My parcel is 7 days late and nobody told me", "logistics",
         "logistics_delay_days", 7, True),
        ("I have been waiting for 10 days and it still hasn't arrived", "logistics",
         "logistics_delay_days", 10, True),
        ("不要给我打电话", "oos", "contact_preference_no_calls", True, True),
        ("以后别再给我打电话了", None, "contact_preference_no_calls", True, True),
        ("Please don't call me", None, "contact_preference_no_calls", True, True),
        ("I don't want phone calls", None, "contact_preference_no_calls", True, True),
        ("我已经催了三次了，还是没人处理", "complaint", "repeat_contact_count", 3, True),
    ],
)  # fmt: skip
def test_extract_normalised_keys(
    keyfacts: KeyFactFilter, text: str, intent: str | None, key: str, value: object,
    key_fact: bool,
) -> None:  # fmt: skip
    found = {c.key: c for c in keyfacts.extract(text, intent, {})}
    assert key in found, found
    assert found[key].value == value
    assert found[key].is_key_fact is key_fact


def test_a_single_signal_is_not_a_key_fact(keyfacts: KeyFactFilter) -> None:
    [candidate] = keyfacts.extract("已经等了7天", "logistics", {})
    assert candidate.key == "logistics_delay_days" and candidate.is_key_fact is False


def test_intent_scoped_rules_and_slot_values(keyfacts: KeyFactFilter) -> None:
    assert keyfacts.extract("超过7天了还没到", "payment_methods", {}) == []
    text = "订单 123456789012 已经三天没人处理，我要投诉！！"
    found = {
        c.key: c.value for c in keyfacts.extract(text, "complaint", {"order_id": "123456789012"})
    }
    assert found["complaint_order_id"] == "123456789012"


def test_labels_and_long_term_keys(keyfacts: KeyFactFilter) -> None:
    assert keyfacts.describe("logistics_delay_days", 7, "zh") == "物流已超过 7 天"
    assert keyfacts.describe("logistics_delay_days", 7, "en") == "Parcel 7 days late"
    assert keyfacts.describe("unknown_key", [1], "en") == "unknown_key = [1]"
    assert keyfacts.is_long_term("contact_preference_no_calls")
    assert not keyfacts.is_long_term("logistics_delay_days")


def test_bad_pack_files_name_the_problem(tmp_path: Path) -> None:
    bad = tmp_path / "keyfacts.yaml"
    bad.write_text("signals: {time: {zh: {patterns: ['(']}}}\n", encoding="utf-8")
    with pytest.raises(PackError, match=r"keyfacts.yaml \[time.zh\]"):
        KeyFactFilter.from_file(bad)
    bad.write_text("signals: {}\nrules: [{key: k, value: 1}]\n", encoding="utf-8")
    with pytest.raises(PackError, match="field 'patterns'"):
        KeyFactFilter.from_file(bad)
    with pytest.raises(PackError):
        KeyFactFilter.from_file(tmp_path / "missing.yaml")


def test_evaluate_filter_counts(keyfacts: KeyFactFilter) -> None:
    rows = [
        {"text": "昨天买的东西到现在还没到", "key_fact": True, "lang": "zh"},
        {"text": "你好", "key_fact": False, "lang": "zh"},
        {"text": "hello there", "key_fact": True, "lang": "en"},
    ]
    report = evaluate_filter(keyfacts, rows)
    assert report["all"]["tp"] == 1 and report["all"]["tn"] == 1 and report["all"]["fn"] == 1
    assert report["all"]["precision"] == 1.0 and report["all"]["recall"] == 0.5
    assert report["en"]["n"] == 1
    assert [e["text"] for e in report["errors"]] == ["hello there"]


def test_filter_quality_on_the_packs_labelled_set(keyfacts: KeyFactFilter) -> None:
    """A regression floor, below the figures measured when the set first arrived (untuned)."""
    import json

    data = Path(__file__).resolve().parents[2] / "src/hermes_desk/packs/ecommerce"
    source = data / "keyfacts_eval.jsonl"
    if not source.exists():
        pytest.skip("the pack has no keyfacts_eval.jsonl")
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line]
    assert len(rows) >= 150 and {r["lang"] for r in rows} == {"zh", "en"}
    report = evaluate_filter(keyfacts, rows)
    assert report["all"]["precision"] >= 0.85
    assert report["all"]["recall"] >= 0.72  # 0.77 measured after the English lexicon update
    assert report["en"]["precision"] >= 0.85 and report["en"]["recall"] >= 0.65


def test_a_word_yaml_reads_as_a_boolean_is_refused() -> None:
    import yaml

    from hermes_desk.errors import PackError

    data = yaml.safe_load("signals: {negation: {en: {words: [not, no, never]}}}")
    with pytest.raises(PackError, match="quote"):
        KeyFactFilter.from_dict(data)
    quoted = yaml.safe_load('signals: {negation: {en: {words: [not, "no", never]}}}')
    assert KeyFactFilter.from_dict(quoted).signals_in("no refund") == ("negation",)


def test_contact_preferences_keep_their_channel_and_time() -> None:
    from hermes_desk.memory.keyfacts import KeyFactFilter

    flt = KeyFactFilter.bundled()

    def kept(text: str, intent: str = "oos") -> dict[str, object]:
        return {c.key: c.value for c in flt.extract(text, intent) if c.is_key_fact}

    assert kept("以后不要给我打电话，发短信就行") == {
        "contact_preference_no_calls": True,
        "contact_preference_channel": "sms",
    }
    assert kept("有事发邮件就可以") == {"contact_preference_channel": "email"}
    assert kept("SMS only please") == {"contact_preference_channel": "sms"}
    assert kept("Please don't call me, email only")["contact_preference_channel"] == "email"
    assert kept("call me after 6pm please") == {"contact_preference_time": "after 6pm"}
    assert kept("请晚上8点以后再联系我") == {"contact_preference_time": "晚上8点以后"}
    # a preference said as one ("and I prefer to be contacted by email" was answered with the
    # service-hours article, nothing noted); not one the customer says they do not want
    assert kept("and I prefer to be contacted by email") == {"contact_preference_channel": "email"}
    assert kept("I prefer text messages") == {"contact_preference_channel": "sms"}
    assert kept("我更希望用短信联系") == {"contact_preference_channel": "sms"}
    assert kept("我不希望用邮件联系") == {}
    assert kept("I'd prefer not to be contacted by email") == {}
    # a policy question names a channel but states no preference
    assert kept("can I get the invoice by email?", "kb_question") == {}


def test_durations_and_repeated_contacts_in_english_and_chinese() -> None:
    from hermes_desk.memory.keyfacts import KeyFactFilter

    flt = KeyFactFilter.bundled()

    def kept(text: str, intent: str) -> dict[str, object]:
        return {c.key: c.value for c in flt.extract(text, intent) if c.is_key_fact}

    assert kept("It has been 10 days already and I am really upset", "logistics") == {
        "logistics_delay_days": 10
    }
    assert kept("It's been two weeks and nothing", "logistics") == {"logistics_delay_days": 14}
    assert kept("客服三次都没解决", "complaint")["repeat_contact_count"] == 3
    assert (
        kept("This is the third time I contact you and nothing changed", "complaint")[
            "repeat_contact_count"
        ]
        == 3
    )
    assert kept("I bought it a week ago", "logistics") == {}


def test_notes_read_in_the_language_asked_with_value_labels() -> None:
    from hermes_desk.memory.keyfacts import KeyFactFilter

    flt = KeyFactFilter.bundled()
    assert flt.describe("contact_preference_channel", "sms", "zh") == "希望通过短信联系"
    assert flt.describe("contact_preference_channel", "sms", "en") == (
        "Prefers contact by text message"
    )
    assert flt.describe("contact_preference_channel", "fax", "en") == "Prefers contact by fax"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("多扣了我50元", {"disputed_charge_amount": 50}),
        ("多收了我15元运费", {"disputed_charge_amount": 15}),
        ("you charged me $30 twice", {"disputed_charge_amount": 30, "duplicate_charge": True}),
        ("I was overcharged by $12.50", {"disputed_charge_amount": 12.5}),
        ("被扣了两次钱", {"duplicate_charge": True}),
        ("I was charged twice for the same order", {"duplicate_charge": True}),
        ("退款少了20块", {"disputed_refund_shortfall": 20}),
        ("少退了五十块钱", {"disputed_refund_shortfall": 50}),
        ("我付了100块，只退了60", {"disputed_refund_shortfall": 40}),
        ("You only refunded 15 dollars but I paid 40", {"disputed_refund_shortfall": 25}),
        ("我不接受这个方案", {"refuses_proposal": True}),
        ("I don't accept your offer", {"refuses_proposal": True}),
        ("I refuse the replacement", {"refuses_replacement": True}),
        ("不要换货", {"refuses_replacement": True}),
        ("补发我不接受", {"refuses_replacement": True}),
        ("I won't take store credit", {"refuses_voucher": True}),
        ("代金券我不要", {"refuses_voucher": True}),
        ("不同意维修", {"refuses_repair": True}),
    ],
)
def test_amounts_in_dispute_and_refusals_are_kept_normalised(
    keyfacts: KeyFactFilter, text: str, expected: dict[str, object]
) -> None:
    kept = {c.key: c.value for c in keyfacts.extract(text, "complaint") if c.is_key_fact}
    assert kept == expected


@pytest.mark.parametrize(
    "text",
    [
        "我付了50，只退了60",  # no shortfall: nothing read
        "I paid $30 with my card",
        "Is the refund the full $25?",
        "Okay, I accept the replacement",
        "Can I get a replacement instead of a refund?",
        "好的，我接受这个方案",
        "可以换货吗",
        "优惠券怎么用",
        "不要紧，我再等等",
        "运费多少钱",
    ],
)
def test_look_alikes_of_disputes_and_refusals_read_nothing(
    keyfacts: KeyFactFilter, text: str
) -> None:
    assert keyfacts.extract(text, "complaint") == []


def test_dispute_and_refusal_notes_read_in_both_languages(keyfacts: KeyFactFilter) -> None:
    assert keyfacts.describe("disputed_charge_amount", 50, "zh") == "称多扣了 50 元"
    assert keyfacts.describe("disputed_refund_shortfall", 20, "en") == (
        "Says the refund was 20 short"
    )
    assert keyfacts.describe("refuses_replacement", True, "en") == "Does not accept a replacement"
    assert keyfacts.describe_open_contact("refuses_proposal", True, "zh") == (
        "（另一进行中的会话所述，未核实）不接受目前的处理方案"
    )


def test_bad_minus_and_open_contact_texts_name_the_problem() -> None:
    base = {"signals": {}}
    as_text = {"key": "k", "patterns": ["(a)(b)"], "value": {"from": "group", "minus": 2}}
    with pytest.raises(PackError, match="minus needs type int or amount"):
        KeyFactFilter.from_dict({**base, "rules": [as_text]})
    lacking = {
        "key": "k",
        "patterns": ["(a)(b)", "(a)"],
        "value": {"from": "group", "type": "amount", "group": 1, "minus": 2},
    }
    with pytest.raises(PackError, match="a pattern lacks"):
        KeyFactFilter.from_dict({**base, "rules": [lacking]})
    with pytest.raises(PackError, match="open_contact_note"):
        KeyFactFilter.from_dict({**base, "open_contact_note": {"en": "open contact"}})
    default = KeyFactFilter.from_dict(base)
    assert default.describe_open_contact("k", 1, "en") == (
        "(said in another open contact, not verified) k = 1"
    )


def test_a_rules_joined_pattern_matches_exactly_when_one_of_its_patterns_does() -> None:
    import json
    import re

    from hermes_desk.memory.keyfacts import _any_of

    bundled = KeyFactFilter.bundled()
    pack = Path(__file__).resolve().parents[2] / "src/hermes_desk/packs/ecommerce"
    texts = [
        json.loads(line)["text"]
        for name in ("keyfacts_eval.jsonl", "keyfacts_heldout.jsonl", "keyfacts_heldout2.jsonl")
        for line in (pack / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    joined = [rule for rule in bundled.rules if rule._any is not None]
    assert joined, "the bundled rules have several patterns each"
    for rule in joined:
        assert rule._any is not None
        for text in [*texts, "", "DON'T CALL ME", "别给我打电话了"]:
            alone = any(p.search(text) for p in rule.patterns)
            assert (rule._any.search(text) is not None) == alone, (rule.key, text)
    # Patterns that would change meaning once joined are left apart.
    assert _any_of([re.compile(r"(a)\1", re.I), re.compile("b", re.I)]) is None
    assert _any_of([re.compile("(?x) a", re.I), re.compile("b", re.I)]) is None
    assert _any_of([re.compile("a", re.I), re.compile("b")]) is None
    assert _any_of([re.compile("(?i)a", re.I), re.compile("b", re.I)]) is not None


def test_the_ignorecase_folding_table_is_pythons() -> None:
    """Every character outside ASCII and the CJK block that re's IGNORECASE folds with one of
    them is an ASCII letter's, and listed for it."""
    from string import ascii_letters

    from hermes_desk.memory.keyfacts import _FOLDED_WITH

    near = re.compile("[\x00-\x7f\u3400-\u9fff]", re.IGNORECASE)
    outside = [
        chr(code)
        for code in range(0x110000)
        if not (code < 0x80 or 0x3400 <= code <= 0x9FFF) and near.fullmatch(chr(code))
    ]
    assert outside
    for ch in outside:
        letters = {c.lower() for c in ascii_letters if re.fullmatch(c, ch, re.IGNORECASE)}
        assert letters, ch
        assert all(ch in _FOLDED_WITH[letter] for letter in letters), ch
    assert sorted(ch for chars in _FOLDED_WITH.values() for ch in chars) == sorted(outside)


@pytest.mark.parametrize(
    ("patterns", "needed"),
    [
        ([r"退款\s*(\d+)"], {"退"}),
        ([r"(?:不要|别)\s*打电话", r"do\s+not\s+call"], {"打", "d", "D"}),
        ([r"(?:不要|别)?\s*打电话"], {"打"}),
        ([r"(?:不要|别)\s*(?:打|来)?电话"], {"电"}),
        ([r"(?:请勿|不要)\s*发"], {"发"}),
        ([r"(?:请勿|不要)\s*(?:短信|电话)"], {"请", "不"}),
        ([r"[0-9]+\s*天"], {"天"}),
        ([r"a?b*(?:c|d)"], {"c", "C", "d", "D"}),
        ([r"(?-i:Kb)"], {"K"}),
        ([r"k"], {"k", "K", "\u212a"}),
        ([r"\w+\s*元"], {"元"}),
        ([r"[^退]款"], {"款"}),
        ([r"(?<=退)款?"], None),
        ([r"退款", r"x*"], None),
    ],
)
def test_a_rules_needed_characters(patterns: list[str], needed: set[str] | None) -> None:
    from hermes_desk.memory.keyfacts import _needed_chars

    found = _needed_chars([re.compile(p, re.IGNORECASE) for p in patterns])
    assert found == (frozenset(needed) if needed is not None else None)


def test_a_text_without_a_rules_needed_characters_fires_none_of_its_patterns() -> None:
    pack = Path(__file__).resolve().parents[2] / "src" / "hermes_desk" / "packs" / "ecommerce"
    keyfacts = KeyFactFilter.from_pack(pack)
    texts: list[str] = []
    for path in sorted(pack.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                texts += [t["text"] for t in row.get("turns", []) if isinstance(t, dict)]
                texts += [row["text"]] if isinstance(row.get("text"), str) else []
    assert len(texts) > 5000
    ruled_out = 0
    for rule in keyfacts.rules:
        needs = rule._needs
        if needs is None:
            continue
        for text in texts:
            if needs.isdisjoint(text):
                ruled_out += 1
                assert not any(p.search(text) for p in rule.patterns), (rule.key, text)
    assert ruled_out > len(texts)
