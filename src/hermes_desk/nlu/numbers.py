"""Numbers written with digits or Chinese numerals (三百五十, 两千零五, 十二, 1.5万)."""

from __future__ import annotations

__all__ = ["CN_NUMERAL_CHARS", "NUMBER_PATTERN", "parse_cn_numeral", "parse_number"]

_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4}
_DIGITS |= {"五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_UNITS = {"十": 10, "百": 100, "千": 1_000}
_BIG = {"万": 10_000, "亿": 100_000_000}

CN_NUMERAL_CHARS = "".join(_DIGITS) + "".join(_UNITS) + "".join(_BIG)
# Digits (optionally with a decimal part) or a run of Chinese numerals.
NUMBER_PATTERN = rf"\d+(?:\.\d+)?|[{CN_NUMERAL_CHARS}]+"


def parse_cn_numeral(text: str) -> int | None:
    """Value of a Chinese numeral such as 三百五十 or 两千零五; None if it is not one."""
    if not text or any(ch not in CN_NUMERAL_CHARS for ch in text):
        return None
    if all(ch in _DIGITS for ch in text) and len(text) > 1:
        # Digit by digit, as in 二〇二四.
        return int("".join(str(_DIGITS[ch]) for ch in text))
    total, section, digit = 0, 0, None
    last_unit, after_unit = 0, False
    for ch in text:
        if ch in _DIGITS:
            # 三百五 is 350: a trailing digit right after a unit is worth a tenth of that unit.
            digit = _DIGITS[ch]
            after_unit = after_unit and ch not in "零〇"
        elif ch in _UNITS:
            section += (1 if digit is None else digit) * _UNITS[ch]
            last_unit, after_unit, digit = _UNITS[ch], True, None
        else:
            section += digit or 0
            total += (section or 1) * _BIG[ch]
            section, digit, last_unit, after_unit = 0, None, _BIG[ch], True
    if digit is not None and after_unit and last_unit >= 100:
        return total + section + digit * last_unit // 10
    return total + section + (digit or 0)


def parse_number(text: str) -> float | None:
    """Value of digits (``12``, ``3.5``) or a Chinese numeral; None if neither."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        value = parse_cn_numeral(text)
        return None if value is None else float(value)
