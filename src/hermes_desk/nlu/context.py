"""Intent in context: a small model stacked on the intent classifier that reads a turn together
with the conversation it belongs to.

Why: the classifier sees one utterance. "大概几天到账" is about a refund only because the turn
before was; "what about the other one?" has no intent of its own. Hand-written carry-over rules
(:mod:`hermes_desk.nlu.state`) cover the clear cases; this model learns the rest from labelled
conversations (the pack's ``dialogues*.jsonl``, written apart from ``nlu.jsonl`` and from every
evaluation set).

Features of a turn (all cheap; one extra classifier call per turn):

* the classifier's probabilities for the turn alone, and for the previous customer turn joined
  with this one (the joined text brings the topic words an elliptical turn leaves out);
* the conversation's intent so far (one-hot), alone and crossed with "this turn is elliptical"
  (a follow-up marker or a short turn);
* how much either ranking believes the conversation's intent, the surface markers (follow-up,
  short, bare slot value, acknowledgement, digits) and the turn's length.

A multinomial logistic regression turns these into a calibrated distribution over the pack's
intents. Its training rows use the classifier's answers on dialogue turns it never saw, so the
stacked model learns how far to trust the classifier on new text, not on its own training data.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import mul
from pathlib import Path
from typing import Any

from hermes_desk.errors import MisuseError
from hermes_desk.nlu.classifier import OOS, IntentClassifier, IntentPrediction, training_threads
from hermes_desk.nlu.ensemble import EnsembleIntentClassifier
from hermes_desk.nlu.examples import Conversation, Example
from hermes_desk.nlu.features import FastFeatures
from hermes_desk.nlu.intent import build_classifier
from hermes_desk.nlu.linear import LinearIntentClassifier, rank_row
from hermes_desk.nlu.state import (
    DialogueState,
    ResolvedIntent,
    is_acknowledgement,
    is_follow_up,
    is_short,
    is_slot_only,
)

__all__ = [
    "ContextModel",
    "TurnReader",
    "context_reader",
    "read_conversation",
    "train_turn_reader",
]

_FILE = "context.pkl"


@dataclass(frozen=True, slots=True)
class _TurnView:
    """What the context model may look at for one turn."""

    text: str
    alone: IntentPrediction
    joined: IntentPrediction | None
    previous: str | None


def _distribution(p: IntentPrediction | None, labels: Sequence[str]) -> list[float]:
    """Full probability vector from a (top-k) ranking; unranked labels share the rest."""
    if p is None:
        return [0.0] * len(labels)
    known = dict(p.ranking) or {p.intent: p.confidence}
    missing = [label for label in labels if label not in known]
    rest = max(0.0, 1.0 - sum(known.values())) / len(missing) if missing else 0.0
    return [known.get(label, rest) for label in labels]


class ContextModel:
    """Logistic regression over a turn's context features (see the module docstring).

    Args:
        labels: the intents (incl. ``oos``) in a fixed order.
        c: inverse regularisation strength.
    """

    def __init__(self, labels: Sequence[str], *, c: float = 1.0) -> None:
        self.labels = sorted(labels)
        self.c = c
        self._model: Any = None
        # The weights and intercepts as lists, for :meth:`probabilities` (set with the model).
        self._rows: tuple[list[list[float]], list[float]] = ([], [])

    def _features(self, view: _TurnView) -> list[float]:
        labels = self.labels
        alone = _distribution(view.alone, labels)
        joined = _distribution(view.joined, labels)
        follow_up, short = is_follow_up(view.text), is_short(view.text)
        elliptical = follow_up or short
        previous = [float(view.previous == label) for label in labels]
        row = [
            *alone,
            *(math.log(v + 1e-3) for v in alone),
            *joined,
            *(math.log(v + 1e-3) for v in joined),
            *previous,
            float(view.previous is None),
            *(v * elliptical for v in previous),
        ]
        at = labels.index(view.previous) if view.previous in labels else None
        row += [
            alone[at] if at is not None else 0.0,
            joined[at] if at is not None else 0.0,
            float(view.joined is not None),
            float(follow_up),
            float(short),
            float(is_slot_only(view.text)),
            float(is_acknowledgement(view.text)),
            float(any(ch.isdigit() for ch in view.text)),
            math.log1p(len(view.text)),
        ]
        return row

    def fit(self, views: Sequence[_TurnView], gold: Sequence[str]) -> None:
        import numpy as np
        from sklearn.linear_model import LogisticRegression

        unknown = sorted(set(gold) - set(self.labels))
        if unknown:
            raise MisuseError(f"dialogue labels {unknown} are not among the intents")
        model = LogisticRegression(C=self.c, max_iter=2000)
        model.fit([self._features(v) for v in views], list(gold))
        coef, intercept = model.coef_, model.intercept_
        if len(model.classes_) == 2:
            # sklearn keeps one row for two classes; the softmax below wants one per class.
            coef = np.vstack([-coef[0] / 2, coef[0] / 2])
            intercept = np.array([-intercept[0] / 2, intercept[0] / 2])
        self._use(
            {
                "classes": [str(c) for c in model.classes_],
                "coef": coef.astype(np.float64),
                "intercept": intercept.astype(np.float64),
            }
        )

    def _use(self, model: dict[str, Any]) -> None:
        self._model = model
        self._rows = (model["coef"].tolist(), model["intercept"].tolist())

    def probabilities(self, view: _TurnView) -> list[tuple[str, float]]:
        """Each intent's probability for this turn: a multinomial logistic regression over one
        row of a few dozen features, in plain Python (sklearn's per-call checks cost more than
        the arithmetic; so, in a running worker, do numpy's nine calls on arrays this small)."""
        if self._model is None:
            raise MisuseError("the context model is not trained: call fit or load first")
        row = self._features(view)
        scores = [
            sum(map(mul, weights, row)) + bias for weights, bias in zip(*self._rows, strict=True)
        ]
        top = max(scores)
        exps = [math.exp(score - top) for score in scores]
        total = sum(exps)
        return [(label, e / total) for label, e in zip(self._model["classes"], exps, strict=True)]

    def predict(self, view: _TurnView) -> IntentPrediction:
        ranking = sorted(self.probabilities(view), key=lambda kv: -kv[1])
        top = tuple(ranking[:5])
        return IntentPrediction(top[0][0], top[0][1], top)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        state = {"labels": self.labels, "c": self.c, "model": self._model}
        with (directory / _FILE).open("wb") as fh:
            pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)

    @classmethod
    def load(cls, directory: Path) -> ContextModel | None:
        """The model saved in ``directory``, or None when none was (a pack without dialogues).
        Only load folders you wrote yourself: it is a pickle."""
        path = directory / _FILE
        if not path.is_file():
            return None
        with path.open("rb") as fh:
            state = pickle.load(fh)
        model = cls(state["labels"], c=state["c"])
        if state["model"] is not None:
            model._use(state["model"])
        return model


def _joined_text(previous_text: str | None, text: str) -> str | None:
    return f"{previous_text} {text}" if previous_text else None


class TurnReader:
    """The intent of a customer turn in its conversation: the classifier, then the context
    model when the pack trained one, then the dialogue state's rules."""

    def __init__(self, classifier: IntentClassifier, context: ContextModel | None) -> None:
        self.classifier = classifier
        self.context = context
        self._reads = context_reader(classifier)

    def read(self, text: str, state: DialogueState) -> ResolvedIntent:
        in_context = None
        if self.context is None:
            alone = self.classifier.predict(text)
        else:
            alone, own = self._alone(text)
            joined = self._joined(state.last_text, text) if state.last_text else None
            in_context = self.context.predict(_TurnView(text, own, joined, state.intent))
        return state.resolve(text, alone, in_context=in_context)

    def _joined(self, previous: str, text: str) -> IntentPrediction:
        """The context reader's prediction for the previous turn joined with this one
        (:func:`_joined_text`); an SVM reader featurises it from the two parts
        (:meth:`FastFeatures.joined`: the same features)."""
        reads = self._reads
        fast = getattr(reads, "_fast", None)
        if type(reads) is LinearIntentClassifier and isinstance(fast, FastFeatures):
            probabilities = reads.probabilities_fast(*fast.joined(previous, text))
            return rank_row(probabilities, reads.classes, reads.top_k)
        return reads.predict(f"{previous} {text}")

    def _alone(self, text: str) -> tuple[IntentPrediction, IntentPrediction]:
        """The classifier's and the context reader's predictions for the turn alone; the
        default ensemble gives its SVM member's from the same featurisation."""
        classifier = self.classifier
        if self._reads is classifier:
            alone = classifier.predict(text)
            return alone, alone
        if isinstance(classifier, EnsembleIntentClassifier) and self._reads is classifier.linear:
            return classifier.predict_with_svm(text)
        return classifier.predict(text), self._reads.predict(text)


def context_reader(classifier: IntentClassifier) -> IntentClassifier:
    """The classifier whose answers the context model reads: the SVM member of an ensemble
    (cheap to cross-fit: see :func:`train_turn_reader`), else the classifier itself."""
    if isinstance(classifier, EnsembleIntentClassifier):
        return classifier.linear
    return classifier


def training_views(
    classifier: IntentClassifier, dialogues: Sequence[Conversation]
) -> tuple[list[_TurnView], list[str]]:
    """One row per dialogue turn, with the gold intent of the conversation so far (the last
    in-scope label before the turn) as the context the model is trained to use."""
    texts: list[str] = []
    joined_texts: list[str] = []
    for conv in dialogues:
        previous_text: str | None = None
        for turn in conv.turns:
            texts.append(turn.text)
            joined_texts.append(_joined_text(previous_text, turn.text) or "")
            previous_text = turn.text
    alone = classifier.predict_many(texts)
    joined_all = classifier.predict_many([t or "-" for t in joined_texts])
    views: list[_TurnView] = []
    gold: list[str] = []
    i = 0
    for conv in dialogues:
        previous: str | None = None
        for turn in conv.turns:
            joined = joined_all[i] if joined_texts[i] else None
            views.append(_TurnView(turn.text, alone[i], joined, previous))
            gold.append(turn.intent)
            if turn.intent != OOS:
                previous = turn.intent
            i += 1
    return views, gold


def _fit(kind: str, examples: Sequence[Example]) -> IntentClassifier:
    classifier = build_classifier(kind)
    classifier.fit([e.text for e in examples], [e.intent for e in examples])
    return classifier


Progress = Callable[[float], None]
"""Called with the share of the training done so far (0–1], after each step."""


def train_turn_reader(
    examples: Sequence[Example],
    dialogues: Sequence[Conversation],
    kind: str,
    *,
    folds: int = 3,
    context: bool = True,
    progress: Progress | None = None,
) -> TurnReader:
    """Train the classifier on ``examples`` and every dialogue turn, and (``context``) the
    context model on the dialogues.

    The context model's rows are cross-fitted: the dialogues are split into ``folds`` parts and
    each part is read by a classifier trained without it, so the classifier's answers the model
    learns from are as wrong as they will be on new conversations (``folds`` extra trainings).
    The context model reads :func:`context_reader`'s answers, so for the default ensemble the
    extra trainings are of its SVM member alone (seconds) instead of whole ensembles.

    Training runs with one BLAS/OpenMP thread (:func:`training_threads`).
    """
    turns = [turn for conv in dialogues for turn in conv.turns]
    with training_threads():
        classifier = _fit(kind, [*examples, *turns])
        if not context or len(dialogues) < folds:
            if progress is not None:
                progress(1.0)
            return TurnReader(classifier, None)
        reads_kind = context_reader(classifier).kind
        plan = _TrainingPlan(folds, cheap_folds=reads_kind != kind, progress=progress)
        plan.done(1.0)
        views: list[_TurnView] = []
        gold: list[str] = []
        for k in range(folds):
            held = list(dialogues[k::folds])
            rest = [t for i, conv in enumerate(dialogues) if i % folds != k for t in conv.turns]
            fold_views, fold_gold = training_views(_fit(reads_kind, [*examples, *rest]), held)
            views += fold_views
            gold += fold_gold
            plan.done(plan.fold)
        model = ContextModel(sorted({e.intent for e in [*examples, *turns]}))
        model.fit(views, gold)
        plan.done(plan.context)
    return TurnReader(classifier, model)


class _TrainingPlan:
    """Each training step's cost relative to the final classifier's fit, for a truthful
    share-done figure. Measured on the bundled pack (two cores): a fold of the ensemble's SVM
    member (fit + reading its held-out dialogues) costs about 5 % of the ensemble's fit, a fold
    of the same kind about as much as the final fit plus its reading, the context model 4 %."""

    def __init__(self, folds: int, *, cheap_folds: bool, progress: Progress | None) -> None:
        self.fold = 0.05 if cheap_folds else 1.1
        self.context = 0.04
        self._total = 1.0 + folds * self.fold + self.context
        self._done = 0.0
        self._progress = progress

    def done(self, cost: float) -> None:
        self._done = min(self._total, self._done + cost)
        if self._progress is not None:
            self._progress(self._done / self._total)


def read_conversation(reader: TurnReader, turns: Sequence[str], threshold: float) -> list[str]:
    """The intents a fresh conversation resolves, turn by turn (as the turn pipeline does)."""
    state = DialogueState(threshold=threshold)
    return [reader.read(text, state).intent for text in turns]
