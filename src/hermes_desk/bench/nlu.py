"""NLU benchmarks: CLINC150, BANKING77, the ecommerce pack's held-out set and five-turn
conversations, for the default classifier and the CRF. Each function returns a dict of figures
(fractions 0–1, latency in ms per utterance) and prints progress.

Honesty: models train on ``train`` only. CLINC150's out-of-scope threshold is chosen on its
``validation`` split by the rule fixed in :mod:`hermes_desk.nlu.threshold` (the largest threshold
whose validation in-scope accuracy is >= 91%), never on ``test``; test sets are scored once, at no
threshold, at that chosen threshold and at the shipped pack setting (``nlu.oos_threshold``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hermes_desk.config import NluSettings
from hermes_desk.nlu.classifier import IntentClassifier, apply_threshold
from hermes_desk.nlu.context import TurnReader, train_turn_reader
from hermes_desk.nlu.evaluate import evaluate_conversation_modes, score_predictions
from hermes_desk.nlu.examples import Conversation, Example, load_conversations, load_examples
from hermes_desk.nlu.intent import build_classifier
from hermes_desk.nlu.threshold import DEFAULT_MIN_IN_SCOPE, choose_threshold

__all__ = ["bench_banking77", "bench_clinc150", "bench_pack", "run"]

SHIPPED_THRESHOLD = NluSettings().oos_threshold
_PACK = Path(__file__).resolve().parent.parent / "packs" / "ecommerce"
# Public evaluation data (clinc150/, banking77/ as {text, intent} JSONL); override per call.
_DATA = Path(os.environ.get("HERMES_BENCH_DATA", "/work/shared/data"))


def _train(kind: str, examples: Sequence[Example], options: dict[str, Any]) -> IntentClassifier:
    clf = build_classifier(kind, **options)
    start = time.perf_counter()
    clf.fit([e.text for e in examples], [e.intent for e in examples])
    print(f"  trained {kind} on {len(examples)} examples in {time.perf_counter() - start:.1f} s")
    return clf


def _latency(clf: IntentClassifier, texts: Sequence[str], n: int = 500) -> dict[str, float]:
    sample = list(texts[:n])
    for t in sample[:5]:
        clf.predict(t)
    times = []
    for t in sample:
        start = time.perf_counter()
        clf.predict(t)
        times.append((time.perf_counter() - start) * 1000.0)
    times.sort()
    return {"p50": times[len(times) // 2], "p95": times[int(0.95 * (len(times) - 1))]}


def _turn_latency(reader: TurnReader, conversations: Sequence[Conversation]) -> dict[str, float]:
    """Per customer turn, as the turn pipeline reads it: ``TurnReader.read`` in a conversation."""
    from hermes_desk.nlu.state import DialogueState

    times: list[float] = []
    for conv in conversations:
        state = DialogueState(threshold=SHIPPED_THRESHOLD)
        for turn in conv.turns:
            start = time.perf_counter()
            reader.read(turn.text, state)
            times.append((time.perf_counter() - start) * 1000.0)
    times.sort()
    return {"p50": times[len(times) // 2], "p95": times[int(0.95 * (len(times) - 1))]}


def _score(clf: IntentClassifier, test: Sequence[Example], thresholds: Sequence[float]) -> Any:
    preds = clf.predict_many([e.text for e in test])
    gold = [e.intent for e in test]
    out: dict[str, Any] = {}
    for th in thresholds:
        labels = [apply_threshold(p, th).intent for p in preds]
        r = score_predictions(gold, labels, threshold=th)
        out[f"threshold_{th}"] = {
            "accuracy": r.accuracy,
            "in_scope_accuracy": r.in_scope_accuracy,
            "macro_f1": r.macro_f1,
            "oos_recall": r.oos_recall,
        }
        print(f"  threshold {th}: {out[f'threshold_{th}']}")
    return out


def bench_clinc150(
    kind: str = "ensemble",
    data_dir: Path = _DATA,
    *,
    min_in_scope: float = DEFAULT_MIN_IN_SCOPE,
    **options: Any,
) -> Any:
    """Train on ``train``; choose the threshold on ``validation``; score ``test`` once."""
    print(f"CLINC150 ({kind}): train → validation (threshold rule) → test")
    d = data_dir / "clinc150"
    clf = _train(kind, load_examples(d / "train.jsonl"), options)
    choice = choose_threshold(
        clf, load_examples(d / "validation.jsonl"), min_in_scope_accuracy=min_in_scope
    )
    print(f"  validation: chose {choice.threshold} ({choice.rule})")
    for th, acc, oos in choice.curve:
        print(f"    {th:.2f}: in-scope {acc:.4f}, oos recall {oos}")
    test = load_examples(d / "test.jsonl")
    figures = _score(clf, test, sorted({0.0, choice.threshold, SHIPPED_THRESHOLD}))
    figures["chosen_threshold"] = choice.threshold
    figures["validation"] = choice.to_dict()
    figures["latency_ms"] = _latency(clf, [e.text for e in test])
    return figures


def bench_banking77(kind: str = "ensemble", data_dir: Path = _DATA, **options: Any) -> Any:
    print(f"BANKING77 ({kind}): train → test")
    d = data_dir / "banking77"
    clf = _train(kind, load_examples(d / "train.jsonl"), options)
    test = load_examples(d / "test.jsonl")
    figures = _score(clf, test, [0.0])
    figures["latency_ms"] = _latency(clf, [e.text for e in test])
    return figures


def bench_pack(kind: str = "ensemble", pack_dir: Path = _PACK) -> Any:
    """The shipped pack model (``nlu.jsonl`` + ``dialogues*.jsonl``) on the pack's evaluation
    sets: single utterances (``nlu_heldout.jsonl``) and five-turn conversations, read with the
    context model, with the dialogue state's rules alone, and by the classifier alone."""
    print(f"ecommerce pack ({kind}): nlu.jsonl + dialogues*.jsonl → evaluation sets")
    from hermes_desk.packs import load_pack

    examples, dialogues = load_pack(pack_dir).training_data()
    conversation_sets = {
        path: load_conversations(path) for path in sorted(pack_dir.glob("conversations*.jsonl"))
    }
    start = time.perf_counter()
    reader = train_turn_reader(examples, dialogues, kind)
    print(
        f"  trained {kind} on {len(examples)} utterances + {len(dialogues)} dialogues "
        f"(context model: {reader.context is not None}) in {time.perf_counter() - start:.1f} s"
    )
    clf = reader.classifier
    figures: dict[str, Any] = {"training_s": time.perf_counter() - start}
    heldout = pack_dir / "nlu_heldout.jsonl"
    if heldout.is_file():
        figures["heldout"] = _score(clf, load_examples(heldout), [0.0, SHIPPED_THRESHOLD])
        figures["latency_ms"] = _latency(clf, [e.text for e in load_examples(heldout)])
    figures["turn_latency_ms"] = _turn_latency(
        reader, [c for convs in conversation_sets.values() for c in convs]
    )
    print(
        f"  a turn read in context (classifier twice + context model): {figures['turn_latency_ms']}"
    )
    for path, convs in conversation_sets.items():
        modes = evaluate_conversation_modes(reader, convs, threshold=SHIPPED_THRESHOLD)
        for mode, r in modes.items():
            figures[f"{path.stem}_{mode}"] = r.to_dict()
            turns = " / ".join(f"{a:.1%}" for a in r.per_turn_accuracy)
            print(f"  {path.name} ({mode}): {turns} (all {r.accuracy:.1%})")
    return figures


def run(
    kinds: Sequence[str] = ("ensemble", "linear", "crf"),
    data_dir: Path = _DATA,
    *,
    include_public: bool = True,
    min_in_scope: float = DEFAULT_MIN_IN_SCOPE,
) -> dict[str, Any]:
    """Every NLU figure for each classifier kind: ``{kind: {"pack", "clinc150", "banking77"}}``.

    Args:
        kinds: classifier kinds to measure (``ensemble``, ``linear``, ``mlp``, ``crf``).
        data_dir: folder holding ``clinc150/`` and ``banking77/`` (``{text, intent}`` JSONL).
        include_public: False measures the pack only (no public data needed).
        min_in_scope: the CLINC150 threshold rule's validation in-scope accuracy floor.
    """
    out: dict[str, Any] = {}
    for kind in kinds:
        figures: dict[str, Any] = {"pack": bench_pack(kind)}
        if include_public:
            figures["clinc150"] = bench_clinc150(kind, data_dir, min_in_scope=min_in_scope)
            figures["banking77"] = bench_banking77(kind, data_dir)
        out[kind] = figures
    return out
