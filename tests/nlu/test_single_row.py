"""One utterance's fast path (plain Python over a few classes) agrees with the batch path."""

from __future__ import annotations

import numpy as np
import pytest

from hermes_desk.nlu import Example
from hermes_desk.nlu.calibration import softmax, softmax_row
from hermes_desk.nlu.ensemble import EnsembleIntentClassifier
from hermes_desk.nlu.linear import rank_probabilities, rank_row

PROBES = [
    "我的快递三天了还没到",
    "我要退货，订单202405201234",
    "how long does a refund take?",
    "ＡＢＣ 全角 😀",
    "",
    "谢谢",
]


def test_softmax_row_is_the_softmax_of_one_row() -> None:
    rng = np.random.default_rng(0)
    for size in (1, 2, 8, 151):
        scores = rng.normal(scale=5.0, size=size).astype(np.float32)
        for temperature in (0.05, 1.0, 3.0):
            expected = softmax(scores[None, :], temperature)[0]
            got = softmax_row(scores.tolist(), temperature)
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_rank_row_ranks_as_the_batch_ranking() -> None:
    rng = np.random.default_rng(1)
    classes = [f"c{i}" for i in range(12)]
    for _ in range(50):
        probs = softmax(rng.normal(size=(1, 12)))
        for top_k in (1, 5, 20):
            assert (
                rank_row(probs[0].tolist(), classes, top_k)
                == rank_probabilities(probs, classes, top_k)[0]
            )


@pytest.fixture(scope="module")
def ensemble(pack_examples: list[Example]) -> EnsembleIntentClassifier:
    model = EnsembleIntentClassifier(seeds=2)
    model.fit([e.text for e in pack_examples], [e.intent for e in pack_examples])
    return model


def test_predict_agrees_with_predict_many(ensemble: EnsembleIntentClassifier) -> None:
    # The ensemble and each member: float32 features (fast path) against sklearn's transform.
    for model in (ensemble, ensemble.linear, *ensemble.mlps):
        many = model.predict_many(PROBES)
        for one, other in zip([model.predict(p) for p in PROBES], many, strict=True):
            assert one.intent == other.intent
            assert [label for label, _ in one.ranking] == [label for label, _ in other.ranking]
            np.testing.assert_allclose(
                [p for _, p in one.ranking], [p for _, p in other.ranking], rtol=1e-4, atol=1e-6
            )


def test_the_ensemble_gives_its_svm_members_prediction_alongside(
    ensemble: EnsembleIntentClassifier,
) -> None:
    for probe in PROBES:
        both, svm = ensemble.predict_with_svm(probe)
        assert both == ensemble.predict(probe)
        assert svm == ensemble.linear.predict(probe)
