"""Train a pack's intent model (classifier + context model) once, and reuse it from disk.

The model folder is keyed by a fingerprint of the training data and the settings: a changed
``nlu.jsonl`` or ``dialogues*.jsonl`` (or another classifier kind) trains a new model; an
unchanged one loads in milliseconds. Writes go to a temporary folder renamed into place, so a
crash mid-training never leaves a half-written model that would be loaded later.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from hermes_desk.config import NluSettings
from hermes_desk.nlu.context import ContextModel, TurnReader, train_turn_reader
from hermes_desk.nlu.examples import Conversation, Example
from hermes_desk.nlu.intent import load_classifier

__all__ = ["fingerprint", "load_or_train", "model_path"]

_logger = logging.getLogger(__name__)

# Bumped when features or training change in a way that makes old cached models stale.
_FEATURES_VERSION = 9  # 8: long numbers featurised by their length only; 9: "it is …" and
# "… is the order" read as only a number (the context model's slot-only feature)


def fingerprint(
    examples: Sequence[Example],
    kind: str,
    dialogues: Sequence[Conversation] = (),
    settings: NluSettings | None = None,
) -> str:
    """A stable digest of the labelled texts and dialogues, the classifier kind, the context
    model settings and the feature version."""
    h = hashlib.sha256()
    config: dict[str, object] = {"kind": kind, "features": _FEATURES_VERSION}
    if settings is not None and dialogues:
        config |= {"context": settings.context_model, "folds": settings.context_folds}
    h.update(json.dumps(config).encode())
    for ex in sorted(examples, key=lambda e: (e.intent, e.text)):
        h.update(b"\x00" + ex.intent.encode() + b"\x01" + ex.text.encode())
    for conv in dialogues:
        h.update(b"\x02" + conv.id.encode())
        for turn in conv.turns:
            h.update(b"\x00" + turn.intent.encode() + b"\x01" + turn.text.encode())
    return h.hexdigest()[:20]


def model_path(
    examples: Sequence[Example],
    settings: NluSettings,
    model_dir: Path,
    dialogues: Sequence[Conversation] = (),
) -> Path:
    kind = settings.classifier
    return model_dir / f"intent-{kind}-{fingerprint(examples, kind, dialogues, settings)}"


def load_or_train(
    examples: Sequence[Example],
    settings: NluSettings,
    model_dir: Path,
    *,
    dialogues: Sequence[Conversation] = (),
) -> TurnReader:
    """The intent model for ``examples`` and ``dialogues``: loaded from ``model_dir`` when
    cached, else trained and saved there."""
    target = model_path(examples, settings, model_dir, dialogues)
    if (target / "meta.json").is_file():
        return TurnReader(load_classifier(target), ContextModel.load(target))
    _logger.info(
        "training the intent model on %d utterances and %d dialogues (once per pack version; "
        "later starts load it from %s) …",
        len(examples),
        len(dialogues),
        model_dir,
    )
    started = time.perf_counter()
    reader = train_turn_reader(
        examples,
        dialogues,
        settings.classifier,
        folds=settings.context_folds,
        context=settings.context_model,
        progress=_ProgressLog(started),
    )
    model_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".training-", dir=model_dir))
    try:
        if reader.context is not None:
            reader.context.save(tmp)
        reader.classifier.save(tmp)
        try:
            os.replace(tmp, target)
        except OSError:
            # Another process won the race and its model is as good as ours.
            if not (target / "meta.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _logger.info(
        "intent model trained in %.0f s, cached in %s", time.perf_counter() - started, target
    )
    return reader


class _ProgressLog:
    """Logs a text progress bar after each training step, with the time left extrapolated
    from the time the steps done so far took (no figure is promised before the first step)."""

    def __init__(self, started: float, width: int = 20) -> None:
        self._started = started
        self._width = width

    def __call__(self, share: float) -> None:
        elapsed = time.perf_counter() - self._started
        filled = round(share * self._width)
        bar = "#" * filled + "-" * (self._width - filled)
        left = elapsed * (1 - share) / share if share > 0 else 0.0
        tail = "done" if share >= 1 else f"about {left:.0f} s left"
        _logger.info("training the intent model [%s] %3.0f %% · %.0f s · %s", bar, share * 100,
                     elapsed, tail)  # fmt: skip
