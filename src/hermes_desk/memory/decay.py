"""Time decay of confidence, as pure functions of numbers (no clock, no store).

confidence_t = confidence_0 · e^(−λ·hours since last confirmed). Decay always runs from the last
confirmation, never from ``valid_until`` (a future time would make confidence grow).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["FOREVER", "DecayPolicy", "decayed", "half_life_hours", "threshold_time"]

_HOUR = 3600.0
FOREVER = 253_402_300_799.0  # 9999-12-31: finite, so it stores and serialises everywhere


@dataclass(frozen=True, slots=True)
class DecayPolicy:
    """λ per hour and the confidence under which a fact leaves mid-term."""

    decay_lambda: float = 0.02
    archive_below: float = 0.3

    def decayed(self, confidence: float, last_confirmed_at: float, now: float) -> float:
        return decayed(confidence, last_confirmed_at, now, self.decay_lambda)

    def threshold_time(self, confidence: float, last_confirmed_at: float) -> float:
        return threshold_time(confidence, last_confirmed_at, self.decay_lambda, self.archive_below)


def decayed(confidence: float, last_confirmed_at: float, now: float, decay_lambda: float) -> float:
    """Confidence at ``now``. A clock that reads earlier than the confirmation gives no boost."""
    hours = max(0.0, now - last_confirmed_at) / _HOUR
    return confidence * math.exp(-decay_lambda * hours)


def half_life_hours(decay_lambda: float) -> float:
    """ln 2 / λ: 34.66 h for λ = 0.02."""
    return math.log(2) / decay_lambda


def threshold_time(
    confidence: float, last_confirmed_at: float, decay_lambda: float, threshold: float
) -> float:
    """The time at which the decayed confidence reaches ``threshold`` (now if already below)."""
    if threshold <= 0:
        return FOREVER
    if confidence <= threshold:
        return last_confirmed_at
    return min(FOREVER, last_confirmed_at + math.log(confidence / threshold) / decay_lambda * _HOUR)
