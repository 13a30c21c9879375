"""Alerts: what the agent and the supervisor must see at once.

Three sources, all configured in the pack's ``compliance.yaml`` (``alerts``):

- **customer lines**: regulator, media or legal threats and abuse (phrase and pattern rules);
- **the conversation**: ``negative_streak`` negative customer turns in a row, and
  ``verification_failures`` rejected inputs (SMS codes…) in one session;
- **agent lines**: compliance slips — over-promises, full phone / ID-card / bank-card numbers
  read out, passwords or codes asked for outside the workflow step that waits for them.

An alert carries a fixed message from the pack, never the text that raised it: a line that read
out a phone number must not copy it into the alert feed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hermes_desk.packs.models import AlertRule, AlertRules

__all__ = ["Alert", "AlertDetector", "Severity", "verification_failures"]

Severity = Literal["info", "warning", "critical"]
Speaker = Literal["customer", "agent"]


@dataclass(frozen=True, slots=True)
class Alert:
    """One alert: its ``kind`` (the rule's kind), severity, message, who said the line and the
    turn it belongs to; ``rule`` names the pack rule that fired."""

    kind: str
    severity: Severity
    message: str
    speaker: Speaker
    turn_index: int
    rule: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "message": self.message,
            "speaker": self.speaker,
            "turn_index": self.turn_index,
            "rule": self.rule,
        }


@dataclass(frozen=True)
class _Compiled:
    rule: AlertRule
    #: the rule's folded phrases as one alternation of literals: found anywhere in the folded
    #: line exactly when one of them is a substring of it (one scan, not one per phrase)
    phrases: re.Pattern[str] | None
    patterns: tuple[re.Pattern[str], ...]
    unless: tuple[str, ...]
    #: the rule's ``unless`` phrases as case-insensitive literal patterns, compiled once
    unless_patterns: tuple[re.Pattern[str], ...]

    def hits(self, folded: str, text: str, kept_case: str) -> bool:
        """Whether the line hits the rule; ``folded`` and ``kept_case`` are ``text`` folded
        by :func:`_fold` without and with its case."""
        for phrase in self.unless:
            if phrase in folded:
                folded = folded.replace(phrase, " ")
        if self.unless:
            text = kept_case
            for pattern in self.unless_patterns:
                text = pattern.sub(" ", text)
        if self.phrases is not None and self.phrases.search(folded):
            return True
        return any(p.search(text) for p in self.patterns)


def _fold(text: str, *, keep_case: bool = False) -> str:
    text = unicodedata.normalize("NFKC", text)
    return text if keep_case else text.casefold()


def _literals(phrases: Iterable[str]) -> re.Pattern[str] | None:
    # Longest first is not needed for a yes/no search; empty phrases match everywhere, as ``in``.
    unique = sorted(set(phrases))
    return re.compile("|".join(map(re.escape, unique))) if unique else None


def _compile(rules: Sequence[AlertRule]) -> tuple[_Compiled, ...]:
    return tuple(
        _Compiled(
            rule,
            _literals(_fold(p) for p in rule.phrases),
            tuple(re.compile(p) for p in rule.patterns),
            tuple(_fold(p) for p in rule.unless),
            tuple(re.compile(re.escape(p), re.IGNORECASE) for p in rule.unless),
        )
        for rule in rules
    )


class AlertDetector:
    """Checks lines and the conversation against a pack's alert rules."""

    def __init__(self, rules: AlertRules) -> None:
        self.rules = rules
        self._customer = _compile(rules.customer)
        self._agent = _compile(rules.agent)

    def customer_line(self, text: str, turn_index: int) -> list[Alert]:
        """Threats and abuse in a customer's line."""
        return self._check(self._customer, text, "customer", turn_index, waiting_for=None)

    def agent_line(self, text: str, turn_index: int, *, waiting_for: str | None) -> list[Alert]:
        """Compliance slips in the agent's line. ``waiting_for`` is the input the session's
        workflow waits for (``sms_code``): asking for exactly that is the step, not a slip."""
        return self._check(self._agent, text, "agent", turn_index, waiting_for=waiting_for)

    def negative_streak(self, labels: Sequence[str], turn_index: int) -> Alert | None:
        """An alert when the customer's last turns (``labels``, oldest first, this turn last)
        end in ``negative_streak`` negatives — again at each further multiple."""
        streak = 0
        for label in reversed(labels):
            if label != "negative":
                break
            streak += 1
        need = self.rules.negative_streak
        if streak < need or streak % need:
            return None
        return Alert(
            "negative_streak",
            "warning",
            f"客户连续{streak}轮负面情绪 / {streak} negative customer turns in a row",
            "customer",
            turn_index,
            "negative_streak",
        )

    def verification(self, before: int, now: int, turn_index: int) -> Alert | None:
        """An alert when this turn brought the session's rejected inputs to the threshold or
        beyond (each further failure alerts again)."""
        if now <= before or now < self.rules.verification_failures:
            return None
        return Alert(
            "verification_failures",
            "critical" if now > self.rules.verification_failures else "warning",
            f"验证已失败{now}次 / verification failed {now} times in this session",
            "customer",
            turn_index,
            "verification_failures",
        )

    def _check(
        self,
        compiled: tuple[_Compiled, ...],
        text: str,
        speaker: Speaker,
        turn_index: int,
        *,
        waiting_for: str | None,
    ) -> list[Alert]:
        folded = _fold(text)
        kept_case = _fold(text, keep_case=True)
        alerts: list[Alert] = []
        seen: set[str] = set()
        for item in compiled:
            rule = item.rule
            if waiting_for is not None and waiting_for in rule.allowed_while_waiting_for:
                continue
            if rule.alert_kind in seen or not item.hits(folded, text, kept_case):
                continue
            seen.add(rule.alert_kind)
            alerts.append(
                Alert(rule.alert_kind, rule.severity, rule.message, speaker, turn_index, rule.id)
            )
        return alerts


def verification_failures(steps: Sequence[Any]) -> int:
    """Rejected customer inputs in a workflow's steps: every round a waiting step asked again,
    plus a final rejection (the steps of a :class:`~hermes_desk.workflows.WorkflowView`)."""
    return sum(
        int(getattr(s, "input_round", 0) or 0) + (getattr(s, "status", None) == "rejected")
        for s in steps
    )
