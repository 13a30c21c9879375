from __future__ import annotations

from hermes_desk.bench.privacy import run_privacy_bench


def test_privacy_bench_reports_each_operation() -> None:
    figures = run_privacy_bench(rounds=50)
    assert figures["utterances"] > 100
    for name in ("mask_text_plain", "mask_text_with_numbers", "mask_turn_record", "mask_event"):
        assert 0 < figures[name]["p50_us"] <= figures[name]["p95_us"], name
    assert figures["offline_summary_20_turns"]["rounds"] == 10
