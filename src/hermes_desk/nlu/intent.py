"""The intent classifier boundary: one Protocol, a prediction record, a factory and a loader.

Backends live in their own modules (``linear``, ``mlp``, ``crf``) and import their heavy
dependencies lazily, so ``import hermes_desk.nlu`` stays light.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from hermes_desk.errors import ConfigError, MisuseError, NotFoundError

__all__ = [
    "CLASSIFIER_KINDS",
    "OOS",
    "IntentClassifier",
    "IntentPrediction",
    "apply_threshold",
    "build_classifier",
    "load_classifier",
]

OOS = "oos"
"""The out-of-scope label: small talk and anything no intent covers. No tool may run for it."""

CLASSIFIER_KINDS = ("ensemble", "linear", "mlp", "crf")
_META = "meta.json"


@dataclass(frozen=True, slots=True)
class IntentPrediction:
    """The classifier's answer for one utterance.

    Attributes:
        intent: the top label (may be :data:`OOS` when the model itself predicts it).
        confidence: calibrated probability of ``intent``, 0–1.
        ranking: the best labels with their probabilities, highest first.
    """

    intent: str
    confidence: float
    ranking: tuple[tuple[str, float], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "confidence": round(self.confidence, 4),
            "ranking": [[label, round(p, 4)] for label, p in self.ranking],
        }


def apply_threshold(prediction: IntentPrediction, threshold: float) -> IntentPrediction:
    """Below ``threshold`` the prediction becomes out of scope (the ranking is kept)."""
    if prediction.intent == OOS or prediction.confidence >= threshold:
        return prediction
    return IntentPrediction(OOS, prediction.confidence, prediction.ranking)


@runtime_checkable
class IntentClassifier(Protocol):
    """Text → intent with a calibrated confidence. Trained in process, saved to a folder."""

    kind: str

    def fit(self, texts: Sequence[str], intents: Sequence[str]) -> None:
        """Train on parallel lists of utterances and labels (``oos`` allowed as a label)."""
        ...

    def predict(self, text: str) -> IntentPrediction: ...

    def predict_many(self, texts: Sequence[str]) -> list[IntentPrediction]: ...

    def save(self, directory: Path) -> None:
        """Write the trained model into ``directory`` (created if needed)."""
        ...


def build_classifier(kind: str, **options: Any) -> IntentClassifier:
    """A fresh, untrained classifier of ``kind`` (``ensemble``, ``linear``, ``mlp``, ``crf``)."""
    if kind == "ensemble":
        from hermes_desk.nlu.ensemble import EnsembleIntentClassifier

        return EnsembleIntentClassifier(**options)
    if kind == "linear":
        from hermes_desk.nlu.linear import LinearIntentClassifier

        return LinearIntentClassifier(**options)
    if kind == "mlp":
        from hermes_desk.nlu.mlp import MlpIntentClassifier

        return MlpIntentClassifier(**options)
    if kind == "crf":
        from hermes_desk.nlu.crf import CrfIntentClassifier

        return CrfIntentClassifier(**options)
    raise ConfigError(f"unknown intent classifier {kind!r}; choose one of {CLASSIFIER_KINDS}")


def encode_labels(texts: Sequence[str], intents: Sequence[str]) -> tuple[list[str], Any]:
    """Check a training set and encode its labels: ``(sorted classes, label indices)``."""
    import numpy as np

    if len(texts) != len(intents) or not texts:
        raise MisuseError("fit needs as many labels as texts, and at least one of each")
    classes = sorted(set(intents))
    if len(classes) < 2:
        raise ConfigError("an intent classifier needs at least two labels")
    index = {c: i for i, c in enumerate(classes)}
    return classes, np.array([index[i] for i in intents])


def save_state(directory: Path, kind: str, filename: str, state: dict[str, Any]) -> None:
    """Pickle a backend's ``state`` (with its ``classes``) and write the meta file."""
    import pickle

    directory.mkdir(parents=True, exist_ok=True)
    with (directory / filename).open("wb") as fh:
        pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
    write_meta(directory, kind, classes=state["classes"])


def load_state(directory: Path, filename: str) -> dict[str, Any]:
    """The state :func:`save_state` wrote (only load folders you wrote: it is a pickle)."""
    import pickle

    read_meta(directory)
    with (directory / filename).open("rb") as fh:
        state: dict[str, Any] = pickle.load(fh)
    return state


def write_meta(directory: Path, kind: str, **extra: Any) -> None:
    """Record which backend wrote ``directory`` (read back by :func:`load_classifier`)."""
    directory.mkdir(parents=True, exist_ok=True)
    meta = {"kind": kind, "format": 1, **extra}
    (directory / _META).write_text(json.dumps(meta, ensure_ascii=False, indent=2), "utf-8")


def read_meta(directory: Path) -> dict[str, Any]:
    path = directory / _META
    if not path.is_file():
        raise NotFoundError(f"no trained intent model in {directory} (missing {_META})")
    meta: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return meta


def load_classifier(directory: Path) -> IntentClassifier:
    """Load a model saved by any backend's ``save``. Only load folders you wrote yourself:
    model files are pickles."""
    kind = read_meta(directory)["kind"]
    if kind == "ensemble":
        from hermes_desk.nlu.ensemble import EnsembleIntentClassifier

        return EnsembleIntentClassifier.load(directory)
    if kind == "linear":
        from hermes_desk.nlu.linear import LinearIntentClassifier

        return LinearIntentClassifier.load(directory)
    if kind == "mlp":
        from hermes_desk.nlu.mlp import MlpIntentClassifier

        return MlpIntentClassifier.load(directory)
    if kind == "crf":
        from hermes_desk.nlu.crf import CrfIntentClassifier

        return CrfIntentClassifier.load(directory)
    raise ConfigError(f"{directory}: unknown intent classifier kind {kind!r}")
