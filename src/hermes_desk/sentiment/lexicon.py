"""A pack's sentiment cue words, matched in one pass, and its character polarity table.

Cues are matched longest first and never overlap, so ``不满意`` is one negative cue, not a
negative ``不`` before a positive ``满意``. A cue right after a negator (within two characters
of Chinese, or three English words) counts for the other side: "not happy" is negative. ASCII
cues match whole words only ("sue" is not in "issue").

The polarity table (``sentiment_polarity_zh.tsv``: character n-gram, weight) is what a review
corpus taught about Chinese words the pack's few thousand chat turns never use; the model reads
the sum of the weights of a turn's n-grams as two features.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hermes_desk.errors import ConfigError

__all__ = ["CueHits", "SentimentLexicon"]

_ASCII = re.compile(r"^[\x00-\x7f]+$")
_LATIN_WORD = re.compile(r"[a-z0-9']+")


@dataclass(frozen=True, slots=True)
class CueHits:
    """Counts of the cues found in one text."""

    negative: int = 0
    positive: int = 0
    negated: int = 0
    intensified: int = 0


@dataclass(frozen=True)
class SentimentLexicon:
    """Negative and positive cue words, negators and intensifiers (all lower case)."""

    negative: tuple[str, ...] = ()
    positive: tuple[str, ...] = ()
    negators: tuple[str, ...] = ()
    intensifiers: tuple[str, ...] = ()
    polarity: Mapping[str, float] = field(default_factory=dict)
    _pattern: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)
    _side: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        side = {term: -1 for term in self.negative} | {term: 1 for term in self.positive}
        object.__setattr__(self, "_side", side)
        if side:
            ordered = sorted(side, key=lambda t: (-len(t), t))
            object.__setattr__(self, "_pattern", re.compile("|".join(map(_alternative, ordered))))

    @staticmethod
    def read_polarity(path: Path) -> dict[str, float]:
        """A polarity table: ``ngram<TAB>weight`` lines, ``#`` comments."""
        table: dict[str, float] = {}
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"cannot read the polarity table {path}: {exc}") from exc
        for number, line in enumerate(lines, 1):
            if not line or line.startswith("#"):
                continue
            gram, sep, weight = line.rpartition("\t")
            try:
                table[gram] = float(weight)
            except ValueError:
                sep = ""
            if not sep or not gram:
                raise ConfigError(f"{path}:{number}: expected 'ngram<TAB>weight'")
        return table

    def with_polarity(self, table: Mapping[str, float]) -> SentimentLexicon:
        return SentimentLexicon(
            self.negative, self.positive, self.negators, self.intensifiers, dict(table)
        )

    @classmethod
    def from_folder(cls, folder: Path) -> SentimentLexicon:
        """A pack folder's ``sentiment_lexicon.yaml`` and ``sentiment_polarity_zh.tsv`` (each
        optional)."""
        words = folder / "sentiment_lexicon.yaml"
        lexicon = cls.from_yaml(words) if words.is_file() else cls()
        table = folder / "sentiment_polarity_zh.tsv"
        return lexicon.with_polarity(cls.read_polarity(table)) if table.is_file() else lexicon

    @classmethod
    def from_yaml(cls, path: Path) -> SentimentLexicon:
        """Read ``negative``, ``positive``, ``negators`` and ``intensifiers`` lists."""
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read the sentiment lexicon {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping of word lists")
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "lexicon") -> SentimentLexicon:
        lists: dict[str, tuple[str, ...]] = {}
        polarity = data.get("polarity", {})
        if not isinstance(polarity, dict) or not all(
            isinstance(k, str) and isinstance(v, int | float) for k, v in polarity.items()
        ):
            raise ConfigError(f"{source}: polarity must map n-grams to numbers")
        for key in ("negative", "positive", "negators", "intensifiers"):
            words = data.get(key, [])
            if not isinstance(words, list) or not all(isinstance(w, str) and w for w in words):
                raise ConfigError(f"{source}: {key} must be a list of non-empty strings")
            lists[key] = tuple(dict.fromkeys(w.strip().lower() for w in words))
        unknown = set(data) - set(lists) - {"polarity"}
        if unknown:
            raise ConfigError(f"{source}: unknown keys {sorted(unknown)}")
        return cls(**lists, polarity={k: float(v) for k, v in polarity.items()})

    def to_dict(self) -> dict[str, Any]:
        return {
            "negative": list(self.negative),
            "positive": list(self.positive),
            "negators": list(self.negators),
            "intensifiers": list(self.intensifiers),
            "polarity": dict(self.polarity),
        }

    def hits(self, text: str) -> CueHits:
        """The cues in ``text`` (already normalised: lower case, NFKC)."""
        if self._pattern is None:
            return CueHits()
        negative = positive = negated = intensified = 0
        for match in self._pattern.finditer(text):
            side = self._side[match.group(0)]
            before = text[max(0, match.start() - 12) : match.start()]
            if self._negated(before):
                side = -side
                negated += 1
            if self._intensified(before):
                intensified += 1
            if side < 0:
                negative += 1
            else:
                positive += 1
        return CueHits(negative, positive, negated, intensified)

    def _negated(self, before: str) -> bool:
        if not self.negators:
            return False
        near = before[-2:]
        words = _LATIN_WORD.findall(before)[-3:]
        return any((n in words) if _ASCII.match(n) else (n in near) for n in self.negators)

    def _intensified(self, before: str) -> bool:
        near = before[-2:]
        words = _LATIN_WORD.findall(before)[-2:]
        return any((n in words) if _ASCII.match(n) else (n in near) for n in self.intensifiers)


def _alternative(term: str) -> str:
    if _ASCII.match(term):
        # A whole word: no letter before, none after. The "none before" look-behind is put
        # after the first character (it looks back over that character and the one before),
        # so every alternative starts with a literal and the regex engine drops alternatives
        # by their first character instead of trying each of hundreds of look-behinds at every
        # position; the matches are those of (?<![a-z])term(?![a-z]).
        first = re.escape(term[0])
        return rf"{first}(?<![a-z]{first}){re.escape(term[1:])}(?![a-z])"
    return re.escape(term)
