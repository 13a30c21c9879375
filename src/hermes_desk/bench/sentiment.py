"""Sentiment and alert benchmarks: accuracy on the pack's chat turns and on the public
``sentiment_zh`` reviews, latency per turn, and alert precision/recall on the pack's labelled
alert lines.

Honesty: every model trains on training data only. The pack's model trains on
``sentiment.jsonl`` (turns of the pack's dialogues) and is scored on ``sentiment_dev.jsonl``
(dialogues written apart, never trained on, but read while the lexicon was built),
``sentiment_eval.jsonl`` (written after the model was fixed, scored once; its misses have been
read since, so it is no longer held out), ``sentiment_eval2.jsonl`` (written before the
training turns that answered those misses, never trained on: the held-out figure) and by 3-fold
cross-validation on its own training turns; alert rules likewise on ``alerts_dev.jsonl`` (read
while the rules were written), ``alerts_eval.jsonl`` (written after them, its misses read since)
and ``alerts_eval2.jsonl`` (written before the rules were widened). The reviews model
trains on ``sentiment_zh/train.jsonl`` and is scored on ``test.jsonl``.
Reviews carry only positive/negative labels, so on them a model's answer is the likelier of the
two (its signed score's sign).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_desk.config import SentimentSettings
from hermes_desk.packs import load_pack
from hermes_desk.sentiment import (
    SentimentLexicon,
    SentimentModel,
    evaluate_sentiment,
    load_labelled,
    train_sentiment,
)
from hermes_desk.supervision import AlertDetector

__all__ = ["HELD_OUT", "bench_alerts", "run"]

# The pack's held-out sets, oldest first: ``sentiment_<name>.jsonl`` and ``alerts_<name>.jsonl``.
HELD_OUT = ("dev", "eval", "eval2")

_PACK = Path(__file__).resolve().parent.parent / "packs" / "ecommerce"
_DATA = Path(os.environ.get("HERMES_BENCH_DATA", "/work/shared/data"))


def _lexicon() -> SentimentLexicon:
    return SentimentLexicon.from_folder(_PACK)


def _train(
    pairs: Sequence[tuple[str, str]], *, balanced: bool, min_count: int = 1
) -> SentimentModel:
    options = SentimentSettings()
    start = time.perf_counter()
    model = train_sentiment(pairs, _lexicon(), c=options.c, balanced=balanced, min_count=min_count)
    print(f"  trained on {len(pairs)} texts in {time.perf_counter() - start:.1f} s")
    if balanced:  # the chat models, as the service runs them
        model.negative_threshold = options.negative_threshold
    return model


def _cjk(text: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" for ch in text)


def _latency(model: SentimentModel, texts: Sequence[str], rounds: int) -> dict[str, float]:
    timings: list[float] = []
    for _ in range(rounds):
        for text in texts:
            start = time.perf_counter()
            model.predict(text)
            timings.append((time.perf_counter() - start) * 1000)
    timings.sort()

    def at(q: float) -> float:
        return round(timings[min(len(timings) - 1, int(q * len(timings)))], 4)

    return {
        "calls": len(timings),
        "mean_ms": round(statistics.fmean(timings), 4),
        "p50_ms": at(0.50),
        "p95_ms": at(0.95),
        "p99_ms": at(0.99),
    }


def _pack_figures(model: SentimentModel, rounds: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    texts: list[str] = []
    for name in HELD_OUT:
        path = _PACK / f"sentiment_{name}.jsonl"
        if not path.is_file():
            continue
        held_out = load_labelled(path)
        texts += [t for t, _ in held_out]
        figures[name] = evaluate_sentiment(model, held_out).to_dict()
        for language, keep in (("zh", True), ("en", False)):
            part = [(t, g) for t, g in held_out if _cjk(t) == keep]
            figures[f"{name}_{language}"] = evaluate_sentiment(model, part).to_dict()
    figures["latency_chat_turns"] = _latency(model, texts, rounds)
    return figures


def _cross_validated(pairs: list[tuple[str, str]], folds: int = 3) -> dict[str, Any]:
    """Each pack turn scored by a model that did not train on it (3 folds, fixed shuffle)."""
    order = list(range(len(pairs)))
    random.Random(0).shuffle(order)
    correct = total = 0
    negatives = {"tp": 0, "fp": 0, "fn": 0}
    for k in range(folds):
        test = set(order[k::folds])
        model = _train([pairs[i] for i in order if i not in test], balanced=True)
        report = evaluate_sentiment(model, [pairs[i] for i in sorted(test)])
        correct += report.correct
        total += report.total
        row = report.confusion.get("negative", {})
        negatives["tp"] += row.get("negative", 0)
        negatives["fn"] += sum(n for p, n in row.items() if p != "negative")
        negatives["fp"] += sum(
            r.get("negative", 0) for g, r in report.confusion.items() if g != "negative"
        )
    tp, fp, fn = negatives["tp"], negatives["fp"], negatives["fn"]
    return {
        "turns": total,
        "accuracy": round(correct / total, 4),
        "negative_precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
        "negative_recall": round(tp / (tp + fn), 4) if tp + fn else 0.0,
    }


def bench_alerts() -> dict[str, Any]:
    """Precision and recall of the pack's alert rules on ``alerts_dev.jsonl``,
    ``alerts_eval.jsonl`` and ``alerts_eval2.jsonl`` (lines, each with the alert kinds it should
    raise)."""
    detector = AlertDetector(load_pack(_PACK).compliance.alerts)
    return {
        name: _alert_figures(detector, _PACK / f"alerts_{name}.jsonl")
        for name in HELD_OUT
        if (_PACK / f"alerts_{name}.jsonl").is_file()
    }


def _alert_figures(detector: AlertDetector, path: Path) -> dict[str, Any]:
    counts: dict[str, dict[str, int]] = {}
    misses: list[dict[str, Any]] = []
    lines = 0
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        row = json.loads(raw)
        lines += 1
        if row["speaker"] == "agent":
            found = detector.agent_line(row["text"], 0, waiting_for=row.get("waiting_for"))
        else:
            found = detector.customer_line(row["text"], 0)
        got = {a.kind for a in found}
        want = set(row["alerts"])
        for kind in got | want:
            c = counts.setdefault(kind, {"tp": 0, "fp": 0, "fn": 0})
            c["tp" if kind in got and kind in want else "fp" if kind in got else "fn"] += 1
        if got != want:
            misses.append({"text": row["text"], "want": sorted(want), "got": sorted(got)})
    per_kind = {}
    for kind, c in sorted(counts.items()):
        per_kind[kind] = {
            "precision": round(c["tp"] / (c["tp"] + c["fp"]), 4) if c["tp"] + c["fp"] else 0.0,
            "recall": round(c["tp"] / (c["tp"] + c["fn"]), 4) if c["tp"] + c["fn"] else 0.0,
            "support": c["tp"] + c["fn"],
        }
    tp = sum(c["tp"] for c in counts.values())
    fp = sum(c["fp"] for c in counts.values())
    fn = sum(c["fn"] for c in counts.values())
    return {
        "lines": lines,
        "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 0.0,
        "per_kind": per_kind,
        "misses": misses,
    }


def run(
    data_dir: Path | None = None,
    *,
    reviews: bool = True,
    combined: bool = False,
    rounds: int = 20,
) -> dict[str, Any]:
    """All sentiment figures (see the module docstring), and the alert figures."""
    data_dir = data_dir or _DATA
    figures: dict[str, Any] = {}
    pack_pairs = load_labelled(_PACK / "sentiment.jsonl")
    print(f"pack model (shipped settings) on {len(pack_pairs)} labelled pack turns")
    pack_model = _train(pack_pairs, balanced=SentimentSettings().balanced)
    figures["pack_model"] = _pack_figures(pack_model, rounds)
    print("pack turns, 3-fold cross-validation")
    figures["pack_model"]["cross_validated"] = _cross_validated(pack_pairs)
    if reviews:
        folder = data_dir / "sentiment_zh"
        test = load_labelled(folder / "test.jsonl")
        figures["pack_model"]["reviews_test"] = evaluate_sentiment(
            pack_model, test, binary=True
        ).to_dict()
        print(f"reviews model on {folder / 'train.jsonl'}")
        review_model = _train(load_labelled(folder / "train.jsonl"), balanced=False, min_count=2)
        figures["reviews_model"] = {
            "reviews_test": evaluate_sentiment(review_model, test, binary=True).to_dict(),
            "features": len(review_model.weights),
            "latency_reviews": _latency(review_model, [t for t, _ in test[:500]], 1),
            "latency_chat_turns": _latency(
                review_model, [t for t, _ in load_labelled(_PACK / "sentiment_dev.jsonl")], rounds
            ),
        }
        if combined:
            limit = SentimentSettings().extra_limit
            extra = load_labelled(folder / "train.jsonl", limit=limit)
            print(f"pack turns + the first {limit} reviews (sentiment.extra_corpus)")
            both = _train(pack_pairs + extra, balanced=True)
            figures["pack_plus_reviews_model"] = _pack_figures(both, rounds) | {
                "reviews_test": evaluate_sentiment(both, test, binary=True).to_dict()
            }
    figures["alerts"] = bench_alerts()
    return figures
