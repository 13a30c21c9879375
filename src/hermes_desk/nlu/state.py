"""Dialogue state: the intent and slots a conversation has so far, carried from turn to turn.

Intent resolution in context (what the turn pipeline calls after the classifier):

1. The classifier's probabilities are re-weighted by a context prior (the conversation's
   current intent counts ``stickiness`` times); a confident in-scope top label (≥ threshold)
   is taken.
2. A turn that only brings a slot value (an order id, a phone number) keeps the conversation's
   intent, whatever the classifier says: a bare value carries no intent of its own.
3. When the classifier is unsure (below the threshold) and the conversation already has an
   in-scope intent, a follow-up keeps that intent: an elliptical turn ("那什么时候能到？",
   "what about the refund?", "…呢"), a turn that only brings a slot value (an order id, a phone
   number), or a turn whose ranking still has the previous intent near the top.
4. Otherwise the turn is out of scope (``oos``): no tool may run.

A confident ``oos`` prediction is never overridden by context unless it is a bare follow-up and
the classifier's confidence stays below ``carry_oos_below``.

Slots accumulate: a new value replaces the old one for the same slot; ``slots_for`` hands a tool
only the slots its intent's schema declares.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hermes_desk.nlu.intent import OOS, IntentPrediction

__all__ = ["DialogueState", "ResolvedIntent", "is_follow_up"]

_FOLLOW_UP_START = re.compile(
    r"^\s*(那|那么|那个|还有|另外|然后|再|所以"
    r"|and|so|also|then|what about|how about|and what about)"
    r"(?![a-z])",
    re.IGNORECASE,
)
_FOLLOW_UP_END = re.compile(r"(呢|呀|啊)\s*[?？!！。.]*\s*$")
_SLOT_ONLY = re.compile(
    r"^\s*(?:(?:我的)?(?:订单号?|单号|手机号?|电话|号码"
    r"|order(?: id| number)?|phone|number|it'?s|是)"
    r"\s*[:：是]?\s*)?[\d\s+\-]{6,}\s*[。.!！]?\s*$",
    re.IGNORECASE,
)


def is_follow_up(text: str) -> bool:
    """Does ``text`` read as a continuation of the previous turn rather than a new request?"""
    return bool(
        _FOLLOW_UP_START.search(text) or _FOLLOW_UP_END.search(text) or _SLOT_ONLY.match(text)
    )


@dataclass(frozen=True, slots=True)
class ResolvedIntent:
    """The intent a turn is handled under, and why.

    Attributes:
        intent: the intent to act on (``oos`` = no tool may run).
        confidence: the classifier's confidence for its own top label.
        carried: True when the intent came from the conversation, not from this turn alone.
        prediction: the classifier's raw answer.
    """

    intent: str
    confidence: float
    carried: bool
    prediction: IntentPrediction

    @property
    def out_of_scope(self) -> bool:
        return self.intent == OOS


@dataclass
class DialogueState:
    """Per-session intent and slot memory.

    Args:
        threshold: the out-of-scope threshold (``NluSettings.oos_threshold``).
        carry_oos_below: a follow-up the model calls ``oos`` keeps the previous intent only if
            the ``oos`` confidence is below this.
        ranking_window: how many of the top labels are searched for the previous intent.
        stickiness: the previous intent's probability is multiplied by this before the top
            label is chosen (a conversation tends to stay on its topic); 1 = no context prior.
    """

    threshold: float = 0.5
    carry_oos_below: float = 0.8
    ranking_window: int = 2
    stickiness: float = 2.0
    intent: str | None = None
    slots: dict[str, Any] = field(default_factory=dict)
    turns: int = 0

    def resolve(self, text: str, prediction: IntentPrediction) -> ResolvedIntent:
        """Decide this turn's intent in context and remember it."""
        resolved = self._decide(text, prediction)
        self.turns += 1
        if not resolved.out_of_scope:
            self.intent = resolved.intent
        return resolved

    def _decide(self, text: str, p: IntentPrediction) -> ResolvedIntent:
        previous = self.intent
        if previous is not None and _SLOT_ONLY.match(text):
            # A bare slot value ("订单号是…", "13800138000") answers the open request.
            return ResolvedIntent(previous, p.confidence, True, p)
        intent, confidence = self._with_context_prior(p)
        if confidence >= self.threshold and intent != OOS:
            return ResolvedIntent(intent, confidence, intent != p.intent, p)
        if previous is None:
            return ResolvedIntent(OOS, p.confidence, False, p)
        follow_up = is_follow_up(text)
        if intent == OOS and confidence >= self.threshold:
            if follow_up and p.confidence < self.carry_oos_below:
                return ResolvedIntent(previous, p.confidence, True, p)
            return ResolvedIntent(OOS, p.confidence, False, p)
        near_top = [label for label, _ in p.ranking[: self.ranking_window]]
        if follow_up or previous in near_top:
            return ResolvedIntent(previous, p.confidence, True, p)
        return ResolvedIntent(OOS, p.confidence, False, p)

    def _with_context_prior(self, p: IntentPrediction) -> tuple[str, float]:
        """Top label after weighting the conversation's intent by ``stickiness``."""
        if self.intent is None or self.stickiness == 1.0 or not p.ranking:
            return p.intent, p.confidence
        weighted = {
            label: prob * (self.stickiness if label == self.intent else 1.0)
            for label, prob in p.ranking
        }
        # Mass outside the ranking is left unweighted.
        total = sum(weighted.values()) + max(0.0, 1.0 - sum(prob for _, prob in p.ranking))
        label, value = max(weighted.items(), key=lambda kv: kv[1])
        return label, value / total

    def update_slots(self, slots: Mapping[str, Any]) -> dict[str, Any]:
        """Merge this turn's slots into the state (new values win); returns all slots."""
        for key, value in slots.items():
            if value is not None and value != "":
                self.slots[key] = value
        return dict(self.slots)

    def slots_for(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """The carried slots an intent declares (``schema``: slot name → JSON Schema)."""
        props = schema.get("properties", schema) if isinstance(schema, Mapping) else {}
        return {k: v for k, v in self.slots.items() if k in props}

    def to_dict(self) -> dict[str, Any]:
        return {"intent": self.intent, "slots": dict(self.slots), "turns": self.turns}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, threshold: float = 0.5) -> DialogueState:
        return cls(
            threshold=threshold,
            intent=data.get("intent"),
            slots=dict(data.get("slots") or {}),
            turns=int(data.get("turns", 0)),
        )
