"""The article's intent model: a linear-chain CRF (sklearn-crfsuite) over word tokens.

Every token of an utterance is labelled with the utterance's intent; at prediction time the
per-token marginal probabilities are averaged into one distribution over intents. Kept to
measure against the default (see ``hermes_desk.bench.nlu``); needs the ``crf`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_desk.errors import MissingExtraError, MisuseError
from hermes_desk.nlu.classifier import IntentPrediction, encode_labels, load_state, save_state
from hermes_desk.nlu.features import tokens

__all__ = ["CrfIntentClassifier"]

_MODEL_FILE = "crf.pkl"


def _token_features(words: list[str], i: int) -> dict[str, Any]:
    w = words[i]
    feats: dict[str, Any] = {"bias": 1.0, "w": w, "suf3": w[-3:], "pre3": w[:3], "len": len(w)}
    feats["prev"] = words[i - 1] if i > 0 else "<s>"
    feats["next"] = words[i + 1] if i + 1 < len(words) else "</s>"
    if i > 0:
        feats["bi"] = f"{words[i - 1]}|{w}"
    # Every token sees the whole utterance, so each position can vote for the intent.
    for other in words:
        feats[f"bag={other}"] = 1.0
    return feats


def _sentence(text: str) -> list[dict[str, Any]]:
    words = tokens(text) or ["<empty>"]
    return [_token_features(words, i) for i in range(len(words))]


def _crfsuite() -> Any:
    try:
        import sklearn_crfsuite
    except ImportError as exc:
        raise MissingExtraError("the CRF intent classifier", "crf") from exc
    return sklearn_crfsuite


class CrfIntentClassifier:
    """CRF over tokens, marginals averaged per utterance.

    Args:
        c1: L1 penalty. c2: L2 penalty. max_iterations: L-BFGS iterations.
    """

    kind = "crf"

    def __init__(
        self, *, c1: float = 0.05, c2: float = 0.01, max_iterations: int = 100, top_k: int = 5
    ) -> None:
        self.c1, self.c2, self.max_iterations, self.top_k = c1, c2, max_iterations, top_k
        self._crf: Any = None
        self._classes: list[str] = []

    @property
    def classes(self) -> list[str]:
        return list(self._classes)

    def fit(self, texts: Sequence[str], intents: Sequence[str]) -> None:
        encode_labels(texts, intents)  # the same checks as every backend
        crf = _crfsuite().CRF(
            algorithm="lbfgs",
            c1=self.c1,
            c2=self.c2,
            max_iterations=self.max_iterations,
            all_possible_transitions=False,
        )
        x = [_sentence(t) for t in texts]
        y = [[label] * len(s) for s, label in zip(x, intents, strict=True)]
        crf.fit(x, y)
        self._crf = crf
        self._classes = sorted(crf.classes_)

    def predict(self, text: str) -> IntentPrediction:
        if self._crf is None:
            raise MisuseError("the intent classifier is not trained: call fit or load first")
        marginals = self._crf.predict_marginals_single(_sentence(text))
        totals = dict.fromkeys(self._classes, 0.0)
        for position in marginals:
            for label, p in position.items():
                totals[label] = totals.get(label, 0.0) + p
        n = max(len(marginals), 1)
        ranked = sorted(((k, v / n) for k, v in totals.items()), key=lambda kv: -kv[1])
        ranking = tuple(ranked[: self.top_k])
        return IntentPrediction(ranking[0][0], ranking[0][1], ranking)

    def predict_many(self, texts: Sequence[str]) -> list[IntentPrediction]:
        return [self.predict(t) for t in texts]

    def save(self, directory: Path) -> None:
        if self._crf is None:
            raise MisuseError("the intent classifier is not trained: call fit or load first")
        options = {
            "c1": self.c1,
            "c2": self.c2,
            "max_iterations": self.max_iterations,
            "top_k": self.top_k,
        }
        state = {"options": options, "crf": self._crf, "classes": self._classes}
        save_state(directory, self.kind, _MODEL_FILE, state)

    @classmethod
    def load(cls, directory: Path) -> CrfIntentClassifier:
        _crfsuite()
        state = load_state(directory, _MODEL_FILE)
        model = cls(**state["options"])
        model._crf = state["crf"]
        model._classes = state["classes"]
        return model
