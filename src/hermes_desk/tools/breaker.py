"""Circuit breaker per tool: a pure, clock-driven state machine.

Rules (SPEC T5, the article's numbers as ``BreakerSettings`` defaults):

* **closed** — calls go through. A call that times out, or takes longer than ``slow_call_s``
  (3 s) even if it then answers, is a *timeout*; 3 consecutive timeouts open the breaker.
  A failure (transport error, HTTP 5xx, a tool's exception, invalid result) — and a timeout,
  which is a failure too — adds to the failure count; 5 failures since the last success open
  it. A success resets both. A business answer the tool declares ("no such order" 404, a 409
  refusal) is a success: the backend answered, and one customer's unknown order id must not
  cut every customer off (SPEC §8 X5). The executor does not report an undeclared 4xx at all:
  the caller was wrong, the backend is fine.
* **open** — for ``open_s`` (10 min) every call is refused at once (the caller answers with the
  tool's fallback).
* **probing** — the first call after the cool-down takes a *probe lease* and runs the health
  probe before any real call; other calls meanwhile are refused. A healthy probe closes the
  breaker (the call then proceeds); a failing one re-opens it for another ``open_s``. A lease
  older than ``probe_lease_s`` is taken over, so a worker that died mid-probe cannot wedge it.

Times are ``Clock.now()`` (wall seconds) so that several workers sharing the state through Redis
agree on them. Every function here is pure: ``record, now → record, decision``; the
:class:`~hermes_desk.tools.breaker_store.BreakerStateStore` applies them atomically.

Why not a library: ``pybreaker`` (maintained, has Redis storage) counts one kind of failure with
one threshold, lets the *real* call be the half-open trial (we must probe ``/health`` first and
never send a business write as a trial), reads ``datetime.now()`` itself (no injectable clock, so
a 10-minute cool-down cannot be tested in microseconds) and has no async Redis storage.
``aiobreaker`` and ``purgatory`` share the single-threshold and trial-call model. The rules
above are ~100 lines of pure code, easier to verify than an adapter bent around those models.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any

from hermes_desk.config import BreakerSettings

__all__ = [
    "BreakerOutcome",
    "BreakerPolicy",
    "BreakerRecord",
    "BreakerState",
    "Decision",
]


class BreakerState(enum.StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    PROBING = "probing"


class Decision(enum.StrEnum):
    ALLOW = "allow"  # make the real call
    REJECT = "reject"  # answer with the fallback now
    PROBE = "probe"  # run the health probe first (this caller holds the probe lease)


class BreakerOutcome(enum.StrEnum):
    OK = "ok"
    TIMEOUT = "timeout"
    FAILURE = "failure"


@dataclass(frozen=True, slots=True)
class BreakerRecord:
    """The shared state of one tool's breaker."""

    state: BreakerState = BreakerState.CLOSED
    consecutive_timeouts: int = 0
    failures: int = 0
    opened_at: float | None = None
    probe_started_at: float | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state.value,
            "consecutive_timeouts": self.consecutive_timeouts,
            "failures": self.failures,
            "opened_at": self.opened_at,
            "probe_started_at": self.probe_started_at,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BreakerRecord:
        return cls(
            state=BreakerState(data.get("state", "closed")),
            consecutive_timeouts=int(data.get("consecutive_timeouts", 0)),
            failures=int(data.get("failures", 0)),
            opened_at=data.get("opened_at"),
            probe_started_at=data.get("probe_started_at"),
            reason=data.get("reason"),
        )


CLOSED = BreakerRecord()


@dataclass(frozen=True, slots=True)
class BreakerPolicy:
    """The thresholds, and the transitions as pure functions."""

    consecutive_timeouts: int = 3
    slow_call_s: float = 3.0
    failures: int = 5
    open_s: float = 600.0
    probe_lease_s: float = 30.0

    @classmethod
    def from_settings(cls, settings: BreakerSettings) -> BreakerPolicy:
        return cls(
            consecutive_timeouts=settings.consecutive_timeouts,
            slow_call_s=settings.slow_call_s,
            failures=settings.failures,
            open_s=settings.open_s,
        )

    def classify(self, *, succeeded: bool, timed_out: bool, duration_s: float) -> BreakerOutcome:
        """A call that answered but took longer than ``slow_call_s`` counts as a timeout."""
        if timed_out or duration_s > self.slow_call_s:
            return BreakerOutcome.TIMEOUT
        return BreakerOutcome.OK if succeeded else BreakerOutcome.FAILURE

    def retry_at(self, record: BreakerRecord) -> float | None:
        """When an open breaker will let the next caller probe."""
        if record.state is BreakerState.OPEN and record.opened_at is not None:
            return record.opened_at + self.open_s
        return None

    def before_call(self, record: BreakerRecord, now: float) -> tuple[BreakerRecord, Decision]:
        if record.state is BreakerState.CLOSED:
            return record, Decision.ALLOW
        if record.state is BreakerState.OPEN:
            opened = record.opened_at if record.opened_at is not None else now
            if now < opened + self.open_s:
                return record, Decision.REJECT
            return replace(record, state=BreakerState.PROBING, probe_started_at=now), Decision.PROBE
        # PROBING: someone holds the lease; take it over only when it is stale.
        started = record.probe_started_at if record.probe_started_at is not None else now
        if now >= started + self.probe_lease_s:
            return replace(record, probe_started_at=now), Decision.PROBE
        return record, Decision.REJECT

    def after_probe(self, record: BreakerRecord, healthy: bool, now: float) -> BreakerRecord:
        if record.state is not BreakerState.PROBING:
            return record  # another worker settled it meanwhile
        if healthy:
            return CLOSED
        return BreakerRecord(
            state=BreakerState.OPEN,
            consecutive_timeouts=record.consecutive_timeouts,
            failures=record.failures,
            opened_at=now,
            reason="health probe failed",
        )

    def after_call(
        self, record: BreakerRecord, outcome: BreakerOutcome, now: float
    ) -> BreakerRecord:
        if record.state is not BreakerState.CLOSED:
            return record  # opened by another call meanwhile; its clock rules
        if outcome is BreakerOutcome.OK:
            return CLOSED
        if outcome is BreakerOutcome.TIMEOUT:
            timeouts, failures = record.consecutive_timeouts + 1, record.failures + 1
        else:
            timeouts, failures = 0, record.failures + 1
        if timeouts >= self.consecutive_timeouts:
            return self._open(timeouts, failures, now, f"{timeouts} consecutive timeouts")
        if failures >= self.failures:
            return self._open(timeouts, failures, now, f"{failures} failures")
        return BreakerRecord(consecutive_timeouts=timeouts, failures=failures)

    @staticmethod
    def _open(timeouts: int, failures: int, now: float, reason: str) -> BreakerRecord:
        return BreakerRecord(
            state=BreakerState.OPEN,
            consecutive_timeouts=timeouts,
            failures=failures,
            opened_at=now,
            reason=reason,
        )
