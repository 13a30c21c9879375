"""The registry of deterministic slot extractors, and how a slot's schema picks one.

A pack declares its slots as JSON Schema in ``intents.yaml``; the extractor of each slot is
chosen from that schema (:func:`rule_for`), in this order:

1. ``extractor: <name>`` (or ``extractor: {name: <name>, <option>: …}``) names one of
   :data:`EXTRACTORS`;
2. ``format: date`` → ``date``;
3. ``pattern: <regex>`` → ``pattern`` (the value is searched for in the text);
4. anything else → ``none`` (the slot comes from the model channel, or from a workflow that
   waits for it).

Extractors of kind ``claim`` (ids: ``pattern``, ``phone``) run first on the whole utterance and
the digits they take are blanked out before the ``read`` extractors (amounts, dates, products)
see the text, so an order number is never read as an amount or a date.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from hermes_desk.nlu.dates import DateMention, find_dates
from hermes_desk.nlu.numbers import NUMBER_PATTERN, parse_number
from hermes_desk.nlu.purchase import find_product, find_purchase_date, find_reason

__all__ = [
    "ENGINE_KEYS",
    "EXTRACTORS",
    "ExtractorSpec",
    "Found",
    "SlotRule",
    "TurnText",
    "extract_amounts",
    "rule_for",
]

#: Keys of a slot schema the engine reads and no JSON Schema validator knows.
ENGINE_KEYS = ("extractor", "listed", "tail")


@dataclass(frozen=True, slots=True)
class Found:
    """A value an extractor found, and where (``start``/``end`` in the normalised text)."""

    value: Any
    start: int = -1
    end: int = -1


@dataclass
class TurnText:
    """The utterance an extractor reads: normalised (full-width → ASCII, grouped ids joined),
    with the ``claim`` extractors' spans blanked out for the ``read`` ones, and ``today``."""

    text: str
    today: date
    _dates: list[DateMention] | None = field(default=None, repr=False)

    @property
    def dates(self) -> list[DateMention]:
        """Every date mention of the text (computed once)."""
        if self._dates is None:
            self._dates = find_dates(self.text, self.today)
        return self._dates


@dataclass(frozen=True, slots=True)
class SlotRule:
    """How one slot is extracted: the extractor, its options and the slot's own pattern.

    Attributes:
        pattern: the schema's ``pattern``; every value found must match it.
        listed: every value named in a turn is kept, in order (``order_ids``), and references
            ("第二个", "the other one") pick among them.
        tail: replies may show the value's last ``tail`` characters as ``{<slot>_tail}``
            (``尾号 {phone_tail}``).
    """

    slot: str
    extractor: str
    options: Mapping[str, Any] = field(default_factory=dict)
    pattern: re.Pattern[str] | None = None
    listed: bool = False
    tail: int | None = None

    def accepts(self, value: str) -> bool:
        return self.pattern is None or self.pattern.search(value) is not None


Extract = Callable[[TurnText, SlotRule], list[Found]]


@dataclass(frozen=True, slots=True)
class ExtractorSpec:
    """A registered extractor.

    Attributes:
        kind: ``claim`` (runs on the whole text; its spans are taken from the others) or
            ``read`` (runs on what the claims left).
        plural: several values found are also given under the slot's plural (``dates``).
        options: the option names it accepts, with a one-line meaning each.
        needs_pattern: the slot's schema must give a ``pattern``.
    """

    name: str
    kind: Literal["claim", "read", "none"]
    run: Extract
    description: str
    options: Mapping[str, str] = field(default_factory=dict)
    plural: bool = False
    needs_pattern: bool = False


EXTRACTORS: dict[str, ExtractorSpec] = {}


def _register(spec: ExtractorSpec) -> None:
    EXTRACTORS[spec.name] = spec


# -- pattern: the schema's own regular expression, searched for ---------------------------------

_ANCHOR_START = re.compile(r"^\^")
_ANCHOR_END = re.compile(r"(?<!\\)\$$")
# A value starts where a character of its own kind (digit, Latin letter) does not go on before
# it, and ends where one does not go on after it: "订单202405201234" and "PL1234。" are values,
# "1202405201234" and "planPL1234" are not.
_START = r"(?:(?<![0-9])(?=[0-9])|(?<![A-Za-z])(?=[A-Za-z])|(?=[^0-9A-Za-z]))"
_END = r"(?:(?<=[0-9])(?![0-9])|(?<=[A-Za-z])(?![A-Za-z])|(?<=[^0-9A-Za-z]))"


def search_pattern(pattern: str, *, ignore_case: bool = False) -> re.Pattern[str]:
    """The regular expression that finds values of an anchored slot ``pattern`` in free text."""
    core = _ANCHOR_END.sub("", _ANCHOR_START.sub("", pattern))
    flags = re.IGNORECASE if ignore_case else 0
    return re.compile(f"{_START}(?:{core}){_END}", flags)


def _pattern(text: TurnText, rule: SlotRule) -> list[Found]:
    assert rule.pattern is not None
    finder = rule.options.get("_finder")
    if not isinstance(finder, re.Pattern):
        finder = search_pattern(
            rule.pattern.pattern, ignore_case=bool(rule.options.get("ignore_case"))
        )
    out: list[Found] = []
    for m in finder.finditer(text.text):
        value = m.group(0).upper() if rule.options.get("ignore_case") else m.group(0)
        if rule.accepts(value):
            out.append(Found(value, m.start(), m.end()))
    return out


_register(
    ExtractorSpec(
        "pattern",
        "claim",
        _pattern,
        "the slot's `pattern`, searched for in the text (anchors dropped; a value does not run "
        "on into more digits or letters); digits written in groups or full width whose run "
        "matches are joined first",
        options={"ignore_case": "match letters in either case; the value is upper-cased"},
        needs_pattern=True,
    )
)


# -- phone: a number with an optional country code, in groups -----------------------------------


def phone_pattern(country_code: str | None, groups: tuple[int, ...]) -> re.Pattern[str]:
    """A phone number: ``+CC`` / ``00CC`` / ``CC`` optionally first, then digit groups that may
    be separated by a space or a dash."""
    prefix = rf"(?:(?:\+|00)?{re.escape(country_code)}[\s-]?)?" if country_code else ""
    body = r"[\s-]?".join(f"(\\d{{{n}}})" for n in groups)
    return re.compile(rf"(?<![\d+]){prefix}{body}(?!\d)")


def _phone(text: TurnText, rule: SlotRule) -> list[Found]:
    finder = rule.options.get("_finder")
    assert isinstance(finder, re.Pattern)
    out: list[Found] = []
    for m in finder.finditer(text.text):
        value = "".join(m.groups())
        if rule.accepts(value):
            out.append(Found(value, m.start(), m.end()))
    return out


_register(
    ExtractorSpec(
        "phone",
        "claim",
        _phone,
        "a phone number, optionally after its country code (+86, 0086, 86), digits in the "
        "given groups with spaces or dashes between them; the value is the plain digits "
        "without the country code, checked against the slot's `pattern`",
        options={
            "country_code": 'digits of the country calling code (`"86"`), optional',
            "groups": "lengths of the digit groups, in order (`[3, 4, 4]`); required",
        },
    )
)


# -- amount --------------------------------------------------------------------------------------

_CURRENCY_BEFORE = r"(?:¥|￥|RMB|CNY|\$|USD|US\$)"
_CURRENCY_AFTER = r"(?:元|块钱|块|圆|rmb|yuan|RMB|CNY|dollars?|bucks|usd|USD)"
_AMOUNT = re.compile(
    rf"{_CURRENCY_BEFORE}\s*(\d[\d,]*(?:\.\d+)?)"
    rf"|(?<![\d.])({NUMBER_PATTERN})\s*{_CURRENCY_AFTER}",
    re.IGNORECASE,
)


def extract_amounts(text: str) -> list[float]:
    """Money amounts: ``¥35.5``, ``35元``, ``三百五十块``, ``$20``, ``20 dollars``."""
    return [found.value for found in _amounts(text)]


def _amounts(text: str) -> list[Found]:
    out: list[Found] = []
    for m in _AMOUNT.finditer(text):
        raw = (m.group(1) or m.group(2)).replace(",", "")
        value = parse_number(raw)
        if value is not None:
            out.append(Found(value, m.start(), m.end()))
    return out


_register(
    ExtractorSpec(
        "amount",
        "read",
        lambda text, rule: _amounts(text.text),
        "a money amount in yuan or dollars (`¥35.5`, `35元`, `三百五十块`, `$20`, `20 dollars`), "
        "as a number",
    )
)


# -- dates and what was bought -------------------------------------------------------------------


def _dates(text: TurnText, rule: SlotRule) -> list[Found]:
    return [Found(d.iso, d.start, d.end) for d in text.dates]


_register(
    ExtractorSpec(
        "date",
        "read",
        _dates,
        "a date, absolute or relative (`5月20号`, `昨天`, `last Friday`), as ISO `YYYY-MM-DD`; "
        "when a turn names several, all of them under the slot's plural (`dates`)",
        plural=True,
    )
)


def _year_before(day: date) -> date:
    try:
        return day.replace(year=day.year - 1)
    except ValueError:  # 29 February
        return day.replace(year=day.year - 1, day=28)


def _purchase_date(text: TurnText, rule: SlotRule) -> list[Found]:
    bought = find_purchase_date(text.text, text.dates)
    if bought is None:
        return []
    day = bought.value
    if day > text.today:  # "5月20号买的" in December: last May, not next
        day = _year_before(day)
    return [Found(day.isoformat(), bought.start, bought.end)]


_register(
    ExtractorSpec(
        "purchase_date",
        "read",
        _purchase_date,
        "the date next to a purchase verb (`昨天买的`, `bought it last week`), ISO, never in "
        "the future",
    )
)


def _one(finder: Callable[[str], str | None]) -> Extract:
    def run(text: TurnText, rule: SlotRule) -> list[Found]:
        value = finder(text.text)
        return [] if value is None else [Found(value)]

    return run


_register(
    ExtractorSpec(
        "product",
        "read",
        _one(find_product),
        "what was bought: the noun phrase after a purchase or return verb (`买的耳机`, "
        "`return the jacket`)",
    )
)
_register(
    ExtractorSpec(
        "reason",
        "read",
        _one(find_reason),
        "why it goes back: the clause that says what is wrong (size, a defect, a wrong item, "
        "a change of mind)",
    )
)
_register(
    ExtractorSpec(
        "none",
        "none",
        lambda text, rule: [],
        "nothing is extracted deterministically: the value comes from the model channel or, "
        "when a workflow waits for the slot, from the turn that brings it",
    )
)


def rule_for(slot: str, schema: Mapping[str, Any]) -> SlotRule:
    """The extraction rule a slot's schema chooses (see the module docstring).

    Raises:
        ValueError: an unknown extractor, an unknown or ill-typed option, a pattern that is no
            regular expression, or an extractor that needs a pattern the schema lacks. The
            message names the field.
    """
    raw = schema.get("extractor")
    options: dict[str, Any] = {}
    if isinstance(raw, Mapping):
        options = {k: v for k, v in raw.items() if k != "name"}
        raw = raw.get("name")
        if not isinstance(raw, str):
            raise ValueError("extractor.name: a mapping names its extractor under 'name'")
    if raw is not None and not isinstance(raw, str):
        raise ValueError("extractor: expected a name or {name: …, option: …}")
    if raw is None:
        if schema.get("format") == "date":
            raw = "date"
        elif "pattern" in schema:
            raw = "pattern"
        else:
            raw = "none"
    spec = EXTRACTORS.get(raw)
    if spec is None:
        raise ValueError(f"extractor: unknown extractor {raw!r}; known: {sorted(EXTRACTORS)}")
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        raise ValueError(
            f"extractor: {raw} takes no option {unknown}; it takes {list(spec.options)}"
        )
    pattern: re.Pattern[str] | None = None
    if "pattern" in schema:
        try:
            pattern = re.compile(str(schema["pattern"]))
        except re.error as exc:
            raise ValueError(f"pattern: not a valid regular expression: {exc}") from exc
    elif spec.needs_pattern:
        raise ValueError(f"pattern: the {raw} extractor needs the slot's pattern")
    listed = schema.get("listed", False)
    if not isinstance(listed, bool):
        raise ValueError("listed: expected true or false")
    tail = schema.get("tail")
    if tail is not None and (isinstance(tail, bool) or not isinstance(tail, int) or tail < 1):
        raise ValueError("tail: expected a number of characters ≥ 1")
    options = _prepared(raw, options, pattern)
    return SlotRule(slot, raw, options, pattern, listed, tail)


def _prepared(
    name: str, options: dict[str, Any], pattern: re.Pattern[str] | None
) -> dict[str, Any]:
    """Options checked, with the compiled finder the extractor uses (``_finder``)."""
    if name == "pattern":
        ignore_case = options.get("ignore_case", False)
        if not isinstance(ignore_case, bool):
            raise ValueError("extractor.ignore_case: expected true or false")
        assert pattern is not None
        return {**options, "_finder": search_pattern(pattern.pattern, ignore_case=ignore_case)}
    if name == "phone":
        code = options.get("country_code")
        if code is not None and not (isinstance(code, str | int) and str(code).isdigit()):
            raise ValueError('extractor.country_code: expected the code\'s digits ("86")')
        groups = options.get("groups")
        if (
            not isinstance(groups, list)
            or not groups
            or any(
                isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 15 for n in groups
            )
        ):
            raise ValueError("extractor.groups: expected a list of group lengths ([3, 4, 4])")
        finder = phone_pattern(str(code) if code is not None else None, tuple(groups))
        return {**options, "_finder": finder}
    return options
