"""The language of one customer turn (``zh`` or ``en``), offline and in microseconds.

Customers mix scripts: a Chinese customer writes "refund 要多久到账" or "iPhone 到哪了", an English
one names a product "I ordered the 小米 earbuds". The turn's language is the script that carries
most of its words: Han characters are weighed against Latin words, with 1.5 characters counting
as one word (a Chinese word is about that long). What carries no language is left out: digits,
order numbers and codes ("202405201234", "X7K2"), e-mail addresses, links, and the few Latin
tokens Chinese customers use as words of their own ("ok", "app", "id", "sms"…).

A turn with no language of its own ("202405201234", "123456", "ok", "👍") keeps the
conversation's language (``previous``), else the default.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["Language", "detect_language", "script_weights"]

Language = Literal["zh", "en"]

# Han ideographs (basic block, extension A, compatibility) — kana would be Japanese, not handled.
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Things that are written in Latin letters but are no language: links, e-mail, codes with digits.
_NOISE = re.compile(
    r"https?://\S+|www\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?<![A-Za-z0-9])[A-Za-z]*\d[A-Za-z0-9-]*(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_LATIN_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
# Latin tokens that Chinese customers use inside Chinese ("ok了", "app 打不开", "sms"): neutral.
_NEUTRAL = frozenset(
    {"ok", "okay", "app", "id", "sms", "vip", "qq", "wifi", "pdf", "ps", "pos", "cod", "h", "s"}
)
#: How many Han characters weigh as much as one Latin word.
HAN_PER_WORD = 1.5
# A Chinese street address: a value, not the language of the sentence it sits in ("ok do it,
# new address is 上海市浦东新区世纪大道100号" is English).
_ADDRESS = re.compile(
    r"[\u4e00-\u9fff]{2,}(?:省|市|区|县)[\u4e00-\u9fff\d]*?(?:路|街|道|巷|弄)\s*\d+\s*号?"
)
#: Latin words a sentence needs for a Chinese address in it to be taken as a value.
_WORDS_AROUND_AN_ADDRESS = 3


def script_weights(text: str) -> tuple[float, float]:
    """``(chinese, english)``: Han characters in words, and Latin words, with noise removed."""
    cleaned = _NOISE.sub(" ", text)
    han = len(_HAN.findall(cleaned))
    words = [w for w in _LATIN_WORD.findall(cleaned) if w.lower() not in _NEUTRAL]
    # All-capital short tokens are codes or brands (a captcha "XKCD", "DHL"), not language.
    latin = sum(1 for w in words if not (w.isupper() and len(w) <= 4))
    return han / HAN_PER_WORD, float(latin)


def detect_language(
    text: str, previous: str | None = None, *, default: Language = "zh"
) -> Language:
    """The language of one turn: ``zh`` or ``en``.

    Args:
        text: the customer's utterance.
        previous: the conversation's language so far; kept when the turn has none of its own
            (a bare number, "ok") or when both scripts weigh the same.
        default: the language when there is neither (the pack's first language).

    Examples:
        >>> detect_language("refund 要多久到账")
        'zh'
        >>> detect_language("I ordered the 小米 earbuds and they never came")
        'en'
        >>> detect_language("202405201234", previous="en")
        'en'
        >>> detect_language("ok do it, new address is 上海市浦东新区世纪大道100号")
        'en'
    """
    chinese, english = script_weights(text)
    if chinese > english >= _WORDS_AROUND_AN_ADDRESS and _ADDRESS.search(text):
        chinese, english = script_weights(_ADDRESS.sub(" ", text))
    fallback: Language = default
    if previous == "zh":
        fallback = "zh"
    elif previous == "en":
        fallback = "en"
    if chinese == english:
        return fallback
    return "zh" if chinese > english else "en"
