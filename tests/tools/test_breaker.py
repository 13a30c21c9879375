"""The breaker as a pure state machine, driven by a fake clock."""

from __future__ import annotations

from hermes_desk.config import BreakerSettings
from hermes_desk.testing import FakeClock
from hermes_desk.tools import BreakerPolicy, BreakerRecord, BreakerState
from hermes_desk.tools.breaker import BreakerOutcome, Decision

OK, TIMEOUT, FAILURE = BreakerOutcome.OK, BreakerOutcome.TIMEOUT, BreakerOutcome.FAILURE


def _run(policy: BreakerPolicy, outcomes: list[BreakerOutcome], now: float = 0.0) -> BreakerRecord:
    record = BreakerRecord()
    for outcome in outcomes:
        record = policy.after_call(record, outcome, now)
    return record


def test_article_defaults_come_from_settings() -> None:
    policy = BreakerPolicy.from_settings(BreakerSettings())
    assert (policy.consecutive_timeouts, policy.slow_call_s, policy.failures, policy.open_s) == (
        3, 3.0, 5, 600.0,
    )  # fmt: skip


def test_three_consecutive_timeouts_open_and_a_success_in_between_resets() -> None:
    policy = BreakerPolicy()
    assert _run(policy, [TIMEOUT, TIMEOUT], 0).state is BreakerState.CLOSED
    opened = _run(policy, [TIMEOUT, TIMEOUT, TIMEOUT], 5.0)
    assert opened.state is BreakerState.OPEN and opened.opened_at == 5.0
    assert opened.reason == "3 consecutive timeouts"
    assert _run(policy, [TIMEOUT, TIMEOUT, OK, TIMEOUT, TIMEOUT]).state is BreakerState.CLOSED


def test_an_error_breaks_a_timeout_streak_but_counts_as_a_failure() -> None:
    policy = BreakerPolicy()
    record = _run(policy, [TIMEOUT, TIMEOUT, FAILURE, TIMEOUT, TIMEOUT], 0)
    # 5 failures (timeouts are failures too) even though no 3 timeouts in a row.
    assert record.state is BreakerState.OPEN and record.reason == "5 failures"


def test_five_failures_open() -> None:
    policy = BreakerPolicy()
    assert _run(policy, [FAILURE] * 4, 0).state is BreakerState.CLOSED
    assert _run(policy, [FAILURE] * 5, 0).state is BreakerState.OPEN


def test_a_slow_answer_counts_as_a_timeout() -> None:
    policy = BreakerPolicy(slow_call_s=3.0)
    assert policy.classify(succeeded=True, timed_out=False, duration_s=3.01) is TIMEOUT
    assert policy.classify(succeeded=True, timed_out=False, duration_s=2.99) is OK
    assert policy.classify(succeeded=False, timed_out=False, duration_s=0.1) is FAILURE


def test_open_rejects_until_the_cool_down_then_one_caller_probes(fake_clock: FakeClock) -> None:
    policy = BreakerPolicy()
    record = _run(policy, [FAILURE] * 5, fake_clock.now())
    fake_clock.advance(599)
    assert policy.before_call(record, fake_clock.now())[1] is Decision.REJECT
    assert policy.retry_at(record) == record.opened_at + 600  # type: ignore[operator]
    fake_clock.advance(1)
    probing, decision = policy.before_call(record, fake_clock.now())
    assert decision is Decision.PROBE and probing.state is BreakerState.PROBING
    # While one caller probes, the others still get the fallback.
    assert policy.before_call(probing, fake_clock.now())[1] is Decision.REJECT
    # A probe that never reports (worker died) is taken over after the lease.
    fake_clock.advance(policy.probe_lease_s)
    assert policy.before_call(probing, fake_clock.now())[1] is Decision.PROBE


def test_probe_outcome_closes_or_reopens(fake_clock: FakeClock) -> None:
    policy = BreakerPolicy()
    record = _run(policy, [FAILURE] * 5, fake_clock.now())
    fake_clock.advance(600)
    probing, _ = policy.before_call(record, fake_clock.now())
    assert policy.after_probe(probing, True, fake_clock.now()) == BreakerRecord()
    reopened = policy.after_probe(probing, False, fake_clock.now())
    assert reopened.state is BreakerState.OPEN and reopened.opened_at == fake_clock.now()
    fake_clock.advance(599)
    assert policy.before_call(reopened, fake_clock.now())[1] is Decision.REJECT


def test_late_results_do_not_move_an_open_breaker() -> None:
    policy = BreakerPolicy()
    record = _run(policy, [FAILURE] * 5, 0)
    assert policy.after_call(record, OK, 1) == record
    assert policy.after_probe(record, True, 1) == record  # not probing: nothing to settle


def test_records_round_trip_through_dicts() -> None:
    record = _run(BreakerPolicy(), [FAILURE] * 5, 12.5)
    assert BreakerRecord.from_dict(record.to_dict()) == record
