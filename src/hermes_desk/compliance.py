"""Every suggested reply is checked against the pack's compliance rules before an agent sees it.

``block`` rules replace the whole reply with the pack's safe fallback (a promise we cannot keep
must not be half-said); ``mask`` rules hide the matching text (a phone number, a code) and keep
the rest. The outcome says which rules fired, so the console can show why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_desk.packs.models import ComplianceRules

__all__ = ["ComplianceChecker", "ComplianceOutcome"]


@dataclass(frozen=True)
class ComplianceOutcome:
    text: str
    passed: bool
    violations: tuple[str, ...] = ()


class ComplianceChecker:
    def __init__(self, rules: ComplianceRules) -> None:
        self._fallback = rules.fallback_reply
        self._compiled = [
            (
                rule.id,
                rule.action,
                tuple(phrase.casefold() for phrase in rule.forbidden),
                tuple(re.compile(pattern) for pattern in rule.patterns),
            )
            for rule in rules.rules
        ]

    def check(self, text: str) -> ComplianceOutcome:
        violations: list[str] = []
        blocked = False
        folded = text.casefold()
        for rule_id, action, phrases, patterns in self._compiled:
            hit_phrase = any(phrase in folded for phrase in phrases)
            hit_pattern = any(pattern.search(text) for pattern in patterns)
            if not (hit_phrase or hit_pattern):
                continue
            violations.append(rule_id)
            if action == "block":
                blocked = True
            else:
                for phrase in phrases:
                    text = re.sub(re.escape(phrase), "***", text, flags=re.IGNORECASE)
                for pattern in patterns:
                    text = pattern.sub(_mask_match, text)
        if blocked:
            return ComplianceOutcome(self._fallback, False, tuple(violations))
        return ComplianceOutcome(text, not violations, tuple(violations))


def _mask_match(match: re.Match[str]) -> str:
    value = match.group(0)
    keep = 4 if len(value) > 8 else 0
    return "*" * (len(value) - keep) + value[len(value) - keep :]
