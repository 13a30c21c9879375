from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hermes_desk.config import NluSettings
from hermes_desk.errors import ConfigError, MisuseError, NotFoundError
from hermes_desk.nlu import (
    OOS,
    Example,
    apply_threshold,
    build_classifier,
    evaluate,
    load_classifier,
    load_or_train,
)
from hermes_desk.nlu.cache import model_path


def test_training_data_fits_itself(pack_examples: list[Example]) -> None:
    clf = build_classifier("linear")
    clf.fit([e.text for e in pack_examples], [e.intent for e in pack_examples])
    report = evaluate(clf, pack_examples, threshold=0.0)
    assert report.accuracy > 0.95
    assert set(report.per_intent) == {e.intent for e in pack_examples}


def test_threshold_turns_unsure_predictions_out_of_scope() -> None:
    from hermes_desk.nlu import IntentPrediction

    unsure = IntentPrediction("logistics", 0.3, (("logistics", 0.3),))
    assert apply_threshold(unsure, 0.5).intent == OOS
    assert apply_threshold(unsure, 0.2).intent == "logistics"


def test_bad_use_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        build_classifier("bert")
    with pytest.raises(ConfigError):
        build_classifier("linear").fit(["a", "b"], ["x", "x"])
    with pytest.raises(MisuseError):
        build_classifier("linear").predict("hello")
    with pytest.raises(NotFoundError):
        load_classifier(tmp_path)


def test_load_or_train_caches_by_data_fingerprint(
    pack_examples: list[Example], tmp_path: Path
) -> None:
    settings = NluSettings(classifier="linear")
    first = load_or_train(pack_examples, settings, tmp_path)
    target = model_path(pack_examples, settings, tmp_path)
    assert (target / "meta.json").is_file()
    stamp = (target / "linear.pkl").stat().st_mtime_ns
    second = load_or_train(pack_examples, settings, tmp_path)
    assert (target / "linear.pkl").stat().st_mtime_ns == stamp  # loaded, not retrained
    assert second.context is None  # no dialogues, no context model
    assert second.classifier.predict("退款").intent == first.classifier.predict("退款").intent
    changed = [*pack_examples, Example("想换个新的手机壳", "return_exchange")]
    load_or_train(changed, settings, tmp_path)
    assert model_path(changed, settings, tmp_path) != target
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("intent-")]) == 2


def test_import_is_light() -> None:
    code = (
        "import sys, hermes_desk.nlu; "
        "print(sorted(m for m in ('sklearn','jieba','numpy','sklearn_crfsuite') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_ensemble_averages_its_perceptrons_and_round_trips(
    pack_examples: list[Example], tmp_path: Path
) -> None:
    from hermes_desk.nlu.ensemble import EnsembleIntentClassifier

    texts, intents = [e.text for e in pack_examples], [e.intent for e in pack_examples]
    one = EnsembleIntentClassifier(seeds=1)
    one.fit(texts, intents)
    two = EnsembleIntentClassifier(seeds=2)
    two.fit(texts, intents)
    probe = "我的快递三天了还没到"
    # The second perceptron changes the answer's probabilities, not the SVM's.
    assert two.predict(probe).confidence != pytest.approx(one.predict(probe).confidence, abs=1e-6)
    two.save(tmp_path / "two")
    again = load_classifier(tmp_path / "two")
    assert isinstance(again, EnsembleIntentClassifier) and len(again.mlps) == 2
    assert again.predict(probe).confidence == pytest.approx(two.predict(probe).confidence, abs=1e-6)
    with pytest.raises(ConfigError):
        EnsembleIntentClassifier(seeds=0)


def test_training_is_repeatable_whatever_the_global_random_state(
    pack_examples: list[Example],
) -> None:
    import numpy as np

    texts, labels = [e.text for e in pack_examples], [e.intent for e in pack_examples]
    answers = []
    for seed in (1, 2):
        np.random.seed(seed)  # code elsewhere moving numpy's global generator must not matter
        clf = build_classifier("linear")
        clf.fit(texts, labels)
        answers.append(clf.predict_many(texts[:200]))
    assert answers[0] == answers[1]
