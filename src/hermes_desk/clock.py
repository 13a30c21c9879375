"""Time as a dependency. Everything that decays, expires or times out asks a ``Clock``."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

__all__ = ["Clock", "SystemClock", "utc_from_ts"]


class Clock(Protocol):
    """Wall time for records and a monotonic time for measuring durations."""

    def now(self) -> float:
        """Seconds since the epoch (UTC)."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin; never goes back."""
        ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


def utc_from_ts(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)
