"""Measuring the deterministic slot extractors on labelled utterances: slot precision, recall
and F1, and date-value accuracy.

A slot counts as found when the extractor returns the same name with the same value, compared
after normalisation: a slot whose name contains ``date`` (``date``, ``datetime``,
``startDate_date`` …) is a date and compares as the day it means (an ISO date stays as it is,
a mention such as 明天 or "next Friday" is resolved against ``today``); ``amount`` compares as a
number (``35元`` = 35); digits (ids, phone numbers, however grouped) as their digits; anything
else as its NFKC-normalised, lower-cased text. The extractors are the pack's (each slot's,
chosen from its schema): slot names the pack does not extract count as missed, which is the
honest figure for them.

Date-value accuracy: the share of annotated date slots whose day the extractor found.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from hermes_desk.nlu.dates import find_dates, resolve_timezone
from hermes_desk.nlu.examples import Conversation, Example
from hermes_desk.nlu.extractors import SlotRule, extract_amounts
from hermes_desk.nlu.numbers import parse_number

__all__ = [
    "ConversationSlotReport",
    "SlotReport",
    "SlotScore",
    "extractor_for",
    "score_conversation_slots",
    "score_slots",
]

Extract = Callable[[str], dict[str, Any]]
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DIGITS = re.compile(r"\D")
_NUMBER_LIKE = re.compile(r"\+?\d[\d\s\-]*")


@dataclass(frozen=True, slots=True)
class SlotScore:
    precision: float
    recall: float
    f1: float
    support: int

    def to_dict(self) -> dict[str, Any]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "support": self.support}  # fmt: skip


@dataclass(frozen=True, slots=True)
class SlotReport:
    """Micro-averaged slot figures over every annotated slot, per slot name, and dates.

    Attributes:
        utterances: utterances with at least one annotated slot.
        today: the day relative dates were resolved against (ISO).
        date_accuracy: None when the data annotates no date.
    """

    utterances: int
    today: str
    overall: SlotScore
    per_slot: dict[str, SlotScore]
    dates: int
    date_accuracy: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "utterances": self.utterances,
            "today": self.today,
            **self.overall.to_dict(),
            "per_slot": {k: v.to_dict() for k, v in self.per_slot.items()},
            "dates": self.dates,
            "date_accuracy": self.date_accuracy,
        }


class _FixedDay:
    """A clock that always reads noon of one day in one time zone."""

    def __init__(self, day: date, tz: str) -> None:
        self._ts = datetime.combine(day, time(12), tzinfo=resolve_timezone(tz)).timestamp()

    def now(self) -> float:
        return self._ts

    def monotonic(self) -> float:
        return 0.0


def extractor_for(rules: Mapping[str, SlotRule], today: date, tz: str = "Asia/Shanghai") -> Extract:
    """The service's slot extractor for a pack's ``rules`` (``Pack.slot_rules``), with
    relative dates resolved against ``today``."""
    from hermes_desk.nlu.slots import SlotExtractor

    return SlotExtractor(rules, _FixedDay(today, tz), tz).extract


def _is_date(name: str) -> bool:
    return "date" in name.lower()


def _canonical(name: str, value: Any, today: date) -> str:
    text = unicodedata.normalize("NFKC", str(value)).strip()
    if _is_date(name):
        if _ISO_DATE.fullmatch(text):
            return text
        found = find_dates(text, today)
        return found[0].iso if found else text.lower()
    if name == "amount":
        amounts = extract_amounts(text)
        number = amounts[0] if amounts else parse_number(text)
        return text.lower() if number is None else f"{float(number):g}"
    if _NUMBER_LIKE.fullmatch(text):  # an id or a phone, however grouped
        return _DIGITS.sub("", text)
    return text.lower()


def _pairs(slots: dict[str, Any], today: date) -> Counter[tuple[str, str]]:
    out: Counter[tuple[str, str]] = Counter()
    for name, value in slots.items():
        key = "date" if _is_date(name) else name
        for v in value if isinstance(value, list) else [value]:
            out[(key, _canonical(name, v, today))] += 1
    return out


def _predicted(found: dict[str, Any]) -> dict[str, Any]:
    # ``purchase_date`` repeats a date already found (as ``date``): counted once.
    slots = {k: v for k, v in found.items() if k not in ("dates", "purchase_date")}
    if "dates" in found:
        slots["date"] = list(found["dates"])
    return slots


def _score(tp: int, predicted: int, gold: int) -> SlotScore:
    precision = tp / predicted if predicted else 0.0
    recall = tp / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return SlotScore(precision, recall, f1, gold)


def score_slots(examples: Sequence[Example], extract: Extract, today: date) -> SlotReport | None:
    """Slot figures over the examples that annotate slots; None when none does."""
    annotated = [e for e in examples if e.slots]
    if not annotated:
        return None
    tp: Counter[str] = Counter()
    gold_n: Counter[str] = Counter()
    pred_n: Counter[str] = Counter()
    for ex in annotated:
        gold = _pairs(ex.slots, today)
        predicted = _pairs(_predicted(extract(ex.text)), today)
        for (name, _), count in gold.items():
            gold_n[name] += count
        for (name, _), count in predicted.items():
            pred_n[name] += count
        for (name, _), count in (gold & predicted).items():
            tp[name] += count
    per_slot = {name: _score(tp[name], pred_n[name], gold_n[name]) for name in sorted(gold_n)}
    overall = _score(sum(tp.values()), sum(pred_n.values()), sum(gold_n.values()))
    dates = gold_n["date"]
    return SlotReport(
        utterances=len(annotated),
        today=today.isoformat(),
        overall=overall,
        per_slot=per_slot,
        dates=dates,
        date_accuracy=tp["date"] / dates if dates else None,
    )


@dataclass(frozen=True, slots=True)
class ConversationSlotReport:
    """Slot accuracy in conversations: after each labelled turn, is the dialogue state's value
    of each labelled slot the expected one (carried, resolved, normalised)?

    Attributes:
        labelled: labelled (turn, slot) pairs.
        accuracy: the share of them the state got right.
        per_slot: accuracy and support per slot name.
        misses: up to 50 ``{conversation, turn, slot, expected, got}``.
    """

    conversations: int
    labelled: int
    accuracy: float
    per_slot: dict[str, dict[str, float]]
    misses: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversations": self.conversations,
            "labelled": self.labelled,
            "accuracy": self.accuracy,
            "per_slot": self.per_slot,
            "misses": list(self.misses),
        }


def _same(name: str, expected: Any, got: Any, today: date) -> bool:
    if isinstance(expected, list):
        return isinstance(got, list) and [_canonical(name, v, today) for v in expected] == [
            _canonical(name, v, today) for v in got
        ]
    return got is not None and _canonical(name, expected, today) == _canonical(name, got, today)


def score_conversation_slots(
    conversations: Sequence[Conversation],
    rules: Mapping[str, SlotRule],
    today: date,
    tz: str = "Asia/Shanghai",
) -> ConversationSlotReport | None:
    """Run each conversation through the pack's slot extractor (``rules``: ``Pack.slot_rules``)
    and the dialogue state
    (:meth:`~hermes_desk.nlu.DialogueState.take`) and score the turns' labelled ``slots``;
    None when no turn labels any."""
    from hermes_desk.nlu.slots import SlotExtractor
    from hermes_desk.nlu.state import DialogueState

    extractor = SlotExtractor(rules, _FixedDay(today, tz), tz)
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    misses: list[dict[str, Any]] = []
    for conv in conversations:
        state = DialogueState()
        for index, turn in enumerate(conv.turns):
            state.take(turn.text, extractor.extract(turn.text), extractor.mentions(turn.text))
            for name, expected in turn.slots.items():
                got = state.slots.get(name)
                total[name] += 1
                if _same(name, expected, got, today):
                    right[name] += 1
                elif len(misses) < 50:
                    misses.append(
                        {"conversation": conv.id, "turn": index, "slot": name,
                         "expected": expected, "got": got}
                    )  # fmt: skip
    labelled = sum(total.values())
    if not labelled:
        return None
    return ConversationSlotReport(
        conversations=len(conversations),
        labelled=labelled,
        accuracy=sum(right.values()) / labelled,
        per_slot={
            name: {"accuracy": right[name] / total[name], "support": total[name]}
            for name in sorted(total)
        },
        misses=misses,
    )
