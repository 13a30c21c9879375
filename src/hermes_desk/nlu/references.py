"""Which record a turn is about: ids written loosely, several ids in one turn, and references
to ids named earlier ("第二个", "那个订单", "the other one").

- :func:`normalise_ids` rewrites digit ids written in groups ("2024-0520-1234", "2024 0520
  1234", full-width "２０２４…") as one run of digits, so the format-checked extractors find them.
- :func:`find_reference` reads an ordinal or anaphoric reference: ``第二个``/``the second one``
  (an ordinal), ``最后一个``/``the last one``, ``另一个``/``the other one``, ``这个订单``/``that
  order`` (the current one).
- :func:`resolve_reference` picks the id a reference means from the ids the conversation has
  mentioned, in the order the customer named them.

The words are those of the language, not of a business: any pack whose slot is an id gets them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Reference", "find_reference", "normalise_ids", "resolve_reference"]

# Digit groups joined by a space, a dash or a dot: "2024-0520-1234", "2024 0520 1234".
_GROUPS = re.compile(r"(?<![\d.\-])\d{2,8}(?:[ \t\-_.·](?=\d)\d{2,8}){1,5}(?![\d])(?![.\-]\d)")
_DASHES = str.maketrans({"－": "-", "–": "-", "—": "-", "‐": "-", "‑": "-", "　": " "})

_CN_DIGIT = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8}
_CN_DIGIT |= {"九": 9, "十": 10, "头": 1}
_EN_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "1st": 1}
_EN_ORDINAL |= {"2nd": 2, "3rd": 3, "4th": 4, "5th": 5}

# A counter or a noun must follow, so 第二天 / 第一次 are not references; nor is a counter
# followed by another noun (第二个问题, 另一个地址).
_ZH_OTHER_NOUN = r"(?!问题|事|方面|原因|地址|颜色|尺码|号码|手机|办法|方法|人|客服)"
_ZH_THING = (
    rf"(?:个|单|笔|件|份|条)(?:订单|单子|包裹|快递|{_ZH_OTHER_NOUN})"
    r"|(?:订单|单子|包裹|快递|号)"
)
_ZH_ORDINAL = re.compile(rf"第\s*([一二两三四五六七八九十]|[1-9])\s*(?:{_ZH_THING})")
_ZH_FIRST = re.compile(rf"(?:头一|前一|前面那|前面的那|前面这|上面那|上面的那)\s*(?:{_ZH_THING})")
_ZH_LAST = re.compile(
    rf"(?:最后一|最后那|最后的那|后一|后面那|后面的那|后面这|下面那|下面的那)\s*(?:{_ZH_THING})"
)
_ZH_OTHER = re.compile(rf"(?:另一|另外一|另外那|另外的那|其他那|别的那|其它那)\s*(?:{_ZH_THING})")
_ZH_THIS = re.compile(rf"(?:这|那)\s*(?:{_ZH_THING})")

_EN_THING = r"(?:one|order|orders|parcel|package|number|id)"
_EN_ORDINAL_RE = re.compile(
    rf"\b(?:the\s+|my\s+)?(first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th)\s+{_EN_THING}\b",
    re.IGNORECASE,
)
_EN_LAST = re.compile(
    rf"\b(?:the|my)\s+(?:last|latter)\s+{_EN_THING}\b|\bthe\s+latter\b", re.IGNORECASE
)
_EN_FIRST = re.compile(r"\bthe\s+former\b", re.IGNORECASE)
_EN_OTHER = re.compile(
    rf"\bthe\s+other\b(?!\s+(?:day|week|month|year|time|night|thing|way|side|hand|question))"
    rf"|\b(?:another|other)\s+{_EN_THING}\b",
    re.IGNORECASE,
)
# The words that name a kind of record, not only point at one ("另一个订单", not "另一个").
_RECORD_NOUN = re.compile(
    r"订单|单子|包裹|快递|单|号|\b(?:order|orders|parcel|package|number|id)\b", re.IGNORECASE
)
_EN_THIS = re.compile(rf"\b(?:this|that|the\s+same)\s+{_EN_THING}\b", re.IGNORECASE)


def normalise_ids(
    text: str,
    *,
    lengths: Sequence[int] = (12,),
    accept: Callable[[str], bool] | None = None,
) -> str:
    """``text`` with full-width characters made ASCII (NFKC) and digit groups whose digits
    together have one of ``lengths`` written as one run ("订单号 2024-0520-1234" → "订单号
    202405201234"). Other groups (phone numbers, dates, amounts) stay as they are.

    ``accept``, when given, decides instead of ``lengths`` which runs of digits are ids (the
    slot extractor passes its slots' patterns)."""
    text = unicodedata.normalize("NFKC", text).translate(_DASHES)

    def join(m: re.Match[str]) -> str:
        digits = re.sub(r"\D", "", m.group(0))
        keep = accept(digits) if accept is not None else len(digits) in lengths
        return digits if keep else m.group(0)

    return _GROUPS.sub(join, text)


ReferenceKind = Literal["ordinal", "last", "other", "current"]


@dataclass(frozen=True, slots=True)
class Reference:
    """A reference a turn makes to a record named before.

    Attributes:
        kind: ``ordinal`` (``position`` counts from 1 in the order the ids were named), ``last``,
            ``other`` (not the current one) or ``current`` (the one being talked about).
        text: the words that made it.
    """

    kind: ReferenceKind
    text: str
    position: int = 0

    @property
    def names_a_record(self) -> bool:
        """Do its words name the kind of record ("另一个订单", "my other order"), not only
        point ("另一个", "the other one")?"""
        return _RECORD_NOUN.search(self.text) is not None


def find_reference(text: str) -> Reference | None:
    """The first ordinal or anaphoric reference in ``text``, if any."""
    text = unicodedata.normalize("NFKC", text)
    found: list[tuple[int, Reference]] = []
    m = _ZH_ORDINAL.search(text)
    if m:
        token = m.group(1)
        position = int(token) if token.isdigit() else _CN_DIGIT[token]
        found.append((m.start(), Reference("ordinal", m.group(0), position)))
    m = _EN_ORDINAL_RE.search(text)
    if m:
        found.append((m.start(), Reference("ordinal", m.group(0), _EN_ORDINAL[m.group(1).lower()])))
    for pattern, kind, position in (
        (_ZH_FIRST, "ordinal", 1),
        (_EN_FIRST, "ordinal", 1),
        (_ZH_LAST, "last", 0),
        (_EN_LAST, "last", 0),
        (_ZH_OTHER, "other", 0),
        (_EN_OTHER, "other", 0),
    ):
        m = pattern.search(text)
        if m:
            found.append((m.start(), Reference(kind, m.group(0), position)))  # type: ignore[arg-type]
    if not found:
        for pattern in (_ZH_THIS, _EN_THIS):
            m = pattern.search(text)
            if m:
                found.append((m.start(), Reference("current", m.group(0))))
    if not found:
        return None
    return min(found, key=lambda item: item[0])[1]


def resolve_reference(
    reference: Reference, mentioned: Sequence[str], current: str | None
) -> str | None:
    """The id ``reference`` means among ``mentioned`` (in the order they were named), given the
    ``current`` one; ``None`` when it cannot tell (the value stays as it was)."""
    if not mentioned:
        return None
    if reference.kind == "ordinal":
        index = reference.position - 1
        return mentioned[index] if 0 <= index < len(mentioned) else None
    if reference.kind == "last":
        return mentioned[-1]
    if reference.kind == "other":
        others = [value for value in mentioned if value != current]
        # Of several others, the one named most recently.
        return others[-1] if others else None
    return current if current is not None else mentioned[-1]
