"""``bench replies`` runs labelled conversations through the whole chain and checks replies."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from hermes_desk.bench.replies import load_conversations, run_replies
from hermes_desk.packs import bundled_pack_path
from tests.e2e.conftest import make_settings


def test_the_bundled_set_is_large_enough_and_a_third_english() -> None:
    conversations = load_conversations(bundled_pack_path("ecommerce") / "replies_eval.jsonl")
    assert len(conversations) >= 60
    assert sum(c["lang"] == "en" for c in conversations) * 3 >= len(conversations)


def test_a_small_set_runs_end_to_end_and_scores_every_turn(
    tmp_path: Path, backend_url: str
) -> None:
    data = tmp_path / "set.jsonl"
    rows = [
        {"id": "a", "user": "u1001", "lang": "en", "turns": [
            {"text": "I forgot my password, my phone is 13800138000", "intent": "password_reset",
             "slots": {"phone": "13800138000"}},
            {"text": "the code is 000000", "intent": "password_reset", "expect": "rejected"},
            {"text": "{code}", "intent": "password_reset"},
            {"text": "thanks, that's all", "intent": "oos", "act": "closing"},
        ]},
        {"id": "b", "user": "u1003", "lang": "zh", "turns": [
            {"text": "以后不要给我打电话，发短信就行", "intent": "oos", "preference": True},
        ]},
    ]  # fmt: skip
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    settings = make_settings(tmp_path / "data", backend_url)

    figures = anyio.run(run_replies, settings, data)

    assert figures["conversations"] == 2 and figures["turns"] == 5
    assert figures["all"]["rejection_named"] == {"n": 1, "passed": 1, "rate": 1.0}
    assert figures["all"]["closing_closed"] == {"n": 1, "passed": 1, "rate": 1.0}
    assert figures["all"]["preference_kept"]["passed"] == 1
    assert figures["all"]["no_false_done"]["passed"] == 5, figures["failures"]
    assert figures["en"]["language"]["passed"] == 4, figures["failures"]
