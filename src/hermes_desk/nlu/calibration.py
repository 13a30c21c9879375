"""Turning raw class scores into calibrated probabilities (temperature-scaled softmax)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "CalibrationWarning",
    "calibrated_temperature",
    "fit_temperature",
    "out_of_fold_scores",
    "softmax",
    "softmax_row",
]


def softmax(scores: Any, temperature: float = 1.0) -> Any:
    """Row-wise softmax of ``scores / temperature`` (numpy array in, numpy array out)."""
    import numpy as np

    z = np.asarray(scores, dtype=np.float64) / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def softmax_row(scores: Sequence[float], temperature: float = 1.0) -> list[float]:
    """:func:`softmax` of a single row, in plain Python: for one utterance's few classes
    numpy's per-call overhead costs more than the arithmetic. The same operations in the same
    order, so the result agrees with :func:`softmax` to the last bit or two (``exp`` and the
    sum may round differently)."""
    z = [s / temperature for s in scores]
    top = max(z)
    e = [math.exp(v - top) for v in z]
    total = sum(e)
    return [v / total for v in e]


def fit_temperature(scores: Any, labels: Any) -> float:
    """The temperature that minimises the negative log-likelihood of ``labels`` (indices)."""
    import numpy as np

    idx = np.asarray(labels)
    rows = np.arange(len(idx))
    best_t, best_nll = 1.0, float("inf")
    for t in np.geomspace(0.01, 10.0, 80):
        p = softmax(scores, float(t))[rows, idx]
        nll = float(-np.log(np.clip(p, 1e-12, None)).mean())
        if nll < best_nll:
            best_t, best_nll = float(t), nll
    return best_t


class CalibrationWarning(UserWarning):
    """Calibration had to work around classes with too few examples (named in the message)."""


def calibrated_temperature(
    fit_scores: Callable[[Any, Any, Any], Any],
    features: Any,
    labels: Sequence[int],
    classes: Sequence[str],
    *,
    folds: int = 3,
    seed: int = 0,
) -> float:
    """The softmax temperature for a model's raw scores, fitted on out-of-fold scores.

    ``fit_scores(train_features, train_labels, test_features)`` trains on a fold and returns
    scores with one column per class index. A class with a single example cannot be held out:
    it stays in every training fold and the temperature is fitted on the other classes' rows,
    with a :class:`CalibrationWarning` naming it. When no class has two examples the temperature
    is fitted on the training scores themselves (over-confident, never flat), with a warning.
    """
    import numpy as np

    y = np.asarray(labels)
    counts = np.bincount(y, minlength=len(classes))
    single = [classes[int(i)] for i in np.flatnonzero(counts == 1)]
    held = np.flatnonzero(counts[y] >= 2)
    if len(held) == 0:
        warnings.warn(
            "calibration: no intent has two examples to hold one out; the confidence "
            "temperature is fitted on the training data itself (over-confident)",
            CalibrationWarning,
            stacklevel=3,
        )
        return fit_temperature(fit_scores(features, y, features), y)
    if single:
        warnings.warn(
            f"calibration: {len(single)} intent(s) with a single example are never held out "
            f"(the temperature is fitted on the other intents): {', '.join(single)}",
            CalibrationWarning,
            stacklevel=3,
        )
    scores = out_of_fold_scores(fit_scores, features, y, len(classes), folds=folds, seed=seed)
    return fit_temperature(scores[held], y[held])


def out_of_fold_scores(
    fit_scores: Callable[[Any, Any, Any], Any],
    features: Any,
    labels: Any,
    n_classes: int,
    *,
    folds: int = 3,
    seed: int = 0,
) -> Any:
    """Scores of every example of a class with at least two examples from a model that did not
    see it (stratified k-fold); rows of single-example classes are left at zero (those examples
    are in every training fold).
    """
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(labels)
    counts = np.bincount(y, minlength=n_classes)
    held = np.flatnonzero(counts[y] >= 2)
    always = np.flatnonzero(counts[y] < 2)
    splitter = StratifiedKFold(
        n_splits=min(folds, int(counts[counts >= 2].min())), shuffle=True, random_state=seed
    )
    out = np.zeros((len(y), n_classes), dtype=np.float64)
    for train_pos, test_pos in splitter.split(np.zeros(len(held)), y[held]):
        train_idx = np.concatenate([held[train_pos], always])
        test_idx = held[test_pos]
        out[test_idx] = fit_scores(features[train_idx], y[train_idx], features[test_idx])
    return out
