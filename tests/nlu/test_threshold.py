from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from hermes_desk.errors import NotFoundError, ValidationError
from hermes_desk.nlu import OOS, Example, IntentPrediction, build_classifier
from hermes_desk.nlu.threshold import choose_threshold, model_threshold, save_threshold


class Scripted:
    """A classifier whose answers are fixed per text (the rule is what is tested here)."""

    kind = "scripted"

    def __init__(self, answers: dict[str, tuple[str, float]]) -> None:
        self.answers = answers

    def fit(self, texts: Sequence[str], intents: Sequence[str]) -> None: ...

    def predict(self, text: str) -> IntentPrediction:
        label, conf = self.answers[text]
        return IntentPrediction(label, conf, ((label, conf),))

    def predict_many(self, texts: Sequence[str]) -> list[IntentPrediction]:
        return [self.predict(t) for t in texts]

    def save(self, directory: Path) -> None: ...


def _validation() -> tuple[Scripted, list[Example]]:
    # Four in-scope answers, all right, with confidences 0.95, 0.72, 0.52, 0.41; two oos
    # queries the model calls in-scope with 0.45 and 0.66.
    answers = {
        "a": ("x", 0.95),
        "b": ("x", 0.72),
        "c": ("y", 0.52),
        "d": ("y", 0.41),
        "e": ("x", 0.45),
        "f": ("y", 0.66),
    }
    gold = {"a": "x", "b": "x", "c": "y", "d": "y", "e": OOS, "f": OOS}
    return Scripted(answers), [Example(t, g) for t, g in gold.items()]


def test_rule_takes_the_largest_threshold_above_the_floor() -> None:
    clf, val = _validation()
    # in-scope accuracy: 1.0 up to 0.40, 0.75 up to 0.50, 0.5 up to 0.70, 0.25 up to 0.90.
    assert choose_threshold(clf, val, min_in_scope_accuracy=0.75).threshold == 0.5
    assert choose_threshold(clf, val, min_in_scope_accuracy=1.0).threshold == 0.4
    choice = choose_threshold(clf, val, min_in_scope_accuracy=0.5)
    assert choice.threshold == 0.7
    curve = {t: (acc, oos) for t, acc, oos in choice.curve}
    assert curve[0.7] == (0.5, 1.0)
    assert curve[0.45] == (0.75, 0.0)
    assert curve[0.5] == (0.75, 0.5)


def test_unreachable_floor_falls_back_to_the_smallest_grid_value() -> None:
    clf, val = _validation()
    choice = choose_threshold(clf, val, min_in_scope_accuracy=1.01, grid=(0.6, 0.3, 0.9))
    assert choice.threshold == 0.3


def test_empty_validation_is_rejected() -> None:
    clf, _ = _validation()
    with pytest.raises(ValidationError):
        choose_threshold(clf, [])


def test_threshold_is_saved_with_the_model(tmp_path: Path, pack_examples: list[Example]) -> None:
    clf = build_classifier("linear")
    clf.fit([e.text for e in pack_examples], [e.intent for e in pack_examples])
    clf.save(tmp_path / "m")
    assert model_threshold(tmp_path / "m", 0.42) == 0.42
    heldout = pack_examples[::7]
    choice = choose_threshold(clf, heldout, min_in_scope_accuracy=0.9)
    save_threshold(tmp_path / "m", choice)
    assert model_threshold(tmp_path / "m", 0.42) == choice.threshold
    # The model still loads and its kind is kept.
    from hermes_desk.nlu import load_classifier

    assert load_classifier(tmp_path / "m").kind == "linear"
    with pytest.raises(NotFoundError):
        model_threshold(tmp_path / "missing", 0.5)
