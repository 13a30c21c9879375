"""A clock that only moves when told to, so tests drive hours in microseconds."""

from __future__ import annotations

__all__ = ["FakeClock"]


class FakeClock:
    def __init__(self, start: float = 1_780_000_000.0) -> None:
        self._now = start
        self._mono = 0.0

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a clock does not go back")
        self._now += seconds
        self._mono += seconds
