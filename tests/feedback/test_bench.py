"""The feedback benchmark runs end to end at a tiny scale (figures are not asserted)."""

from __future__ import annotations

import pytest

from hermes_desk.bench.feedback import run_feedback_bench


def test_the_bench_counts_every_shown_suggestion_per_store() -> None:
    report = run_feedback_bench(events=60)
    assert set(report) == {"memory", "sqlite"}
    for figures in report.values():
        assert figures["events"] == 60 + 20 + 10  # shown, a third inserted, a sixth rated
        assert figures["shown_counted"] == 60
        assert set(figures["put_ms"]) == {"p50", "p95", "p99"}


@pytest.mark.redis
def test_the_bench_runs_on_redis(redis_url: str) -> None:
    report = run_feedback_bench(events=30, redis_url=redis_url)
    assert report["redis"]["shown_counted"] == 30
