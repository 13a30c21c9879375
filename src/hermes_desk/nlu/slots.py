"""Deterministic slot extractors: order ids, phone numbers, amounts, dates and durations, and
what was bought (product, purchase date, reason: :mod:`hermes_desk.nlu.purchase`).

These run before any model and their values are format-checked, so they win over the model
channel (see :mod:`hermes_desk.nlu.model_slots`). Ids written in groups or in full-width
digits ("2024-0520-1234", "２０２４…") are normalised first
(:func:`~hermes_desk.nlu.references.normalise_ids`).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from typing import Any

from hermes_desk.clock import Clock
from hermes_desk.nlu.dates import find_dates, resolve_timezone, today_in
from hermes_desk.nlu.numbers import NUMBER_PATTERN, parse_number
from hermes_desk.nlu.purchase import find_product, find_purchase_date, find_reason
from hermes_desk.nlu.references import normalise_ids

__all__ = [
    "LISTED_SLOTS",
    "SlotExtractor",
    "extract_amounts",
    "extract_durations",
    "extract_order_ids",
    "extract_phones",
]

# Exactly 12 digits, not part of a longer digit run.
_ORDER_ID = re.compile(r"(?<!\d)(\d{12})(?!\d)")
# Mainland mobile: 1[3-9] + 9 digits, optionally +86/86, spaces or dashes in 3-4-4 groups.
_PHONE = re.compile(
    r"(?<![\d+])(?:(?:\+|00)?86[\s-]?)?(1[3-9]\d)[\s-]?(\d{4})[\s-]?(\d{4})(?![\d])"
)
_CURRENCY_BEFORE = r"(?:¥|￥|RMB|CNY|\$|USD|US\$)"
_CURRENCY_AFTER = r"(?:元|块钱|块|圆|rmb|yuan|RMB|CNY|dollars?|bucks|usd|USD)"
_AMOUNT = re.compile(
    rf"{_CURRENCY_BEFORE}\s*(\d[\d,]*(?:\.\d+)?)"
    rf"|(?<![\d.])({NUMBER_PATTERN})\s*{_CURRENCY_AFTER}",
    re.IGNORECASE,
)
_DURATION = re.compile(
    rf"({NUMBER_PATTERN}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s*"
    r"(?:个)?\s*(天|日|周|星期|礼拜|小时|days?|weeks?|hours?)(?![a-z])(?!\s*(?:前|以前|之前|后|以后|之后))(?!\s*ago\b)",
    re.IGNORECASE,
)
_EN_SMALL = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_EN_SMALL |= {"six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


#: Slots of which one turn may name several values; all are kept, in order (``mentions``).
LISTED_SLOTS = ("order_id", "phone")
_ORDER_ID_LENGTHS = (12,)


def _normalise(text: str) -> str:
    # Full-width digits and letters (１２３, ＋８６) become ASCII; grouped ids are joined.
    return normalise_ids(unicodedata.normalize("NFKC", text), lengths=_ORDER_ID_LENGTHS)


def extract_order_ids(text: str) -> list[str]:
    """12-digit order ids, in order of appearance, without duplicates."""
    return list(dict.fromkeys(_ORDER_ID.findall(_normalise(text))))


def extract_phones(text: str) -> list[str]:
    """Mainland mobile numbers as 11 plain digits (``+86 138-0013-8000`` → ``13800138000``)."""
    found = ["".join(m.groups()) for m in _PHONE.finditer(_normalise(text))]
    return list(dict.fromkeys(found))


def extract_amounts(text: str) -> list[float]:
    """Money amounts: ``¥35.5``, ``35元``, ``三百五十块``, ``$20``, ``20 dollars``."""
    amounts: list[float] = []
    for m in _AMOUNT.finditer(_normalise(text)):
        raw = (m.group(1) or m.group(2)).replace(",", "")
        value = parse_number(raw)
        if value is not None:
            amounts.append(value)
    return amounts


def _count(token: str) -> float | None:
    small = _EN_SMALL.get(token.lower())
    return float(small) if small is not None else parse_number(token)


def extract_durations(text: str) -> dict[str, float]:
    """Durations such as 超过7天, 两周, ``7 days``, ``48 hours`` → ``{"days": 7}``.

    Weeks are converted to days; hours are kept as ``hours``. Relative dates (3天前, 3 days
    ago) are dates, not durations, and are left out. The largest value of each unit wins.
    """
    out: dict[str, float] = {}
    for m in _DURATION.finditer(_normalise(text)):
        n = _count(m.group(1))
        if n is None:
            continue
        unit = m.group(2).lower()
        if unit in ("小时",) or unit.startswith("hour"):
            key, value = "hours", n
        elif unit in ("周", "星期", "礼拜") or unit.startswith("week"):
            key, value = "days", n * 7
        else:
            key, value = "days", n
        value = int(value) if float(value).is_integer() else value
        out[key] = max(out.get(key, 0), value)
    return out


def _year_before(day: date) -> date:
    try:
        return day.replace(year=day.year - 1)
    except ValueError:  # 29 February
        return day.replace(year=day.year - 1, day=28)


class SlotExtractor:
    """Pulls format-checked slot values out of an utterance.

    Args:
        clock: source of "now"; relative dates (昨天, last Friday) are resolved against it.
        tz: time-zone name used to turn ``clock.now()`` into today's date.
    """

    def __init__(self, clock: Clock, tz: str = "Asia/Shanghai") -> None:
        self._clock = clock
        self._tz = resolve_timezone(tz)

    def mentions(self, text: str) -> dict[str, list[str]]:
        """Every value of the :data:`LISTED_SLOTS` in ``text``, in order ("我有两个订单，A和B"
        → ``{"order_id": [A, B]}``); slots with no value are absent."""
        text = _normalise(text)
        found = {"order_id": extract_order_ids(text), "phone": extract_phones(text)}
        return {name: values for name, values in found.items() if values}

    def extract(self, text: str) -> dict[str, Any]:
        """Slots found in ``text``: ``order_id`` (the first one named), ``phone``, ``amount``,
        ``date`` (ISO), ``dates`` when several dates are mentioned, and for a purchase
        ``product``, ``purchase_date`` (ISO; never in the future) and ``reason``. Keys are
        absent when nothing was found."""
        text = _normalise(text)
        slots: dict[str, Any] = {}
        orders = extract_order_ids(text)
        if orders:
            slots["order_id"] = orders[0]
        phones = extract_phones(text)
        if phones:
            slots["phone"] = phones[0]
        # Digits already claimed by an order id or a phone are not amounts or dates.
        rest = _ORDER_ID.sub(" ", _PHONE.sub(" ", text))
        amounts = extract_amounts(rest)
        if amounts:
            slots["amount"] = amounts[0]
        today = today_in(self._clock, self._tz)
        dates = find_dates(rest, today)
        if dates:
            slots["date"] = dates[0].iso
            if len(dates) > 1:
                slots["dates"] = [d.iso for d in dates]
        bought = find_purchase_date(rest, dates)
        if bought is not None:
            day = bought.value
            if day > today:  # "5月20号买的" in December: last May, not next
                day = _year_before(day)
            slots["purchase_date"] = day.isoformat()
        product = find_product(rest)
        if product is not None:
            slots["product"] = product
        reason = find_reason(rest)
        if reason is not None:
            slots["reason"] = reason
        return slots
