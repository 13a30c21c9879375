"""Measuring an intent classifier: accuracy, in-scope accuracy, macro-F1, per-intent P/R/F1,
out-of-scope recall, top confusions and per-utterance latency; and turn-by-turn accuracy of
scripted conversations run through the dialogue state.

Latency is measured one utterance at a time (as the turn pipeline calls it) with
``time.perf_counter``; it is a measurement, never asserted on.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_desk.nlu.classifier import OOS, IntentClassifier, apply_threshold
from hermes_desk.nlu.context import TurnReader
from hermes_desk.nlu.examples import Conversation, Example

__all__ = [
    "ConversationReport",
    "EvaluationReport",
    "IntentScore",
    "evaluate",
    "evaluate_conversation_modes",
    "evaluate_conversations",
    "score_predictions",
]

Progress = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class IntentScore:
    precision: float
    recall: float
    f1: float
    support: int


@dataclass(frozen=True, slots=True)
class EvaluationReport:
    """Figures are fractions 0–1; latency in milliseconds per utterance."""

    n: int
    threshold: float
    accuracy: float
    in_scope_accuracy: float
    macro_f1: float
    oos_recall: float | None
    per_intent: dict[str, IntentScore]
    confusions: list[tuple[str, str, int]]
    latency_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "threshold": self.threshold,
            "accuracy": self.accuracy,
            "in_scope_accuracy": self.in_scope_accuracy,
            "macro_f1": self.macro_f1,
            "oos_recall": self.oos_recall,
            "latency_ms": self.latency_ms,
            "per_intent": {
                k: {"precision": v.precision, "recall": v.recall, "f1": v.f1, "support": v.support}
                for k, v in self.per_intent.items()
            },
            "confusions": [
                {"expected": e, "predicted": p, "count": c} for e, p, c in self.confusions
            ],
        }


def _ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


def score_predictions(
    gold: Sequence[str],
    predicted: Sequence[str],
    *,
    threshold: float = 0.0,
    latencies_ms: Sequence[float] = (),
    top_confusions: int = 10,
) -> EvaluationReport:
    """Scores for parallel lists of gold and predicted labels.

    Macro-F1 averages every label seen in ``gold`` (``oos`` included when present).
    """
    n = len(gold)
    pairs = list(zip(gold, predicted, strict=True))
    correct = sum(g == p for g, p in pairs)
    in_scope = [(g, p) for g, p in pairs if g != OOS]
    oos = [(g, p) for g, p in pairs if g == OOS]
    tp: Counter[str] = Counter()
    pred_count: Counter[str] = Counter(predicted)
    gold_count: Counter[str] = Counter(gold)
    for g, p in pairs:
        if g == p:
            tp[g] += 1
    per_intent: dict[str, IntentScore] = {}
    for label in sorted(gold_count):
        precision = _ratio(tp[label], pred_count[label])
        recall = _ratio(tp[label], gold_count[label])
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_intent[label] = IntentScore(precision, recall, f1, gold_count[label])
    macro = sum(s.f1 for s in per_intent.values()) / len(per_intent) if per_intent else 0.0
    confusions = Counter((g, p) for g, p in pairs if g != p).most_common(top_confusions)
    latency: dict[str, float] = {}
    if latencies_ms:
        ordered = sorted(latencies_ms)
        latency = {
            "p50": ordered[int(0.50 * (len(ordered) - 1))],
            "p95": ordered[int(0.95 * (len(ordered) - 1))],
            "mean": sum(ordered) / len(ordered),
        }
    return EvaluationReport(
        n=n,
        threshold=threshold,
        accuracy=_ratio(correct, n),
        in_scope_accuracy=_ratio(sum(g == p for g, p in in_scope), len(in_scope)),
        macro_f1=macro,
        oos_recall=_ratio(sum(p == OOS for _, p in oos), len(oos)) if oos else None,
        per_intent=per_intent,
        confusions=[(g, p, c) for (g, p), c in confusions],
        latency_ms=latency,
    )


def evaluate(
    classifier: IntentClassifier,
    examples: Sequence[Example],
    *,
    threshold: float = 0.0,
    progress: Progress | None = None,
    warmup: int = 5,
) -> EvaluationReport:
    """Classify each example one at a time (as a live turn would) and score the result.

    Args:
        threshold: predictions with a lower confidence become ``oos`` (0 = no threshold).
        progress: called with the number of examples done since the last call.
        warmup: utterances classified first and not timed (lazy imports, caches).
    """
    for ex in examples[:warmup]:
        classifier.predict(ex.text)
    predicted: list[str] = []
    latencies: list[float] = []
    for i, ex in enumerate(examples):
        start = time.perf_counter()
        pred = apply_threshold(classifier.predict(ex.text), threshold)
        latencies.append((time.perf_counter() - start) * 1000.0)
        predicted.append(pred.intent)
        if progress is not None and (i + 1) % 50 == 0:
            progress(50)
    if progress is not None and len(examples) % 50:
        progress(len(examples) % 50)
    return score_predictions(
        [ex.intent for ex in examples], predicted, threshold=threshold, latencies_ms=latencies
    )


@dataclass(frozen=True, slots=True)
class ConversationReport:
    """Intent accuracy per turn position (0-based) and over all turns."""

    conversations: int
    per_turn_accuracy: list[float]
    accuracy: float
    min_turn_accuracy: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "conversations": self.conversations,
            "per_turn_accuracy": self.per_turn_accuracy,
            "accuracy": self.accuracy,
            "min_turn_accuracy": self.min_turn_accuracy,
        }


def evaluate_conversations(
    model: IntentClassifier | TurnReader,
    conversations: Sequence[Conversation],
    *,
    threshold: float,
    use_context: bool = True,
) -> ConversationReport:
    """Run each scripted conversation through a fresh :class:`DialogueState` (as the turn
    pipeline does) and count correct intents per turn position.

    ``model`` is a pack's :class:`TurnReader` (classifier + context model) or a bare classifier
    (the dialogue state's rules alone); ``use_context=False`` scores the classifier's answer
    for each turn on its own."""
    from hermes_desk.nlu.state import DialogueState

    reader = model if isinstance(model, TurnReader) else TurnReader(model, None)
    hits: Counter[int] = Counter()
    totals: Counter[int] = Counter()
    for conv in conversations:
        state = DialogueState(threshold=threshold)
        for i, turn in enumerate(conv.turns):
            if use_context:
                intent = reader.read(turn.text, state).intent
            else:
                intent = apply_threshold(reader.classifier.predict(turn.text), threshold).intent
            totals[i] += 1
            hits[i] += intent == turn.intent
    per_turn = [hits[i] / totals[i] for i in sorted(totals)]
    all_turns = sum(totals.values())
    return ConversationReport(
        conversations=len(conversations),
        per_turn_accuracy=per_turn,
        accuracy=sum(hits.values()) / all_turns if all_turns else 0.0,
        min_turn_accuracy=min(per_turn) if per_turn else 0.0,
    )


def evaluate_conversation_modes(
    reader: TurnReader, conversations: Sequence[Conversation], *, threshold: float
) -> dict[str, ConversationReport]:
    """The same conversations read three ways: ``context`` (the reader as the service uses it),
    ``rules`` (its classifier with the dialogue state's rules alone) and ``alone`` (each turn
    by the classifier on its own)."""
    return {
        "context": evaluate_conversations(reader, conversations, threshold=threshold),
        "rules": evaluate_conversations(reader.classifier, conversations, threshold=threshold),
        "alone": evaluate_conversations(
            reader.classifier, conversations, threshold=threshold, use_context=False
        ),
    }
