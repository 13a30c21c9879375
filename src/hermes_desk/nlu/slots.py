"""Deterministic slot extraction, driven by the pack's slot schemas.

Each slot's extractor is chosen from its JSON Schema in the pack's ``intents.yaml`` (a named
``extractor``, ``format: date`` or a ``pattern``; see :mod:`hermes_desk.nlu.extractors`). These
run before any model and their values are format-checked, so they win over the model channel
(see :mod:`hermes_desk.nlu.model_slots`). Ids written in groups or in full-width digits
("2024-0520-1234", "２０２４…") are normalised first when together they match a ``pattern``
slot (:func:`~hermes_desk.nlu.references.normalise_ids`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from hermes_desk.clock import Clock
from hermes_desk.nlu.dates import resolve_timezone, today_in
from hermes_desk.nlu.extractors import EXTRACTORS, SlotRule, TurnText, extract_amounts, rule_for
from hermes_desk.nlu.numbers import NUMBER_PATTERN, parse_number
from hermes_desk.nlu.references import normalise_ids

__all__ = ["SlotExtractor", "extract_amounts", "extract_durations", "slot_rules"]

_DURATION = re.compile(
    rf"({NUMBER_PATTERN}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s*"
    r"(?:个)?\s*(天|日|周|星期|礼拜|小时|days?|weeks?|hours?)(?![a-z])(?!\s*(?:前|以前|之前|后|以后|之后))(?!\s*ago\b)",
    re.IGNORECASE,
)
# Where a turn's requests part: punctuation that ends a clause (not the list comma 、), line
# breaks, and the words that add another request ("另外", "also"). "订单A和B" stays one clause.
_REQUESTS = re.compile(
    r"[,，.。!！?？;；\n]+|\s{2,}|另外|还有|顺便|同时|\b(?:also|plus|additionally|as well)\b",
    re.IGNORECASE,
)
_EN_SMALL = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_EN_SMALL |= {"six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def _count(token: str) -> float | None:
    small = _EN_SMALL.get(token.lower())
    return float(small) if small is not None else parse_number(token)


def extract_durations(text: str) -> dict[str, float]:
    """Durations such as 超过7天, 两周, ``7 days``, ``48 hours`` → ``{"days": 7}``.

    Weeks are converted to days; hours are kept as ``hours``. Relative dates (3天前, 3 days
    ago) are dates, not durations, and are left out. The largest value of each unit wins.
    """
    out: dict[str, float] = {}
    for m in _DURATION.finditer(unicodedata.normalize("NFKC", text)):
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


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span (merged where they overlap) replaced by one space."""
    parts: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if start < at:  # overlaps the span just blanked
            at = max(at, end)
            continue
        parts.extend((text[at:start], " "))
        at = end
    parts.append(text[at:])
    return "".join(parts)


def slot_rules(slots: Mapping[str, Mapping[str, Any]]) -> dict[str, SlotRule]:
    """The extraction rule of each slot (``slots``: name → JSON Schema).

    Raises:
        ValueError: a schema whose extraction fields are wrong (the message names the field).
    """
    return {name: rule_for(name, schema) for name, schema in slots.items()}


class SlotExtractor:
    """Pulls format-checked slot values out of an utterance, for the slots of a pack.

    Args:
        rules: the extraction rule of each slot (:func:`slot_rules`; a loaded pack has them as
            ``Pack.slot_rules``).
        clock: source of "now"; relative dates (昨天, last Friday) are resolved against it.
        tz: time-zone name used to turn ``clock.now()`` into today's date.
    """

    def __init__(
        self, rules: Mapping[str, SlotRule], clock: Clock, tz: str = "Asia/Shanghai"
    ) -> None:
        self._clock = clock
        self._tz = resolve_timezone(tz)
        active = [r for r in rules.values() if EXTRACTORS[r.extractor].kind != "none"]
        self._claims = [r for r in active if EXTRACTORS[r.extractor].kind == "claim"]
        self._reads = [r for r in active if EXTRACTORS[r.extractor].kind == "read"]
        self._joined = [r for r in self._claims if r.extractor == "pattern"]
        self._listed = [r for r in active if r.listed]

    @property
    def listed(self) -> tuple[str, ...]:
        """Slots of which one turn may name several values; all are kept, in order."""
        return tuple(r.slot for r in self._listed)

    def _normalise(self, text: str) -> str:
        # Full-width digits and letters (１２３, ＋８６) become ASCII (normalise_ids applies
        # NFKC first); digit groups that together make a value of a pattern slot are joined.
        return normalise_ids(text, accept=self._is_id)

    def _is_id(self, digits: str) -> bool:
        return any(rule.accepts(digits) for rule in self._joined)

    def _values(self, rule: SlotRule, text: TurnText) -> list[Any]:
        return list(dict.fromkeys(f.value for f in EXTRACTORS[rule.extractor].run(text, rule)))

    def mentions(self, text: str) -> dict[str, list[str]]:
        """Every value of each listed slot in ``text``, in order ("我有两个订单，A和B" →
        ``{"order_id": [A, B], "phone": []}``); a listed slot with no value has an empty list."""
        return self._mentions(TurnText(self._normalise(text), self._today()))

    def _mentions(self, turn: TurnText) -> dict[str, list[str]]:
        return {rule.slot: self._values(rule, turn) for rule in self._listed}

    def clauses(self, text: str) -> list[tuple[str, dict[str, list[str]]]] | None:
        """The turn's clauses, each with the values of each listed slot it names (the
        :meth:`mentions` of the clause that it has), when every value the turn names of a
        listed slot sits in a clause of its own ("订单A到哪了，另外我想退货订单B");
        ``None`` when two share one ("订单A和B都到哪了") or the turn has one clause."""
        normalised = self._normalise(text)
        today = self._today()
        parts = [p.strip() for p in _REQUESTS.split(normalised) if p and p.strip()]
        if len(parts) < 2:
            return None
        out = [
            (part, {s: v for s, v in self._mentions(TurnText(part, today)).items() if v})
            for part in parts
        ]
        if any(len(values) > 1 for _part, named in out for values in named.values()):
            return None
        return out

    def read(self, text: str) -> tuple[dict[str, Any], dict[str, list[str]]]:
        """``(extract(text), mentions(text))``, with the text normalised and today's date read
        once for both."""
        whole = TurnText(self._normalise(text), self._today())
        return self._extract(whole), self._mentions(whole)

    def _today(self) -> Any:
        return today_in(self._clock, self._tz)

    def extract(self, text: str) -> dict[str, Any]:
        """Slots found in ``text``: the first value of each slot, and under the slot's plural
        (``dates``) every one when its extractor gives several (dates). Keys are absent when
        nothing was found."""
        return self._extract(TurnText(self._normalise(text), self._today()))

    def _extract(self, whole: TurnText) -> dict[str, Any]:
        normalised, today = whole.text, whole.today
        slots: dict[str, Any] = {}
        spans: list[tuple[int, int]] = []
        for rule in self._claims:
            found = EXTRACTORS[rule.extractor].run(whole, rule)
            if found:
                slots[rule.slot] = found[0].value
            spans.extend((f.start, f.end) for f in found if f.start >= 0)
        # What an id or a phone took is no amount, date or product.
        left = TurnText(_blanked(normalised, spans), today)
        for rule in self._reads:
            spec = EXTRACTORS[rule.extractor]
            values = [f.value for f in spec.run(left, rule)]
            if not values:
                continue
            slots[rule.slot] = values[0]
            if spec.plural and len(values) > 1:
                slots[f"{rule.slot}s"] = values
        return slots
