from __future__ import annotations

from hermes_desk.bench.nlu import bench_pack


def test_pack_bench_reports_heldout_and_conversations() -> None:
    figures = bench_pack("linear")
    assert 0.0 <= figures["heldout"]["threshold_0.5"]["macro_f1"] <= 1.0
    for name in ("conversations", "conversations_dev", "conversations_dev2", "conversations_test"):
        in_context = figures[f"{name}_context"]
        assert len(in_context["per_turn_accuracy"]) == 5
        # Reading turns in context beats reading each turn alone on every set.
        assert in_context["accuracy"] > figures[f"{name}_alone"]["accuracy"], name
