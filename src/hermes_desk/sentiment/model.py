"""The sentiment of one customer turn: a linear model over characters, words and cue words.

Features (all computed in plain Python, so reading one turn needs no sklearn and takes tens of
microseconds):

- character 1–3-grams of the normalised text (they carry Chinese, which has no spaces, and
  English spelling alike), L2-normalised together;
- English word unigrams and bigrams (``not happy``), in the same normalised group;
- counts of the pack lexicon's cues (negative, positive, negated, intensified) and of ``!`` and
  ``?`` runs, capped, outside the normalisation: a strong cue weighs the same in a short chat
  line and a long review;
- the sum of the pack's polarity table over the text's character n-grams, split into its
  positive and negative part (capped).

The model is a (multinomial or binary) logistic regression trained by
:func:`hermes_desk.sentiment.training.train_sentiment`; its weights are a plain mapping from
feature to one weight per class, saved as JSON.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import add
from pathlib import Path
from typing import Any, Literal

from hermes_desk.errors import ConfigError
from hermes_desk.sentiment.lexicon import SentimentLexicon

__all__ = ["LABELS", "Sentiment", "SentimentLabel", "SentimentModel", "sentiment_features"]

SentimentLabel = Literal["negative", "neutral", "positive"]
LABELS: tuple[SentimentLabel, ...] = ("negative", "neutral", "positive")

# Bumped when the features change: a cached model trained on other features is retrained.
FEATURES_VERSION = 2  # 2: the polarity table
# Reviews can be long; what decides a turn's tone is within its first thousand characters.
_MAX_CHARS = 1000
_CUE_CAP = 3.0
_POLARITY_CAP = 6.0
_SPACES = re.compile(r"\s+")
_LATIN_WORD = re.compile(r"[a-z0-9']+")
_BANGS = re.compile(r"!+")
_QUESTIONS = re.compile(r"\?+")


@dataclass(frozen=True, slots=True)
class Sentiment:
    """A turn's sentiment: the label, a signed ``score`` in [-1, 1] (P(positive) −
    P(negative); below zero leans negative) and the ``confidence`` of the label."""

    label: SentimentLabel
    score: float
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "score": round(self.score, 4),
            "confidence": round(self.confidence, 4),
        }


def _normalise(text: str) -> str:
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()[:_MAX_CHARS]


def sentiment_features(text: str, lexicon: SentimentLexicon) -> dict[str, float]:
    """The model's features of ``text`` (see the module docstring)."""
    t = _normalise(text)
    # Character 1-, 2- and 3-grams in the order they first occur (n by n), a lone space aside.
    chars = dict.fromkeys(chain(t, map(add, t, t[1:]), map(add, map(add, t, t[1:]), t[2:])))
    chars.pop(" ", None)
    grams: dict[str, float] = {"c:" + gram: 1.0 for gram in chars}
    words = _LATIN_WORD.findall(t)
    for i, word in enumerate(words):
        grams["w:" + word] = 1.0
        if i:
            grams["w:" + words[i - 1] + " " + word] = 1.0
    feats: dict[str, float]
    if grams:
        norm = 1.0 / math.sqrt(len(grams))
        feats = {key: norm for key in grams}
    else:
        feats = {}
    if lexicon.polarity:
        table = lexicon.polarity
        polarity = sum(map(table.get, chars, repeat(0.0)))
        if polarity > 0:
            feats["x:pol_pos"] = min(polarity, _POLARITY_CAP)
        elif polarity < 0:
            feats["x:pol_neg"] = min(-polarity, _POLARITY_CAP)
    hits = lexicon.hits(t)
    for key, count in (
        ("x:neg", hits.negative),
        ("x:pos", hits.positive),
        ("x:negated", hits.negated),
        ("x:intense", hits.intensified),
        ("x:bang", len(_BANGS.findall(t))),
        ("x:question", len(_QUESTIONS.findall(t))),
    ):
        if count:
            feats[key] = min(float(count), _CUE_CAP)
    if hits.negative and not hits.positive:
        feats["x:only_neg"] = 1.0
    if hits.positive and not hits.negative:
        feats["x:only_pos"] = 1.0
    return feats


class SentimentModel:
    """A trained linear sentiment model: ``weights[feature][k]`` for class ``classes[k]``.

    ``negative_threshold``: a turn whose P(negative) reaches it is negative even when another
    class is likelier (a missed unhappy customer costs more than a neutral turn flagged);
    None: the likeliest class wins."""

    def __init__(
        self,
        *,
        classes: Sequence[str],
        weights: Mapping[str, Sequence[float]],
        bias: Sequence[float],
        lexicon: SentimentLexicon,
        info: Mapping[str, Any] | None = None,
        negative_threshold: float | None = None,
    ) -> None:
        if len(classes) < 2 or len(bias) != len(classes):
            raise ConfigError("a sentiment model needs two or more classes and one bias each")
        unknown = set(classes) - set(LABELS)
        if unknown:
            raise ConfigError(f"unknown sentiment classes {sorted(unknown)}")
        self.classes: tuple[str, ...] = tuple(classes)
        self.weights = {k: tuple(float(x) for x in v) for k, v in weights.items()}
        self.bias = tuple(float(b) for b in bias)
        self.lexicon = lexicon
        self.info = dict(info or {})
        self.negative_threshold = negative_threshold
        self._neg = self.classes.index("negative") if "negative" in self.classes else None
        self._pos = self.classes.index("positive") if "positive" in self.classes else None

    def probabilities(self, text: str) -> list[float]:
        """Class probabilities in :attr:`classes` order."""
        weights = self.weights
        known = [
            (row, value)
            for key, value in sentiment_features(text, self.lexicon).items()
            if (row := weights.get(key)) is not None
        ]
        # Class by class, each score summed in the features' order from its bias.
        scores = []
        for k, score in enumerate(self.bias):
            for row, value in known:
                score += row[k] * value
            scores.append(score)
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        total = sum(exps)
        return [e / total for e in exps]

    def predict(self, text: str) -> Sentiment:
        probs = self.probabilities(text)
        best = max(range(len(probs)), key=probs.__getitem__)
        if (
            self._neg is not None
            and self.negative_threshold is not None
            and probs[self._neg] >= self.negative_threshold
        ):
            best = self._neg
        p_neg = probs[self._neg] if self._neg is not None else 0.0
        p_pos = probs[self._pos] if self._pos is not None else 0.0
        label: SentimentLabel = self.classes[best]  # type: ignore[assignment]
        return Sentiment(label, p_pos - p_neg, probs[best])

    def to_dict(self) -> dict[str, Any]:
        return {
            "features_version": FEATURES_VERSION,
            "classes": list(self.classes),
            "bias": list(self.bias),
            "lexicon": self.lexicon.to_dict(),
            "info": self.info,
            "weights": {k: [round(w, 6) for w in v] for k, v in self.weights.items()},
        }

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> SentimentModel:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the sentiment model {path}: {exc}") from exc
        if data.get("features_version") != FEATURES_VERSION:
            raise ConfigError(f"{path}: trained on other features; retrain it")
        return cls(
            classes=data["classes"],
            weights=data["weights"],
            bias=data["bias"],
            lexicon=SentimentLexicon.from_dict(data["lexicon"], source=str(path)),
            info=data.get("info"),
        )
