"""Train an intent model from a pack's examples once, and reuse it from disk.

The model folder is keyed by a fingerprint of the training data and the classifier settings:
a changed ``nlu.jsonl`` (or another classifier kind) trains a new model; an unchanged one loads
in milliseconds. Writes go to a temporary folder renamed into place, so a crash mid-training
never leaves a half-written model that would be loaded later.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from hermes_desk.config import NluSettings
from hermes_desk.nlu.examples import Example
from hermes_desk.nlu.intent import IntentClassifier, build_classifier, load_classifier

__all__ = ["fingerprint", "load_or_train", "model_path"]

# Bumped when features or training change in a way that makes old cached models stale.
_FEATURES_VERSION = 3


def fingerprint(examples: Sequence[Example], kind: str) -> str:
    """A stable digest of the labelled texts, the classifier kind and the feature version."""
    h = hashlib.sha256()
    h.update(json.dumps({"kind": kind, "features": _FEATURES_VERSION}).encode())
    for ex in sorted(examples, key=lambda e: (e.intent, e.text)):
        h.update(b"\x00" + ex.intent.encode() + b"\x01" + ex.text.encode())
    return h.hexdigest()[:20]


def model_path(examples: Sequence[Example], kind: str, model_dir: Path) -> Path:
    return model_dir / f"intent-{kind}-{fingerprint(examples, kind)}"


def load_or_train(
    examples: Sequence[Example], settings: NluSettings, model_dir: Path
) -> IntentClassifier:
    """The classifier for ``examples``: loaded from ``model_dir`` when cached, else trained and
    saved there."""
    kind = settings.classifier
    target = model_path(examples, kind, model_dir)
    if (target / "meta.json").is_file():
        return load_classifier(target)
    classifier = build_classifier(kind)
    classifier.fit([e.text for e in examples], [e.intent for e in examples])
    model_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".training-", dir=model_dir))
    try:
        classifier.save(tmp)
        try:
            os.replace(tmp, target)
        except OSError:
            # Another process won the race and its model is as good as ours.
            if not (target / "meta.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return classifier
