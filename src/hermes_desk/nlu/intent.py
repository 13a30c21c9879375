"""Intent classifier kinds: one table mapping each kind to its backend, a factory and a loader.

Adding a kind is one row in :data:`CLASSIFIERS`. The backends import their heavy dependencies
(sklearn, sklearn-crfsuite, jieba) only when they train or predict, so importing this module
stays light. The boundary itself (Protocol, prediction record, ``oos``) lives in
:mod:`hermes_desk.nlu.classifier` and is re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from hermes_desk.errors import ConfigError
from hermes_desk.nlu.classifier import (
    OOS,
    IntentClassifier,
    IntentPrediction,
    apply_threshold,
    read_meta,
)
from hermes_desk.nlu.crf import CrfIntentClassifier
from hermes_desk.nlu.ensemble import EnsembleIntentClassifier
from hermes_desk.nlu.linear import LinearIntentClassifier
from hermes_desk.nlu.mlp import MlpIntentClassifier

__all__ = [
    "CLASSIFIERS",
    "CLASSIFIER_KINDS",
    "OOS",
    "ClassifierKind",
    "IntentClassifier",
    "IntentPrediction",
    "apply_threshold",
    "build_classifier",
    "load_classifier",
]


@dataclass(frozen=True, slots=True)
class ClassifierKind:
    """How to make a fresh classifier of one kind and how to load a saved one."""

    build: Callable[..., IntentClassifier]
    load: Callable[[Path], IntentClassifier]


CLASSIFIERS: Mapping[str, ClassifierKind] = MappingProxyType(
    {
        "ensemble": ClassifierKind(EnsembleIntentClassifier, EnsembleIntentClassifier.load),
        "linear": ClassifierKind(LinearIntentClassifier, LinearIntentClassifier.load),
        "mlp": ClassifierKind(MlpIntentClassifier, MlpIntentClassifier.load),
        "crf": ClassifierKind(CrfIntentClassifier, CrfIntentClassifier.load),
    }
)
"""Every classifier kind, the default (``ensemble``) first."""

CLASSIFIER_KINDS: tuple[str, ...] = tuple(CLASSIFIERS)


def build_classifier(kind: str, **options: Any) -> IntentClassifier:
    """A fresh, untrained classifier of ``kind`` (one of :data:`CLASSIFIER_KINDS`)."""
    entry = CLASSIFIERS.get(kind)
    if entry is None:
        raise ConfigError(f"unknown intent classifier {kind!r}; choose one of {CLASSIFIER_KINDS}")
    return entry.build(**options)


def load_classifier(directory: Path) -> IntentClassifier:
    """Load a model saved by any backend's ``save``. Only load folders you wrote yourself:
    model files are pickles."""
    kind = read_meta(directory)["kind"]
    entry = CLASSIFIERS.get(kind)
    if entry is None:
        raise ConfigError(f"{directory}: unknown intent classifier kind {kind!r}")
    return entry.load(directory)
