"""The default intent model: the mean of the calibrated SVM's probabilities and the perceptrons'.

Measured on CLINC150 validation, the mean beats either member alone both without a threshold and
at the out-of-scope threshold (the SVM ranks in-scope intents well, the perceptron's softmax
separates out-of-scope queries better). The perceptron part is itself the mean of ``seeds``
perceptrons trained from different random starts: one perceptron's in-scope accuracy moves by
about half a point from seed to seed on CLINC150 validation, and averaging removes most of that.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_desk.errors import ConfigError, MisuseError
from hermes_desk.nlu.classifier import IntentPrediction, encode_labels, read_meta, write_meta
from hermes_desk.nlu.features import build_vectorizer
from hermes_desk.nlu.linear import LinearIntentClassifier, rank_probabilities, rank_row
from hermes_desk.nlu.mlp import MlpIntentClassifier

__all__ = ["EnsembleIntentClassifier"]


class EnsembleIntentClassifier:
    """Linear SVM + one-hidden-layer perceptrons over the same TF-IDF features.

    Args:
        c: the SVM's regularisation.
        hidden: each perceptron's hidden width.
        epochs: passes over the data per perceptron.
        seeds: how many perceptrons (random starts ``0 … seeds-1``) are averaged.
        top_k: how many labels the ranking keeps.
    """

    kind = "ensemble"

    def __init__(
        self,
        *,
        c: float = 1.0,
        hidden: int = 256,
        epochs: int = 12,
        seeds: int = 2,
        top_k: int = 5,
    ) -> None:
        if seeds < 1:
            raise ConfigError("an ensemble needs at least one perceptron (seeds >= 1)")
        self.top_k = top_k
        self.linear = LinearIntentClassifier(c=c, top_k=top_k)
        self.mlps = [
            MlpIntentClassifier(hidden=hidden, epochs=epochs, seed=seed, top_k=top_k)
            for seed in range(seeds)
        ]
        self._fast: Any = None

    @property
    def classes(self) -> list[str]:
        return self.linear.classes

    def fit(self, texts: Sequence[str], intents: Sequence[str]) -> None:
        import numpy as np

        classes, y = encode_labels(texts, intents)
        # One vectorizer for both members: features are computed once per utterance.
        vectorizer = build_vectorizer(char_min_df=2 if len(texts) > 2000 else 1)
        x = vectorizer.fit_transform(list(texts)).astype(np.float32)
        self.linear.fit_matrix(vectorizer, x, y, classes)
        for mlp in self.mlps:
            mlp.fit_matrix(vectorizer, x, y, classes)
        # The SVM member's featuriser: the turn reader's joined texts go through it, and it
        # keeps the counts of the texts featurised alone (FastFeatures.joined).
        self._fast = self.linear._fast

    def probabilities(self, texts: Sequence[str]) -> Any:
        if any(self.linear.classes != mlp.classes for mlp in self.mlps):
            raise MisuseError("ensemble members were trained on different labels")
        mlp = sum(m.probabilities(texts) for m in self.mlps) / len(self.mlps)
        return (self.linear.probabilities(texts) + mlp) / 2.0

    def predict_many(self, texts: Sequence[str]) -> list[IntentPrediction]:
        if not texts:
            return []
        return rank_probabilities(self.probabilities(texts), self.classes, self.top_k)

    def predict(self, text: str) -> IntentPrediction:
        return self.predict_with_svm(text)[0]

    def predict_with_svm(self, text: str) -> tuple[IntentPrediction, IntentPrediction]:
        """The ensemble's prediction and its SVM member's (:attr:`linear`), from one
        featurisation of ``text``: the turn reader needs both for every turn."""
        if self._fast is None:
            raise MisuseError("the intent classifier is not trained: call fit or load first")
        indices, values = self._fast(text)
        svm = self.linear.probabilities_fast(indices, values)
        # Element-wise as the array expression (svm + sum(mlps) / n) / 2 computes it.
        mlp = [0.0] * len(svm)
        for member in self.mlps:
            probs = member.probabilities_fast(indices, values)
            mlp = [a + b for a, b in zip(mlp, probs, strict=True)]
        n = len(self.mlps)
        mean = [(a + b / n) / 2.0 for a, b in zip(svm, mlp, strict=True)]
        classes = self.linear._classes
        return (
            rank_row(mean, classes, self.top_k),
            rank_row(svm, classes, self.linear.top_k),
        )

    def save(self, directory: Path) -> None:
        self.linear.save(directory / "linear")
        for i, mlp in enumerate(self.mlps):
            mlp.save(directory / _mlp_folder(i))
        write_meta(directory, self.kind, classes=self.classes, seeds=len(self.mlps))

    @classmethod
    def load(cls, directory: Path) -> EnsembleIntentClassifier:
        seeds = int(read_meta(directory).get("seeds", 1))
        model = cls(seeds=seeds)
        model.linear = LinearIntentClassifier.load(directory / "linear")
        model.mlps = [MlpIntentClassifier.load(directory / _mlp_folder(i)) for i in range(seeds)]
        model.top_k = model.linear.top_k
        model._fast = model.linear._fast
        return model


def _mlp_folder(i: int) -> str:
    # The first perceptron keeps the folder name models with a single one were saved under.
    return "mlp" if i == 0 else f"mlp-{i}"
