"""TF-IDF features and a one-hidden-layer perceptron (softmax output), for intents.

Same features as :mod:`hermes_desk.nlu.linear`. Training is
:func:`~hermes_desk.nlu.sparse_mlp.train_sparse_mlp` (row-wise Adam over sparse rows); inference
is a sparse forward pass over float32 weights (well under a millisecond).
Its softmax probabilities separate out-of-scope queries better than the SVM's scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_desk.errors import MisuseError
from hermes_desk.nlu.calibration import softmax, softmax_row
from hermes_desk.nlu.classifier import IntentPrediction, encode_labels, load_state, save_state
from hermes_desk.nlu.features import FastFeatures, build_vectorizer
from hermes_desk.nlu.linear import rank_probabilities, rank_row
from hermes_desk.nlu.sparse_mlp import train_sparse_mlp

__all__ = ["MlpIntentClassifier"]

_MODEL_FILE = "mlp.pkl"


class MlpIntentClassifier:
    """One hidden ReLU layer over TF-IDF.

    Args:
        hidden: width of the hidden layer.
        epochs: passes over the training data (at least 60 for small packs).
        learning_rate: Adam step size.
        alpha: L2 penalty.
        seed: random seed (training is deterministic for a given seed and data).
        top_k: how many labels the ranking keeps.
    """

    kind = "mlp"

    def __init__(
        self,
        *,
        hidden: int = 256,
        epochs: int = 12,
        learning_rate: float = 2e-3,
        alpha: float = 1e-4,
        seed: int = 0,
        top_k: int = 5,
    ) -> None:
        self.hidden = hidden
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.seed = seed
        self.top_k = top_k
        self._vectorizer: Any = None
        self._classes: list[str] = []
        self._weights: list[Any] = []
        self._biases: list[Any] = []
        self._fast: Any = None

    @property
    def classes(self) -> list[str]:
        return list(self._classes)

    def fit(self, texts: Sequence[str], intents: Sequence[str]) -> None:
        import numpy as np

        classes, y = encode_labels(texts, intents)
        big = len(texts) > 2000
        vectorizer = build_vectorizer(char_min_df=3 if big else 1, word_min_df=2 if big else 1)
        x = vectorizer.fit_transform(list(texts)).astype(np.float32)
        self.fit_matrix(vectorizer, x, y, classes)

    def fit_matrix(self, vectorizer: Any, x: Any, y: Any, classes: list[str]) -> None:
        """Train on features already computed by a fitted ``vectorizer`` (label indices ``y``)."""
        big = x.shape[0] > 2000
        # Small packs need more passes to converge than large data sets.
        epochs = self.epochs if big else max(self.epochs, 60)
        self._weights, self._biases = train_sparse_mlp(
            x,
            y,
            len(classes),
            hidden=self.hidden,
            epochs=epochs,
            learning_rate=self.learning_rate,
            alpha=self.alpha,
            seed=self.seed,
        )
        self._vectorizer = vectorizer
        self._classes = classes
        self._fast = FastFeatures(vectorizer)

    def logits_fast(self, indices: Any, values: Any) -> Any:
        """Output logits of one utterance given its (indices, values) features."""
        import numpy as np

        h = np.maximum(values @ self._weights[0][indices] + self._biases[0], 0.0)
        logits = h @ self._weights[1] + self._biases[1]
        return logits

    def probabilities_one(self, text: str) -> Any:
        """Probabilities of one utterance (the fast path)."""
        if self._fast is None:
            raise MisuseError("the intent classifier is not trained: call fit or load first")
        return softmax(self.logits_fast(*self._fast(text))[None, :])[0]

    def probabilities(self, texts: Sequence[str]) -> Any:
        """Class probabilities, one row per text, columns in :attr:`classes` order."""
        import numpy as np

        if self._vectorizer is None:
            raise MisuseError("the intent classifier is not trained: call fit or load first")
        x = self._vectorizer.transform(list(texts))
        h = np.maximum(x @ self._weights[0] + self._biases[0], 0.0)
        logits = h @ self._weights[1] + self._biases[1]
        if len(self._classes) == 2:
            logits = logits / 2.0  # the doubled logistic output above
        return softmax(logits)

    def predict_many(self, texts: Sequence[str]) -> list[IntentPrediction]:
        if not texts:
            return []
        return rank_probabilities(self.probabilities(texts), self._classes, self.top_k)

    def probabilities_fast(self, indices: Any, values: Any) -> list[float]:
        """Probabilities of one utterance given its (indices, values) features."""
        return softmax_row(self.logits_fast(indices, values).tolist())

    def predict(self, text: str) -> IntentPrediction:
        if self._fast is None:
            raise MisuseError("the intent classifier is not trained: call fit or load first")
        return rank_row(self.probabilities_fast(*self._fast(text)), self._classes, self.top_k)

    def save(self, directory: Path) -> None:
        if self._vectorizer is None:
            raise MisuseError("the intent classifier is not trained: call fit or load first")
        state = {
            "options": {
                "hidden": self.hidden,
                "epochs": self.epochs,
                "learning_rate": self.learning_rate,
                "alpha": self.alpha,
                "seed": self.seed,
                "top_k": self.top_k,
            },
            "vectorizer": self._vectorizer,
            "classes": self._classes,
            "weights": self._weights,
            "biases": self._biases,
        }
        save_state(directory, self.kind, _MODEL_FILE, state)

    @classmethod
    def load(cls, directory: Path) -> MlpIntentClassifier:
        state = load_state(directory, _MODEL_FILE)
        model = cls(**state["options"])
        model._vectorizer = state["vectorizer"]
        model._classes = state["classes"]
        model._weights = state["weights"]
        model._biases = state["biases"]
        model._fast = FastFeatures(model._vectorizer)
        return model
