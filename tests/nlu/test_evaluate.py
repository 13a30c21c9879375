from __future__ import annotations

from pathlib import Path

import pytest

from hermes_desk.errors import NotFoundError, ValidationError
from hermes_desk.nlu import (
    Conversation,
    Example,
    IntentPrediction,
    evaluate_conversations,
    load_conversations,
    load_examples,
)
from hermes_desk.nlu.evaluate import score_predictions


def test_scores_by_hand() -> None:
    gold = ["a", "a", "b", "oos", "oos"]
    pred = ["a", "b", "b", "oos", "a"]
    r = score_predictions(gold, pred, latencies_ms=[1.0, 2.0, 3.0, 4.0, 5.0])
    assert r.accuracy == pytest.approx(3 / 5)
    assert r.in_scope_accuracy == pytest.approx(2 / 3)
    assert r.oos_recall == pytest.approx(1 / 2)
    # a: P=1/2 R=1/2; b: P=1/2 R=1; oos: P=1 R=1/2
    assert r.per_intent["b"].f1 == pytest.approx(2 / 3)
    assert r.macro_f1 == pytest.approx((0.5 + 2 / 3 + 2 / 3) / 3)
    assert r.confusions[0][2] == 1 and len(r.confusions) == 2
    assert r.latency_ms["p50"] == 3.0 and r.latency_ms["p95"] == 4.0
    d = r.to_dict()
    assert d["oos_recall"] == pytest.approx(0.5) and "per_intent" in d


def test_no_oos_in_gold_gives_no_recall() -> None:
    assert score_predictions(["a"], ["a"]).oos_recall is None


class Scripted:
    """A stand-in classifier that answers from a table (the Protocol's shape)."""

    kind = "scripted"

    def __init__(self, table: dict[str, IntentPrediction]) -> None:
        self.table = table

    def fit(self, texts: object, intents: object) -> None:  # pragma: no cover
        pass

    def predict(self, text: str) -> IntentPrediction:
        return self.table[text]

    def predict_many(self, texts: list[str]) -> list[IntentPrediction]:  # pragma: no cover
        return [self.table[t] for t in texts]

    def save(self, directory: Path) -> None:  # pragma: no cover
        pass


def test_conversation_context_rescues_elliptical_turns() -> None:
    table = {
        "我的快递怎么还没到": IntentPrediction("logistics", 0.9, (("logistics", 0.9),)),
        "123456789012": IntentPrediction("oos", 0.4, (("oos", 0.4), ("order_status", 0.3))),
        "那什么时候能到？": IntentPrediction("kb_question", 0.35, (("kb_question", 0.35),)),
    }
    conv = Conversation(
        "c1",
        (
            Example("我的快递怎么还没到", "logistics"),
            Example("123456789012", "logistics"),
            Example("那什么时候能到？", "logistics"),
        ),
    )
    with_context = evaluate_conversations(Scripted(table), [conv], threshold=0.5)
    without = evaluate_conversations(Scripted(table), [conv], threshold=0.5, use_context=False)
    assert with_context.per_turn_accuracy == [1.0, 1.0, 1.0]
    assert without.per_turn_accuracy == [1.0, 0.0, 0.0]
    assert without.min_turn_accuracy == 0.0


def test_loaders_validate(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"text": "hi", "intent": "oos"}\nnot json\n', "utf-8")
    with pytest.raises(ValidationError, match=":2:"):
        load_examples(bad)
    conv = tmp_path / "c.jsonl"
    conv.write_text('{"id": "a", "turns": [{"text": "hi", "intent": "oos"}]}\n', "utf-8")
    assert load_conversations(conv)[0].turns[0].intent == "oos"
    with pytest.raises(NotFoundError, match="no such file"):
        load_conversations(tmp_path / "missing.jsonl")
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(ValidationError, match="UTF-8"):
        load_examples(binary)
    conv.write_text('{"id": "a", "turns": []}\n', "utf-8")
    with pytest.raises(ValidationError):
        load_conversations(conv)
