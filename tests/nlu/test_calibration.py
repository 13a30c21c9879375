"""Calibration never leaves confidences flat: classes too small to hold out are named."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hermes_desk.nlu import build_classifier
from hermes_desk.nlu.calibration import CalibrationWarning, calibrated_temperature


def _fit_scores(x_train: Any, y_train: Any, x_test: Any) -> Any:
    # A nearest-centroid scorer: enough to have scores that depend on the training fold.
    centroids = np.stack([x_train[y_train == c].mean(axis=0) for c in range(3)])
    return x_test @ centroids.T


def test_single_example_classes_are_named_and_the_rest_calibrates() -> None:
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(c, 0.3, (6, 3)) for c in range(2)] + [rng.normal(2, 0.3, (1, 3))])
    x[:, 0] += np.repeat([0, 1, 2], [6, 6, 1])
    y = np.repeat([0, 1, 2], [6, 6, 1])
    with pytest.warns(CalibrationWarning, match="single example.*: gamma"):
        t = calibrated_temperature(_fit_scores, x, y, ["alpha", "beta", "gamma"])
    assert t != 1.0


def test_no_class_with_two_examples_still_gives_a_temperature() -> None:
    x = np.eye(3)
    y = np.arange(3)
    with pytest.warns(CalibrationWarning, match="no intent has two examples"):
        t = calibrated_temperature(lambda a, b, c: c @ a.T, x, y, ["a", "b", "c"])
    assert t < 1.0


def test_linear_on_many_tiny_classes_is_confident_on_its_training_data() -> None:
    """The failure this guards: 48 labels, some with one example, gave every utterance a
    confidence near 1/48, so a 0.5 threshold turned everything out of scope."""
    texts, labels = [], []
    for i in range(24):
        texts += [f"订单问题 类别{i} 第{n}句" for n in "一二三四五六"]
        labels += [f"intent_{i}"] * 6
        texts.append(f"单句 种类{i}")
        labels.append(f"single_{i}")
    clf = build_classifier("linear")
    with pytest.warns(CalibrationWarning, match="single_0"):
        clf.fit(texts, labels)
    predictions = clf.predict_many(texts)
    assert sum(p.intent == g for p, g in zip(predictions, labels, strict=True)) / len(labels) > 0.9
    # Flat confidences (about 1/48 to 1/8 here before the fix) would all fall under 0.5.
    assert sorted(p.confidence for p in predictions)[len(predictions) // 2] > 0.5
