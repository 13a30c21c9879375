"""Turning raw class scores into calibrated probabilities (temperature-scaled softmax)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["fit_temperature", "out_of_fold_scores", "softmax"]


def softmax(scores: Any, temperature: float = 1.0) -> Any:
    """Row-wise softmax of ``scores / temperature`` (numpy array in, numpy array out)."""
    import numpy as np

    z = np.asarray(scores, dtype=np.float64) / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


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


def out_of_fold_scores(
    fit_scores: Callable[[Any, Any, Any], Any],
    features: Any,
    labels: Sequence[int],
    n_classes: int,
    *,
    folds: int = 3,
    seed: int = 0,
) -> Any | None:
    """Scores of every example from a model that did not see it (k-fold), or None when some
    class has too few examples to hold one out.

    ``fit_scores(train_features, train_labels, test_features)`` trains on a fold and returns
    scores with one column per class index (``n_classes`` columns).
    """
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    y = np.asarray(labels)
    counts = np.bincount(y, minlength=n_classes)
    if counts.min() < 2:
        return None
    splitter = StratifiedKFold(
        n_splits=min(folds, int(counts.min())), shuffle=True, random_state=seed
    )
    out = np.zeros((len(y), n_classes), dtype=np.float64)
    for train_idx, test_idx in splitter.split(np.zeros(len(y)), y):
        out[test_idx] = fit_scores(features[train_idx], y[train_idx], features[test_idx])
    return out
