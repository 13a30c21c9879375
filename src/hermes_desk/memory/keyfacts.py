"""The key-fact filter (M2): signals from lexicons, and normalised facts from key rules.

An utterance is a key fact when it shows at least two of four signals: a time expression, a
quantity, a negation, an emotion word. The lexicons and the key rules are data in the pack's
``keyfacts.yaml`` (Chinese and English), so a new business needs no code.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hermes_desk.errors import PackError
from hermes_desk.memory.fact import CandidateFact

__all__ = [
    "SIGNALS",
    "KeyFactFilter",
    "KeyRule",
    "evaluate_filter",
    "open_contact_text",
    "parse_number",
]

SIGNALS = ("time", "quantity", "negation", "emotion")

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_EN_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20,
               "thirty": 30, "a": 1, "an": 1, "half": 0.5, "半": 0.5, "first": 1, "second": 2,
               "third": 3, "fourth": 4, "fifth": 5, "sixth": 6}  # fmt: skip
_DAY_UNITS = (("month", 30), ("个月", 30), ("月", 30), ("week", 7), ("星期", 7), ("礼拜", 7),
              ("周", 7), ("day", 1), ("天", 1), ("日", 1))  # fmt: skip
#: How a note from a contact still open reads when the pack says nothing (``{note}``: the note).
OPEN_CONTACT_NOTE = {
    "zh": "（另一进行中的会话所述，未核实）{note}",
    "en": "(said in another open contact, not verified) {note}",
}


def open_contact_text(note: str, lang: str, template: Mapping[str, str] | None = None) -> str:
    """``note`` marked as said in another contact still open, in ``lang``."""
    shown = template or OPEN_CONTACT_NOTE
    chosen = shown.get(lang) or OPEN_CONTACT_NOTE.get(lang) or OPEN_CONTACT_NOTE["en"]
    return chosen.format(note=note)


_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?|[零〇一二两三四五六七八九十百千万]+|半|[a-z]+", re.I)


def parse_number(text: str) -> float | None:
    """Parse ``7``, ``7.5``, ``七``, ``十五``, ``两百``, ``seven``, ``半``; None otherwise."""
    token = text.strip().lower()
    if not token:
        return None
    try:
        return float(token)
    except ValueError:
        pass
    ordinal = re.fullmatch(r"(\d+)(?:st|nd|rd|th)", token)
    if ordinal:
        return float(ordinal.group(1))
    if token in _EN_NUMBERS:
        return float(_EN_NUMBERS[token])
    if all(ch in _ZH_DIGITS or ch in _ZH_UNITS for ch in token):
        total, current = 0, 0
        for ch in token:
            if ch in _ZH_DIGITS:
                current = _ZH_DIGITS[ch]
            else:
                total += (current or 1) * _ZH_UNITS[ch]
                current = 0
        return float(total + current)
    return None


def _as_int_if_whole(number: float) -> int | float:
    return int(number) if number == int(number) else number


def _parse_days(text: str) -> int | float | None:
    match = _NUMBER.search(text)
    if match is None:
        return None
    number = parse_number(match.group(0))
    if number is None:
        return None
    rest = text[match.end() :].lower()
    factor = next((f for unit, f in _DAY_UNITS if unit in rest), 1)
    return _as_int_if_whole(number * factor)


@dataclass(frozen=True, slots=True)
class _Signal:
    name: str
    pattern: re.Pattern[str] | None
    exclude: re.Pattern[str] | None

    def found(self, text: str) -> bool:
        if self.pattern is None:
            return False
        if self.exclude is not None:
            text = self.exclude.sub(" ", text)
        return self.pattern.search(text) is not None


@dataclass(frozen=True, slots=True)
class KeyRule:
    """How one normalised key is read from an utterance, its intent and slots."""

    key: str
    patterns: tuple[re.Pattern[str], ...]
    value: Any
    intents: frozenset[str] | None = None
    min_signals: int | None = None
    confidence: float = 0.9
    #: one pattern that matches where any of :attr:`patterns` does, so that a text none of
    #: them matches (most) is ruled out in one search; None when they cannot be joined
    _any: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)
    #: characters of which every match of any of :attr:`patterns` holds one (a text with
    #: none of them is ruled out without a search); None when that is not known
    _needs: frozenset[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_any", _any_of(self.patterns))
        object.__setattr__(self, "_needs", _needed_chars(self.patterns))

    def read(self, text: str, intent: str | None, slots: Mapping[str, Any]) -> Any:
        """The value this rule reads, or None when it does not fire."""
        if self.intents is not None and intent not in self.intents:
            return None
        if self._needs is not None and self._needs.isdisjoint(text):
            return None
        if self._any is not None and self._any.search(text) is None:
            return None
        match = next((m for p in self.patterns if (m := p.search(text))), None)
        if match is None:
            return None
        spec = self.value
        if not isinstance(spec, Mapping):
            return spec
        if spec.get("from") == "slot":
            return slots.get(str(spec["slot"]))
        raw = match.group(int(spec.get("group", 1)))
        kind = spec.get("type", "str")
        if kind == "days":
            return _parse_days(raw)
        if kind in ("int", "amount"):
            number = parse_number(raw)
            if number is not None and "minus" in spec:  # "paid 40, refunded 15" → 25
                other = parse_number(match.group(int(spec["minus"])) or "")
                number = None if other is None or other >= number else number - other
            return None if number is None else _as_int_if_whole(round(number, 2))
        return raw.strip()


_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")
_REFERENCES = re.compile(r"\\[1-9]|\(\?P=|\(\?\(")


def _any_of(patterns: Sequence[re.Pattern[str]]) -> re.Pattern[str] | None:
    """``(?:p1)|(?:p2)|…``: it finds a match exactly when one of ``patterns`` does. Only built
    when that is sure: the same flags for all, a leading ``(?i)`` (already in those flags) the
    only inline global flag, no back-reference or conditional (numbered groups shift)."""
    if len(patterns) < 2 or len({p.flags for p in patterns}) != 1:
        return None
    sources: list[str] = []
    for pattern in patterns:
        source = pattern.pattern
        if source.startswith("(?i)") and pattern.flags & re.IGNORECASE:
            source = source[4:]
        if _GLOBAL_FLAGS.search(source) or _REFERENCES.search(source):
            return None
        sources.append(f"(?:{source})")
    try:
        return re.compile("|".join(sources), patterns[0].flags)
    except re.error:
        return None


# Under IGNORECASE an ASCII letter also matches its other case and these characters (Python's
# re folds them together; checked over every code point in the tests), a CJK ideograph only
# itself, another ASCII character only itself.
_FOLDED_WITH = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}


def _chars_matching(code: int, ignore_case: bool) -> frozenset[str] | None:
    """The characters a literal matches, or None when that is not known here."""
    ch = chr(code)
    if not ignore_case:
        return frozenset(ch)
    if ch.isascii():
        low = ch.lower()
        return frozenset(low + ch.upper() + _FOLDED_WITH.get(low, ""))
    if "\u3400" <= ch <= "\u9fff":
        return frozenset(ch)
    return None


def _needed_in(items: Any, ignore_case: bool) -> frozenset[str] | None:
    """A set of characters one of which every match of the parsed sequence ``items``
    consumes (from an item it always matches; the rarest by :func:`_weight`), or None."""
    from re import _constants as c  # type: ignore[attr-defined]

    best: frozenset[str] | None = None
    for op, arg in items:
        found: frozenset[str] | None = None
        if op is c.LITERAL:
            found = _chars_matching(arg, ignore_case)
        elif op is c.IN:
            chars: set[str] = set()
            for member_op, member in arg:
                one = _chars_matching(member, ignore_case) if member_op is c.LITERAL else None
                if one is None:
                    chars = set()
                    break
                chars |= one
            found = frozenset(chars) or None
        elif op is c.SUBPATTERN:
            _, add_flags, del_flags, sub = arg
            case = (ignore_case or bool(add_flags & re.IGNORECASE)) and not (
                del_flags & re.IGNORECASE
            )
            found = _needed_in(sub, case)
        elif op is c.ATOMIC_GROUP:
            found = _needed_in(arg, ignore_case)
        elif op is c.BRANCH:
            union: set[str] = set()
            for alternative in arg[1]:
                one = _needed_in(alternative, ignore_case)
                if one is None:
                    union = set()
                    break
                union |= one
            found = frozenset(union) or None
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and arg[0] >= 1:
            found = _needed_in(arg[2], ignore_case)
        if found is not None and (best is None or _weight(found) < _weight(best)):
            best = found
    return best


def _weight(chars: frozenset[str]) -> int:
    """How often a text holds one of ``chars``, roughly: a space or an ASCII letter is common
    (English text), a given Chinese character rare."""
    return sum(
        1 if ch > "\x7f" else 4 if ch.isalnum() else 8 if ch.isspace() else 2 for ch in chars
    )


def _needed_chars(patterns: Sequence[re.Pattern[str]]) -> frozenset[str] | None:
    """Characters of which every match of any of ``patterns`` holds one: for each pattern the
    rarest such set its always-matched literals give (:func:`_needed_in`), joined; None when
    a pattern has none (or cannot be read)."""
    try:
        from re import _parser  # type: ignore[attr-defined]

        needed: set[str] = set()
        for pattern in patterns:
            parsed = _parser.parse(pattern.pattern, pattern.flags)
            one = _needed_in(parsed, bool(parsed.state.flags & re.IGNORECASE))
            if one is None:
                return None
            needed |= one
    except Exception:  # a private module of another shape: no shortcut, no harm
        return None
    return frozenset(needed) or None


@dataclass
class KeyFactFilter:
    """Signals and key rules loaded from a pack (see ``packs/ecommerce/keyfacts.yaml``)."""

    signals: tuple[_Signal, ...]
    rules: tuple[KeyRule, ...]
    min_signals: int = 2
    long_term: tuple[str, ...] = ()
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    #: How a value reads in a note, per key, value and language (``sms`` → 短信 / text message).
    values: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    #: How a note from another contact still open reads, per language (``{note}``).
    open_contact: dict[str, str] = field(default_factory=lambda: dict(OPEN_CONTACT_NOTE))

    @classmethod
    def from_file(cls, path: str | Path, *, min_signals: int | None = None) -> KeyFactFilter:
        target = Path(path)
        try:
            data = yaml.safe_load(target.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise PackError(f"cannot read key-fact rules: {exc}", file=target.name) from exc
        return cls.from_dict(data, file=target.name, min_signals=min_signals)

    @classmethod
    def from_pack(cls, pack_dir: str | Path, *, min_signals: int | None = None) -> KeyFactFilter:
        return cls.from_file(Path(pack_dir) / "keyfacts.yaml", min_signals=min_signals)

    @classmethod
    def bundled(cls, *, min_signals: int | None = None) -> KeyFactFilter:
        """The e-commerce demo pack's filter."""
        here = Path(__file__).resolve().parent.parent / "packs" / "ecommerce"
        return cls.from_pack(here, min_signals=min_signals)

    @classmethod
    def from_dict(
        cls, data: Any, *, file: str = "keyfacts.yaml", min_signals: int | None = None
    ) -> KeyFactFilter:
        if not isinstance(data, Mapping):
            raise PackError("must hold a mapping", file=file)
        raw_signals = data.get("signals")
        if not isinstance(raw_signals, Mapping):
            raise PackError("missing mapping", file=file, field="signals")
        signals = tuple(_build_signal(name, raw_signals.get(name), file) for name in SIGNALS)
        rules = tuple(_build_rule(raw, file) for raw in data.get("rules") or [])
        labels = {str(k): {str(a): str(b) for a, b in v.items()} for k, v in
                  (data.get("labels") or {}).items()}  # fmt: skip
        values = {
            str(key): {str(value): {str(a): str(b) for a, b in (shown or {}).items()}
                       for value, shown in (by_value or {}).items()}
            for key, by_value in (data.get("values") or {}).items()
        }  # fmt: skip
        open_contact = data.get("open_contact_note") or OPEN_CONTACT_NOTE
        if not isinstance(open_contact, Mapping) or any(
            "{note}" not in str(text) for text in open_contact.values()
        ):
            raise PackError(
                "must map languages to texts holding {note}", file=file, field="open_contact_note"
            )
        return cls(
            signals=signals,
            rules=rules,
            min_signals=int(min_signals or data.get("min_signals", 2)),
            long_term=tuple(str(p) for p in data.get("long_term") or []),
            labels=labels,
            values=values,
            open_contact={str(lang): str(text) for lang, text in open_contact.items()},
        )

    def signals_in(self, text: str) -> tuple[str, ...]:
        """The signals present in ``text``, in the order of :data:`SIGNALS`."""
        return tuple(s.name for s in self.signals if s.found(text))

    def is_key_fact(self, text: str) -> bool:
        return len(self.signals_in(text)) >= self.min_signals

    def extract(
        self, text: str, intent: str | None = None, slots: Mapping[str, Any] | None = None
    ) -> list[CandidateFact]:
        """Normalised facts the rules read from an utterance.

        Every fired rule gives a candidate; ``is_key_fact`` tells whether the utterance passed
        the filter for that rule (only those are promoted to mid-term).
        """
        # The signals are read only when a rule fires: most turns fire none.
        found: tuple[str, ...] | None = None
        values = slots or {}
        out: list[CandidateFact] = []
        for rule in self.rules:
            value = rule.read(text, intent, values)
            if value is None:
                continue
            if found is None:
                found = self.signals_in(text)
            needed = rule.min_signals if rule.min_signals is not None else self.min_signals
            out.append(
                CandidateFact(
                    key=rule.key,
                    value=value,
                    confidence=rule.confidence,
                    signals=found,
                    is_key_fact=len(found) >= needed,
                    text=text,
                )
            )
        return out

    def is_long_term(self, key: str) -> bool:
        return any(fnmatch.fnmatchcase(key, pattern) for pattern in self.long_term)

    def describe(self, key: str, value: Any, lang: str = "zh") -> str:
        """A human line for a note, from the pack's labels; ``key = value`` when unlabelled."""
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        named = self.values.get(key, {}).get(shown, {})
        shown = named.get(lang) or shown
        label = self.labels.get(key, {})
        template = label.get(lang) or next(iter(label.values()), None)
        return template.format(value=shown) if template else f"{key} = {shown}"

    def describe_open_contact(self, key: str, value: Any, lang: str = "zh") -> str:
        """:meth:`describe`, marked as said in another contact still open (not verified)."""
        return open_contact_text(self.describe(key, value, lang), lang, self.open_contact)


def _words_regex(words: Sequence[str], latin: bool) -> str:
    escaped = sorted((re.escape(w) for w in words if w), key=len, reverse=True)
    if not escaped:
        return ""
    body = "|".join(escaped)
    return rf"(?<![a-z'])(?:{body})(?![a-z])" if latin else f"(?:{body})"


def _build_signal(name: str, raw: Any, file: str) -> _Signal:
    if raw is None:
        return _Signal(name, None, None)
    if not isinstance(raw, Mapping):
        raise PackError("must map languages to lexicons", file=file, item=name)
    parts: list[str] = []
    excludes: list[str] = []
    for lang, lexicon in raw.items():
        if not isinstance(lexicon, Mapping):
            raise PackError("lexicon must be a mapping", file=file, item=f"{name}.{lang}")
        raw_words = [*(lexicon.get("words") or []), *(lexicon.get("exclude") or [])]
        if bad := [w for w in raw_words if not isinstance(w, str)]:
            # YAML reads a bare no/yes/on/off as a boolean: the word would silently vanish
            raise PackError(
                f"words must be text, got {bad!r} (quote them)", file=file, item=f"{name}.{lang}"
            )
        words = [w.lower() for w in lexicon.get("words") or []]
        latin = all(w.isascii() for w in words)
        if regex := _words_regex(words, latin):
            parts.append(regex)
        for pattern in lexicon.get("patterns") or []:
            _check_regex(str(pattern), file, f"{name}.{lang}")
            parts.append(f"(?:{pattern})")
        excludes.extend(str(e).lower() for e in lexicon.get("exclude") or [])
    pattern = re.compile("|".join(parts), re.I) if parts else None
    exclude = re.compile(_words_regex(excludes, latin=False), re.I) if excludes else None
    return _Signal(name, pattern, exclude)


def _check_regex(pattern: str, file: str, item: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.I)
    except re.error as exc:
        raise PackError(f"bad regular expression {pattern!r}: {exc}", file=file, item=item) from exc


def _build_rule(raw: Any, file: str) -> KeyRule:
    if not isinstance(raw, Mapping) or "key" not in raw:
        raise PackError("a rule needs a key", file=file, field="rules")
    key = str(raw["key"])
    patterns = tuple(_check_regex(str(p), file, key) for p in raw.get("patterns") or [])
    if not patterns:
        raise PackError("a rule needs patterns", file=file, item=key, field="patterns")
    if "value" not in raw:
        raise PackError("a rule needs a value", file=file, item=key, field="value")
    value = raw["value"]
    if isinstance(value, Mapping) and "minus" in value:
        if value.get("type") not in ("int", "amount"):
            raise PackError("minus needs type int or amount", file=file, item=key, field="value")
        if any(not isinstance(value.get(g, 1), int) for g in ("group", "minus")):
            raise PackError("group and minus are group numbers", file=file, item=key)
        if max(int(value.get("group", 1)), int(value["minus"])) > min(p.groups for p in patterns):
            raise PackError("minus names a group a pattern lacks", file=file, item=key)
    intents = raw.get("intents")
    min_signals = raw.get("min_signals")
    return KeyRule(
        key=key,
        patterns=patterns,
        value=raw["value"],
        intents=frozenset(str(i) for i in intents) if intents else None,
        min_signals=int(min_signals) if min_signals is not None else None,
        confidence=float(raw.get("confidence", 0.9)),
    )


def evaluate_filter(flt: KeyFactFilter, rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Precision, recall and F1 on labelled rows ``{text, key_fact, lang[, intent]}``.

    Two decisions are scored, overall and per language: the filter's (``is_key_fact``: at least
    ``min_signals`` signals), and under ``remembered`` what the pipeline keeps — a fact read by
    a key rule (with the row's intent) that passes its rule's threshold (explicit preferences
    pass on fewer signals). Misclassified texts are listed under ``errors`` (the filter's) and
    ``remembered_errors``.
    """
    filtered: dict[str, dict[str, int]] = {}
    remembered: dict[str, dict[str, int]] = {}
    errors: list[dict[str, Any]] = []
    missed: list[dict[str, Any]] = []
    for row in rows:
        text, truth = str(row["text"]), bool(row["key_fact"])
        intent = row.get("intent")
        predicted = flt.is_key_fact(text)
        kept = [c for c in flt.extract(text, str(intent) if intent else None) if c.is_key_fact]
        groups = ("all", str(row.get("lang", "?")))
        _count(filtered, groups, predicted, truth)
        _count(remembered, groups, bool(kept), truth)
        if predicted != truth:
            errors.append({"text": text, "expected": truth, "signals": flt.signals_in(text)})
        if bool(kept) != truth:
            missed.append({"text": text, "expected": truth, "keys": [c.key for c in kept]})
    out: dict[str, Any] = _figures(filtered)
    out["errors"] = errors
    out["remembered"] = _figures(remembered)
    out["remembered_errors"] = missed
    return out


def _count(
    counts: dict[str, dict[str, int]], groups: Sequence[str], predicted: bool, truth: bool
) -> None:
    for group in groups:
        c = counts.setdefault(group, {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "n": 0})
        c["n"] += 1
        c[("t" if predicted == truth else "f") + ("p" if predicted else "n")] += 1


def _figures(counts: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for group, c in counts.items():
        precision = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 0.0
        recall = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        accuracy = (c["tp"] + c["tn"]) / c["n"] if c["n"] else 0.0
        out[group] = {**c, "precision": precision, "recall": recall, "f1": f1, "accuracy": accuracy}
    return out
