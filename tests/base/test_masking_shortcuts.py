"""The masker's shortcuts (text that cannot hold a number, a rule whose hint is absent, the JSON
types by exact type) give the same answers as applying every pattern to everything."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

import pytest

from hermes_desk.config import MASK_KINDS
from hermes_desk.masking import (
    _FULL_WIDTH,
    _MAYBE_PERSONAL,
    _RULES,
    Masker,
    _sensitive_key,
    is_masked,
)

_FULL = str.maketrans("0123456789@-", "０１２３４５６７８９＠－")
_ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
_WORDS = [
    "我的订单", "现在什么状态？", "手机号", "身份证", "卡号", "邮箱", "the order", "call me at",
    "验证码是 ", "校验码：", "动态密码", "the code is ", "SMS  Code ", "OTP", "pİn ", "pın ",
    "已发送到尾号 ", "ending in ", "decode", "intent", " ", "，", "\n", '"', ":", "***",
]  # fmt: skip


def _number(rng: random.Random) -> str:
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 20)))
    shape = rng.random()
    if shape < 0.3:
        digits = "1" + rng.choice("3456789") + digits[:9].ljust(9, "0")
    if shape < 0.5:
        sep = rng.choice(["", " ", "-", "  ", "－", "\t"])
        digits = sep.join(digits[i : i + 4] for i in range(0, len(digits), 4))
    prefix = rng.choice(["", "", "+86 ", "0086", "010-", "0", "x.y@", "a_b@mail.", "@"])
    number = prefix + digits + rng.choice(["", "", "X", ".com", ".cn"])
    script = rng.random()
    if script < 0.15:
        return number.translate(_FULL)
    if script < 0.2:
        return number.translate(_ARABIC)
    return number


def _text(rng: random.Random) -> str:
    parts = [
        _number(rng) if rng.random() < 0.5 else rng.choice(_WORDS) for _ in range(rng.randint(0, 6))
    ]
    return "".join(parts)


def _reference(kinds: frozenset[str], text: str) -> str:
    """Every chosen rule's pattern over the text, as the masker did before its shortcuts."""

    def masked(value: str) -> str:
        for rule in _RULES:
            if rule.kind in kinds:
                value = rule.pattern.sub(rule.replace, value)
        return value

    if not kinds or not text:
        return text
    plain = text.translate(_FULL_WIDTH)
    if plain != text and masked(plain) != plain:
        return masked(plain)
    return masked(text)


def test_text_is_masked_as_by_every_pattern() -> None:
    rng = random.Random(3)
    kind_sets = [frozenset(MASK_KINDS), frozenset(), *(frozenset({k}) for k in MASK_KINDS)]
    for _ in range(3000):
        text = _text(rng)
        for kinds in kind_sets:
            assert Masker(kinds).text(text) == _reference(kinds, text), (kinds, text)


def test_each_hint_is_found_wherever_its_pattern_matches() -> None:
    rng = random.Random(5)
    for _ in range(3000):
        text = _text(rng)
        for rule in _RULES:
            if rule.pattern.search(text):
                assert rule.hint.search(text), (rule.kind, text)
                assert _MAYBE_PERSONAL.search(text), text


@pytest.mark.parametrize(
    ("letter", "written"),
    [("o", "oO"), ("d", "dD"), ("e", "eE"), ("t", "tT"), ("p", "pP"), ("i", "iIİı"), ("n", "nN")],
)
def test_the_code_hint_spells_a_letter_as_ignorecase_matches_it(letter: str, written: str) -> None:
    every_character = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert sorted(re.findall(letter, every_character, re.IGNORECASE)) == sorted(written)


def _document(rng: random.Random, depth: int = 0) -> Any:
    keys: list[Any] = ["phone", "phone_tail", "sms_code", "code", "note", "card_no", "token", 7]
    roll = rng.random()
    if depth < 3 and roll < 0.25:
        return {rng.choice(keys): _document(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if depth < 3 and roll < 0.35:
        items = [_document(rng, depth + 1) for _ in range(rng.randint(0, 3))]
        return tuple(items) if rng.random() < 0.5 else items
    scalars = [True, False, None, rng.randint(0, 10**12), rng.random() * 1e11, _text(rng)]
    return rng.choice(scalars)


def _reference_data(mask: Masker, value: Any, key: str | None = None) -> Any:
    """The general rules of ``data``, by ``isinstance`` (as before the exact-type shortcuts)."""
    if isinstance(value, Mapping):
        return {k: _reference_data(mask, v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_reference_data(mask, v, key) for v in value]
    if key is not None and value is not None and _sensitive_key(key):
        if isinstance(value, bool):
            return value
        text = str(value)
        masked = mask.text(text)
        if masked != text or is_masked(text):
            return masked
        return "*" * max(len(text) - 2, 3) + text[-2:] if len(text) > 2 else "***"
    return mask.text(value) if isinstance(value, str) else value


def test_documents_are_masked_by_the_general_rules_whatever_the_types() -> None:
    rng = random.Random(9)
    mask = Masker()
    for _ in range(2000):
        document = _document(rng)
        key = rng.choice([None, "phone", "note"])
        masked = mask.data(document, key=key)
        assert masked == _reference_data(mask, document, key), document
        assert repr(masked) == repr(_reference_data(mask, document, key)), "same types too"


def test_a_text_masked_again_gets_the_same_answer_under_each_maskers_kinds() -> None:
    # Short texts' answers are kept per (kinds, text): a text masked under one set of kinds
    # must not give its answer to a masker with other kinds, nor long texts (not kept) differ.
    rng = random.Random(11)
    texts = [_text(rng) for _ in range(300)]
    texts += [" ".join(texts[i : i + 12]) for i in range(0, 240, 12)]  # past 256 characters
    kind_sets = [frozenset(MASK_KINDS), frozenset({"phone"}), frozenset({"code", "email"})]
    for _ in range(2):
        for text in texts:
            for kinds in kind_sets:
                assert Masker(kinds).text(text) == _reference(kinds, text), (kinds, text)
    assert any(len(t) > 256 for t in texts)
