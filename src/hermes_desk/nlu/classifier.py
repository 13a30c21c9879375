"""The intent classifier boundary: one Protocol, a prediction record and the helpers every
backend shares (label encoding, the model folder's files).

Backends (``linear``, ``mlp``, ``ensemble``, ``crf``) import from here and import their heavy
dependencies lazily; :mod:`hermes_desk.nlu.intent` maps each kind to its backend. This module
imports no backend, so the imports inside ``nlu/`` flow one way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from hermes_desk.errors import ConfigError, MisuseError, NotFoundError

__all__ = [
    "OOS",
    "IntentClassifier",
    "IntentPrediction",
    "apply_threshold",
    "encode_labels",
    "load_state",
    "read_meta",
    "save_state",
    "training_threads",
    "write_meta",
]

OOS = "oos"
"""The out-of-scope label: small talk and anything no intent covers. No tool may run for it."""

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


@contextmanager
def training_threads() -> Iterator[None]:
    """Train with one BLAS/OpenMP thread. The matrices are small: on a busy two-core machine
    threads waiting for a core made one logistic-regression fit 70 times slower (45 s against
    0.65 s). threadpoolctl limits only loaded libraries, so sklearn's are loaded first."""
    import sklearn.linear_model
    import sklearn.svm  # noqa: F401
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    with threadpool_limits(limits=1):
        yield
