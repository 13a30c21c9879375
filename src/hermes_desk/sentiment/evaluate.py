"""Accuracy, macro-F1 and per-class precision/recall of a sentiment model on labelled texts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_desk.sentiment.model import LABELS, SentimentModel

__all__ = ["SentimentReport", "evaluate_sentiment"]


@dataclass
class SentimentReport:
    total: int
    correct: int
    per_class: dict[str, dict[str, float]] = field(default_factory=dict)
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    @property
    def macro_f1(self) -> float:
        scores = [c["f1"] for c in self.per_class.values() if c["support"]]
        return sum(scores) / len(scores) if scores else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "accuracy": round(self.accuracy, 4),
            "macro_f1": round(self.macro_f1, 4),
            "per_class": self.per_class,
            "confusion": self.confusion,
        }


def evaluate_sentiment(
    model: SentimentModel, pairs: Sequence[tuple[str, str]], *, binary: bool = False
) -> SentimentReport:
    """Score ``model`` on ``(text, label)`` pairs. ``binary``: the gold labels are only
    negative/positive (reviews), so the prediction is the likelier of those two."""
    labels: list[str] = [label for label in LABELS if not binary or label != "neutral"]
    confusion: dict[str, dict[str, int]] = {g: {p: 0 for p in labels} for g in labels}
    correct = 0
    for text, gold in pairs:
        if binary:
            s = model.predict(text)
            predicted = "positive" if s.score >= 0 else "negative"
        else:
            predicted = model.predict(text).label
        confusion.setdefault(gold, {p: 0 for p in labels})
        confusion[gold][predicted] = confusion[gold].get(predicted, 0) + 1
        correct += predicted == gold
    per_class: dict[str, dict[str, float]] = {}
    for label in labels:
        tp = confusion.get(label, {}).get(label, 0)
        fp = sum(row.get(label, 0) for g, row in confusion.items() if g != label)
        fn = sum(n for p, n in confusion.get(label, {}).items() if p != label)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_class[label] = {
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f1": round(f1, 4),
            "support": tp + fn,
        }
    return SentimentReport(len(pairs), correct, per_class, confusion)
