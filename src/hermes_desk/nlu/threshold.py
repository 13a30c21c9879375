"""Choosing a model's out-of-scope threshold on validation data, by a rule fixed in advance.

The rule: the **largest** threshold on a fixed grid whose validation in-scope accuracy is still
at least ``min_in_scope_accuracy`` (default 91%). A larger threshold rejects more out-of-scope
queries and costs in-scope accuracy; the rule spends in-scope accuracy down to the floor and no
further. The choice is a property of the trained model: it is saved in the model's
``meta.json`` (``oos_threshold``) and used by ``hermes-desk nlu evaluate`` when no threshold is
given. Test data must never be used here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_desk.errors import ValidationError
from hermes_desk.nlu.classifier import IntentClassifier, apply_threshold, read_meta, write_meta
from hermes_desk.nlu.evaluate import score_predictions
from hermes_desk.nlu.examples import Example

__all__ = [
    "DEFAULT_GRID",
    "DEFAULT_MIN_IN_SCOPE",
    "ThresholdChoice",
    "choose_threshold",
    "model_threshold",
    "save_threshold",
]

DEFAULT_GRID = tuple(round(0.30 + 0.05 * i, 2) for i in range(13))  # 0.30 … 0.90
DEFAULT_MIN_IN_SCOPE = 0.91


@dataclass(frozen=True, slots=True)
class ThresholdChoice:
    """The chosen threshold and the validation figures at every grid point.

    Attributes:
        threshold: the chosen value.
        rule: the rule, in words (recorded in ``meta.json``).
        curve: per grid point, ``(threshold, in_scope_accuracy, oos_recall)``; ``oos_recall``
            is None when the validation data has no ``oos`` example.
    """

    threshold: float
    rule: str
    curve: tuple[tuple[float, float, float | None], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "rule": self.rule,
            "curve": [
                {"threshold": t, "in_scope_accuracy": a, "oos_recall": r} for t, a, r in self.curve
            ],
        }


def choose_threshold(
    classifier: IntentClassifier,
    validation: Sequence[Example],
    *,
    min_in_scope_accuracy: float = DEFAULT_MIN_IN_SCOPE,
    grid: Sequence[float] = DEFAULT_GRID,
) -> ThresholdChoice:
    """Apply the rule on ``validation``: the largest grid threshold whose in-scope accuracy is
    ≥ ``min_in_scope_accuracy``; the smallest grid value when none reaches it."""
    if not validation or not grid:
        raise ValidationError("choosing a threshold needs validation examples and a grid")
    predictions = classifier.predict_many([e.text for e in validation])
    gold = [e.intent for e in validation]
    curve: list[tuple[float, float, float | None]] = []
    for th in sorted(grid):
        labels = [apply_threshold(p, th).intent for p in predictions]
        r = score_predictions(gold, labels, threshold=th)
        curve.append((th, r.in_scope_accuracy, r.oos_recall))
    passing = [th for th, acc, _ in curve if acc >= min_in_scope_accuracy]
    chosen = max(passing) if passing else curve[0][0]
    rule = f"largest threshold with validation in-scope accuracy >= {min_in_scope_accuracy:g}"
    return ThresholdChoice(chosen, rule, tuple(curve))


def save_threshold(directory: Path, choice: ThresholdChoice | float | None, **extra: Any) -> None:
    """Record the model's out-of-scope threshold (and how it was chosen) in ``meta.json``;
    ``None`` records that the model has none (its training data had no ``oos`` label)."""
    meta = read_meta(directory)
    if isinstance(choice, ThresholdChoice):
        meta.update(oos_threshold=choice.threshold, threshold_rule=choice.rule)
    elif choice is None:
        meta.update(oos_threshold=None, threshold_rule="none: no 'oos' label in the training data")
    else:
        meta.update(oos_threshold=float(choice))
    meta.update(extra)
    write_meta(directory, **meta)


def model_threshold(directory: Path, default: float) -> float:
    """The threshold saved with the model in ``directory``: 0 (none) when it was saved as
    none, ``default`` when the model records nothing about it."""
    meta = read_meta(directory)
    if "oos_threshold" not in meta:
        return default
    value = meta["oos_threshold"]
    return 0.0 if value is None else float(value)
