from __future__ import annotations

from hermes_desk.bench.nlu import bench_pack


def test_pack_bench_reports_heldout_and_conversations() -> None:
    figures = bench_pack("linear")
    assert 0.0 <= figures["heldout"]["threshold_0.5"]["macro_f1"] <= 1.0
    assert figures["latency_ms"]["p95"] >= figures["latency_ms"]["p50"]
    conv = figures["conversations_context_True"]
    assert len(conv["per_turn_accuracy"]) == 5
    # Context never makes a turn position worse than the bare classifier here.
    assert conv["accuracy"] >= figures["conversations_context_False"]["accuracy"]
