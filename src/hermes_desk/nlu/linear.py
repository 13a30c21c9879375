"""TF-IDF (word 1–2-grams + char_wb 1–5-grams) and a linear SVM, with calibrated confidence.

The SVM's one-vs-rest scores become probabilities through a softmax whose temperature is fitted
on out-of-fold scores of the training data (no extra data needed). ``oos`` training examples,
when present, are an ordinary class; the out-of-scope threshold is applied by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_desk.errors import MisuseError
from hermes_desk.nlu.calibration import calibrated_temperature, softmax, softmax_row
from hermes_desk.nlu.classifier import IntentPrediction, encode_labels, load_state, save_state
from hermes_desk.nlu.features import FastFeatures, build_vectorizer

__all__ = ["LinearIntentClassifier", "rank_probabilities", "rank_row"]

_MODEL_FILE = "linear.pkl"


class LinearIntentClassifier:
    """Linear SVM over TF-IDF features.

    Args:
        c: SVM regularisation (larger fits the training data more closely).
        top_k: how many labels :attr:`IntentPrediction.ranking` keeps.
    """

    kind = "linear"

    def __init__(self, *, c: float = 1.0, top_k: int = 5) -> None:
        self.c = c
        self.top_k = top_k
        self.temperature = 1.0
        self._vectorizer: Any = None
        self._classes: list[str] = []
        self._coef_t: Any = None
        self._intercept: Any = None
        self._fast: Any = None

    @property
    def classes(self) -> list[str]:
        return list(self._classes)

    def _svm(self) -> Any:
        from sklearn.svm import LinearSVC

        # liblinear visits the samples in a random order; a fixed seed makes training repeatable
        # (unseeded, two trainings on the same data disagreed on borderline utterances).
        return LinearSVC(C=self.c, random_state=0)

    def fit(self, texts: Sequence[str], intents: Sequence[str]) -> None:
        classes, y = encode_labels(texts, intents)
        vectorizer = build_vectorizer(char_min_df=2 if len(texts) > 2000 else 1)
        x = vectorizer.fit_transform(list(texts))
        self.fit_matrix(vectorizer, x, y, classes)

    def fit_matrix(self, vectorizer: Any, x: Any, y: Any, classes: list[str]) -> None:
        """Train on features already computed by a fitted ``vectorizer`` (label indices ``y``)."""
        import numpy as np

        def fit_scores(x_train: Any, y_train: Any, x_test: Any) -> Any:
            return self._svm().fit(x_train, y_train).decision_function(x_test)

        self.temperature = calibrated_temperature(fit_scores, x, y, classes)
        svm = self._svm().fit(x, y)
        self._vectorizer = vectorizer
        self._classes = classes
        self._coef_t = np.ascontiguousarray(svm.coef_.T, dtype=np.float32)
        self._intercept = svm.intercept_.astype(np.float32)
        self._fast = FastFeatures(vectorizer)

    def scores_fast(self, indices: Any, values: Any) -> Any:
        """Raw SVM scores of one utterance given its (indices, values) features."""
        return values @ self._coef_t[indices] + self._intercept

    def probabilities_fast(self, indices: Any, values: Any) -> list[float]:
        """Calibrated probabilities of one utterance given its (indices, values) features."""
        return softmax_row(self.scores_fast(indices, values).tolist(), self.temperature)

    def probabilities_one(self, text: str) -> Any:
        """Calibrated probabilities of one utterance (the fast path)."""
        self._check()
        return softmax(self.scores_fast(*self._fast(text))[None, :], self.temperature)[0]

    def _check(self) -> None:
        if self._vectorizer is None:
            raise MisuseError("the intent classifier is not trained: call fit or load first")

    def probabilities(self, texts: Sequence[str]) -> Any:
        """Calibrated class probabilities, one row per text, columns in :attr:`classes` order."""
        self._check()
        x = self._vectorizer.transform(list(texts))
        scores = x @ self._coef_t + self._intercept
        return softmax(scores, self.temperature)

    def predict_many(self, texts: Sequence[str]) -> list[IntentPrediction]:
        if not texts:
            return []
        return _rank(self.probabilities(texts), self._classes, self.top_k)

    def predict(self, text: str) -> IntentPrediction:
        self._check()
        return rank_row(self.probabilities_fast(*self._fast(text)), self._classes, self.top_k)

    def save(self, directory: Path) -> None:
        self._check()
        state = {
            "c": self.c,
            "top_k": self.top_k,
            "temperature": self.temperature,
            "vectorizer": self._vectorizer,
            "classes": self._classes,
            "coef_t": self._coef_t,
            "intercept": self._intercept,
        }
        save_state(directory, self.kind, _MODEL_FILE, state)

    @classmethod
    def load(cls, directory: Path) -> LinearIntentClassifier:
        state = load_state(directory, _MODEL_FILE)
        model = cls(c=state["c"], top_k=state["top_k"])
        model.temperature = state["temperature"]
        model._vectorizer = state["vectorizer"]
        model._classes = state["classes"]
        model._coef_t = state["coef_t"]
        model._intercept = state["intercept"]
        model._fast = FastFeatures(model._vectorizer)
        return model


def _rank(probabilities: Any, classes: Sequence[str], top_k: int) -> list[IntentPrediction]:
    """One prediction per row of a probability matrix."""
    import numpy as np

    k = min(top_k, len(classes))
    order = np.argsort(-probabilities, axis=1)[:, :k]
    out: list[IntentPrediction] = []
    for row, idx in zip(probabilities, order, strict=True):
        ranking = tuple((classes[int(i)], float(row[int(i)])) for i in idx)
        out.append(IntentPrediction(ranking[0][0], ranking[0][1], ranking))
    return out


rank_probabilities = _rank


def rank_row(
    probabilities: Sequence[float], classes: Sequence[str], top_k: int
) -> IntentPrediction:
    """The prediction of one row of probabilities (:func:`rank_probabilities` for a single
    utterance, without numpy). Equal probabilities keep the class order, as a stable argsort
    would; the models' probabilities are never exactly equal in practice."""
    order = sorted(range(len(classes)), key=probabilities.__getitem__, reverse=True)
    ranking = tuple((classes[i], probabilities[i]) for i in order[: min(top_k, len(classes))])
    return IntentPrediction(ranking[0][0], ranking[0][1], ranking)
