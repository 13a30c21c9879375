"""Chinese and English date expressions → ISO dates, relative to an injected "today".

Absolute forms: ``2024-05-20``, ``2024/5/20``, ``2024年5月20日``, ``5月20日``/``5月20号``, ``5.20``,
``May 20``, ``20 May 2024``. Relative forms: 今天/昨天/前天/大前天/明天/后天/大后天, 上周三/这周五/
下周一 (also 星期/礼拜), ``3天前``/``三天前``/``3天后``, ``today``/``yesterday``/``tomorrow``,
``last Friday``/``next Monday``/``this Friday``, ``3 days ago``/``in 3 days``.

Conventions (documented because they are choices):

* Weeks start on Monday. 上周三 is the Wednesday of the previous calendar week; 这周五 the
  Friday of this week, even if it is already past.
* ``last Friday`` is the most recent Friday strictly before today; ``next Monday`` the first
  Monday strictly after today; ``this Friday`` the Friday of the current week.
* A month-day without a year takes the occurrence nearest to today (so on 5 January, 12月28日 is
  last year's 28 December).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hermes_desk.clock import Clock
from hermes_desk.nlu.numbers import NUMBER_PATTERN, parse_number

__all__ = ["DateMention", "find_dates", "resolve_timezone", "today_in"]

_FIXED_ZONES = {"asia/shanghai": 8, "asia/hong_kong": 8, "asia/taipei": 8, "utc": 0}


def resolve_timezone(name: str) -> tzinfo:
    """A tz database zone, with a fixed-offset fallback where the system has no tz data."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        hours = _FIXED_ZONES.get(name.lower())
        if hours is None:
            raise
        return timezone(timedelta(hours=hours), name)


def today_in(clock: Clock, tz: tzinfo) -> date:
    """The calendar date of ``clock.now()`` in ``tz``."""
    return datetime.fromtimestamp(clock.now(), tz=tz).date()


@dataclass(frozen=True, slots=True)
class DateMention:
    """A date expression found in a text: where it is and the ISO date it means."""

    text: str
    start: int
    end: int
    value: date

    @property
    def iso(self) -> str:
        return self.value.isoformat()


_CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "七": 6}
_EN_WEEKDAY = {
    name: i
    for i, names in enumerate(
        [
            ("monday", "mon"),
            ("tuesday", "tue", "tues"),
            ("wednesday", "wed"),
            ("thursday", "thu", "thur", "thurs"),
            ("friday", "fri"),
            ("saturday", "sat"),
            ("sunday", "sun"),
        ]
    )
    for name in names
}
_MONTHS = {
    name: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for name in names
}
_CN_DAY_WORDS = {"大前天": -3, "前天": -2, "昨天": -1, "昨日": -1, "今天": 0, "今日": 0}
_CN_DAY_WORDS |= {"明天": 1, "明日": 1, "后天": 2, "大后天": 3}
_EN_DAY_WORDS = {"today": 0, "yesterday": -1, "tomorrow": 1, "tonight": 0}

_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAY_NAMES = "|".join(sorted(_EN_WEEKDAY, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"

# Order matters: longer, more specific forms first; matches never overlap.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")),
    ("cn_ymd", re.compile(r"(?<!\d)(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]")),
    (
        "cn_md",
        re.compile(rf"(?<![\d年])({NUMBER_PATTERN})\s*月\s*({NUMBER_PATTERN})\s*[日号]"),
    ),
    ("cn_word", re.compile("|".join(sorted(_CN_DAY_WORDS, key=len, reverse=True)))),
    (
        "cn_week",
        re.compile(
            r"(上上|上|这|本|下下|下)?\s*(?:个)?\s*(?:周|星期|礼拜)\s*([一二三四五六日天七1-7])"
        ),
    ),
    (
        "cn_week_rel",
        re.compile(
            r"(上上|上|这|本|下下|下)\s*(?:个)?\s*(周|星期|礼拜|月)(?![一二三四五六日天七1-7])"
        ),
    ),
    (
        "cn_offset",
        re.compile(
            rf"({NUMBER_PATTERN})\s*(?:个)?\s*(天|日|周|星期|礼拜)\s*(前|以前|之前|后|以后|之后)"
        ),
    ),
    (
        "en_dmy",
        re.compile(
            rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MONTH_NAMES})\.?,?(?:\s+(\d{{4}}))?\b",
            re.IGNORECASE,
        ),
    ),
    (
        "en_mdy",
        re.compile(
            rf"\b({_MONTH_NAMES})\.?\s+(\d{{1,2}}){_ORD}(?:,?\s+(\d{{4}}))?\b(?!\s*(?:%|\.\d))",
            re.IGNORECASE,
        ),
    ),
    (
        "en_week",
        re.compile(rf"\b(last|this|next|on)\s+({_WEEKDAY_NAMES})\b", re.IGNORECASE),
    ),
    ("en_week_rel", re.compile(r"\b(last|this|next)\s+(week|month)\b", re.IGNORECASE)),
    ("en_word", re.compile(r"\b(today|yesterday|tomorrow|tonight)\b", re.IGNORECASE)),
    (
        "en_ago",
        re.compile(
            r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(days?|weeks?)\s+ago\b",
            re.IGNORECASE,
        ),
    ),
    (
        "en_in",
        re.compile(
            r"\bin\s+(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(days?|weeks?)\b",
            re.IGNORECASE,
        ),
    ),
    # 5.20 / 5/20: only when not money (¥5.20, 5.20元) and not part of a longer number.
    (
        "md_dot",
        re.compile(
            r"(?<![\d.¥$￥/])(\d{1,2})[./](\d{1,2})(?![\d./%])(?!\s*(?:元|块|rmb|yuan|美元))",
            re.IGNORECASE,
        ),
    ),
]

_EN_SMALL = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_EN_SMALL |= {"six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except (ValueError, OverflowError):  # no such day, or a run of digits read as a month
        return None


def _nearest_year(today: date, month: int, day: int) -> date | None:
    candidates = [_safe_date(today.year + k, month, day) for k in (-1, 0, 1)]
    valid = [c for c in candidates if c is not None]
    if not valid:
        return None
    return min(valid, key=lambda d: (abs((d - today).days), d > today))


def _shift(today: date, count: int, *, month: bool) -> date:
    if not month:
        return today + timedelta(days=7 * count)
    index = today.year * 12 + today.month - 1 + count
    year, month_no = divmod(index, 12)
    for day in (today.day, 30, 29, 28):
        shifted = _safe_date(year, month_no + 1, day)
        if shifted is not None:
            return shifted
    return today  # pragma: no cover - day 28 exists in every month


def _week_day(today: date, weeks: int, weekday: int) -> date:
    monday = today - timedelta(days=today.weekday())
    return monday + timedelta(weeks=weeks, days=weekday)


def _en_count(token: str) -> int:
    return int(token) if token.isdigit() else _EN_SMALL[token.lower()]


def _resolve(kind: str, m: re.Match[str], today: date) -> date | None:
    g = m.groups()
    if kind in ("iso", "cn_ymd"):
        return _safe_date(int(g[0]), int(g[1]), int(g[2]))
    if kind == "cn_md":
        month, day = parse_number(g[0]), parse_number(g[1])
        if month is None or day is None:
            return None
        return _nearest_year(today, int(month), int(day))
    if kind == "md_dot":
        return _nearest_year(today, int(g[0]), int(g[1]))
    if kind == "cn_word":
        return today + timedelta(days=_CN_DAY_WORDS[m.group(0)])
    if kind == "cn_week":
        shift = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2, None: 0}[g[0]]
        wd = g[1]
        weekday = int(wd) - 1 if wd.isdigit() else _CN_WEEKDAY[wd]
        return _week_day(today, shift, weekday)
    if kind == "cn_week_rel":  # 上周 / 上个月 alone: the same day a week / a month away
        shift = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}[g[0]]
        return _shift(today, shift, month=g[1] == "月")
    if kind == "en_week_rel":
        shift = {"last": -1, "this": 0, "next": 1}[g[0].lower()]
        return _shift(today, shift, month=g[1].lower() == "month")
    if kind == "cn_offset":
        n = parse_number(g[0])
        if n is None:
            return None
        days = int(n) * (1 if g[1] in ("天", "日") else 7)
        return today + timedelta(days=-days if g[2].endswith("前") else days)
    if kind in ("en_dmy", "en_mdy"):
        day_s, month_s = (g[0], g[1]) if kind == "en_dmy" else (g[1], g[0])
        month = _MONTHS[month_s.lower()]
        if g[2]:
            return _safe_date(int(g[2]), month, int(day_s))
        return _nearest_year(today, month, int(day_s))
    if kind == "en_week":
        which, weekday = g[0].lower(), _EN_WEEKDAY[g[1].lower()]
        if which == "last":
            back = (today.weekday() - weekday) % 7 or 7
            return today - timedelta(days=back)
        if which == "next":
            ahead = (weekday - today.weekday()) % 7 or 7
            return today + timedelta(days=ahead)
        return _week_day(today, 0, weekday)
    if kind == "en_word":
        return today + timedelta(days=_EN_DAY_WORDS[g[0].lower()])
    if kind in ("en_ago", "en_in"):
        n = _en_count(g[0]) * (7 if g[1].lower().startswith("week") else 1)
        return today + timedelta(days=-n if kind == "en_ago" else n)
    return None  # pragma: no cover - every pattern kind is handled above


def _iter_matches(text: str) -> Iterator[tuple[str, re.Match[str]]]:
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            yield kind, m


def find_dates(text: str, today: date) -> list[DateMention]:
    """Every date expression in ``text``, in reading order, resolved against ``today``."""
    taken: list[tuple[int, int]] = []
    found: list[DateMention] = []
    for kind, m in _iter_matches(text):
        start, end = m.span()
        if any(start < e and s < end for s, e in taken):
            continue
        value = _resolve(kind, m, today)
        if value is None:
            continue
        taken.append((start, end))
        found.append(DateMention(m.group(0).strip(), start, end, value))
    found.sort(key=lambda d: d.start)
    return found
