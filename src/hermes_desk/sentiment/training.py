"""Train a sentiment model on labelled turns, once, and reuse it from disk.

Labelled data are JSON lines in one of two shapes: a dialogue ``{"id", "turns": [{"text",
"sentiment"}]}`` (a pack's ``sentiment.jsonl``) or a flat ``{"text", "label"}`` line (review
corpora such as ``sentiment_zh``). The model file is keyed by a fingerprint of the data, the
lexicon, the settings and the feature version, and written to a temporary file renamed into
place, like the intent model. sklearn is imported only to train.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_desk.errors import ConfigError
from hermes_desk.sentiment.lexicon import SentimentLexicon
from hermes_desk.sentiment.model import (
    FEATURES_VERSION,
    LABELS,
    SentimentModel,
    sentiment_features,
)

__all__ = ["LabelledText", "load_labelled", "load_or_train_sentiment", "train_sentiment"]

_logger = logging.getLogger(__name__)

LabelledText = tuple[str, str]


def load_labelled(path: Path, *, limit: int | None = None) -> list[LabelledText]:
    """``(text, label)`` pairs from a JSONL file of dialogues or flat lines (see above)."""
    pairs: list[LabelledText] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read labelled sentiment data {path}: {exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{path}:{number}: not JSON ({exc})") from exc
        turns = row.get("turns") if isinstance(row, dict) else None
        items = turns if isinstance(turns, list) else [row]
        for item in items:
            text = item.get("text") if isinstance(item, dict) else None
            label = (item.get("sentiment") or item.get("label")) if isinstance(item, dict) else None
            if not isinstance(text, str) or label not in LABELS:
                raise ConfigError(
                    f"{path}:{number}: each turn needs a text and a sentiment in {list(LABELS)}"
                )
            pairs.append((text, label))
        if limit is not None and len(pairs) >= limit:
            return pairs[:limit]
    return pairs


def train_sentiment(
    pairs: Sequence[LabelledText],
    lexicon: SentimentLexicon,
    *,
    c: float = 4.0,
    balanced: bool = True,
    min_count: int = 1,
) -> SentimentModel:
    """A logistic regression over :func:`~hermes_desk.sentiment.model.sentiment_features`.

    ``balanced`` weighs classes by their inverse frequency (chat is mostly neutral; a missed
    negative turn costs more than a neutral one shown as negative). Features seen in fewer than
    ``min_count`` texts are dropped (for large corpora)."""
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    labels = sorted({label for _, label in pairs}, key=LABELS.index)
    if len(labels) < 2:
        raise ConfigError("sentiment training data need at least two labels")
    rows = [sentiment_features(text, lexicon) for text, _ in pairs]
    if min_count > 1:
        counts: dict[str, int] = {}
        for row in rows:
            for key in row:
                counts[key] = counts.get(key, 0) + 1
        rows = [{k: v for k, v in row.items() if counts[k] >= min_count} for row in rows]
    vectorizer = DictVectorizer()
    x = vectorizer.fit_transform(rows)
    y = [label for _, label in pairs]
    model = LogisticRegression(
        C=c, class_weight="balanced" if balanced else None, max_iter=2000, tol=1e-4
    )
    model.fit(x, y)
    names = vectorizer.get_feature_names_out()
    classes = [str(k) for k in model.classes_]
    coef = model.coef_
    intercept = model.intercept_
    if len(classes) == 2:
        # A binary model has one weight vector; split it in two so every model reads alike.
        weights: dict[str, list[float]] = {
            str(name): [-w / 2, w / 2] for name, w in zip(names, coef[0].tolist(), strict=True)
        }
        bias = [-float(intercept[0]) / 2, float(intercept[0]) / 2]
    else:
        columns = coef.T.tolist()
        weights = {str(name): col for name, col in zip(names, columns, strict=True)}
        bias = [float(b) for b in intercept]
    weights = {k: v for k, v in weights.items() if any(abs(w) >= 1e-4 for w in v)}
    info = {"trained_on": len(pairs), "labels": {k: y.count(k) for k in classes}, "c": c}
    return SentimentModel(classes=classes, weights=weights, bias=bias, lexicon=lexicon, info=info)


def fingerprint(pairs: Sequence[LabelledText], lexicon: SentimentLexicon, **config: Any) -> str:
    h = hashlib.sha256()
    h.update(json.dumps({"features": FEATURES_VERSION, **config}, sort_keys=True).encode())
    h.update(json.dumps(lexicon.to_dict(), ensure_ascii=False, sort_keys=True).encode())
    for text, label in pairs:
        h.update(b"\x00" + label.encode() + b"\x01" + text.encode())
    return h.hexdigest()[:20]


def load_or_train_sentiment(
    pairs: Sequence[LabelledText],
    lexicon: SentimentLexicon,
    model_dir: Path,
    *,
    c: float = 4.0,
    balanced: bool = True,
    min_count: int = 1,
) -> SentimentModel:
    """The model for ``pairs``: loaded from ``model_dir`` when cached, else trained and saved."""
    config = {"c": c, "balanced": balanced, "min_count": min_count}
    target = model_dir / f"sentiment-{fingerprint(pairs, lexicon, **config)}.json"
    if target.is_file():
        try:
            return SentimentModel.load(target)
        except ConfigError:
            _logger.warning("cached sentiment model %s is unreadable; training again", target)
    started = time.perf_counter()
    model = train_sentiment(pairs, lexicon, c=c, balanced=balanced, min_count=min_count)
    model_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".sentiment-", suffix=".json", dir=model_dir)
    os.close(fd)
    try:
        model.save(Path(tmp))
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)
    _logger.info(
        "sentiment model trained on %d turns in %.1f s, cached in %s",
        len(pairs),
        time.perf_counter() - started,
        target,
    )
    return model
