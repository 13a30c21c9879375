"""Every IntentClassifier backend: trains on the pack, predicts with calibrated confidences,
ranks, and round-trips through save/load."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_desk.nlu import (
    CLASSIFIER_KINDS,
    OOS,
    IntentClassifier,
    build_classifier,
    load_classifier,
    load_examples,
)

PACK = Path(__file__).resolve().parents[2] / "src" / "hermes_desk" / "packs" / "ecommerce"


@pytest.fixture(scope="module")
def examples() -> tuple[list[str], list[str]]:
    rows = load_examples(PACK / "nlu.jsonl")
    return [e.text for e in rows], [e.intent for e in rows]


@pytest.mark.parametrize("kind", CLASSIFIER_KINDS)
def test_classifier_contract(
    kind: str, examples: tuple[list[str], list[str]], tmp_path: Path
) -> None:
    clf = build_classifier(kind)
    assert isinstance(clf, IntentClassifier)
    assert clf.kind == kind
    clf.fit(*examples)
    p = clf.predict("我忘记密码了，登录不上去")
    assert p.intent == "password_reset"
    assert 0.0 < p.confidence <= 1.0
    assert p.ranking[0] == (p.intent, p.confidence)
    assert [prob for _, prob in p.ranking] == sorted((prob for _, prob in p.ranking), reverse=True)
    assert sum(prob for _, prob in p.ranking) <= 1.0 + 1e-6
    assert clf.predict("what payment methods do you accept").intent == "payment_methods"
    many = clf.predict_many(["快递到哪了", "讲个笑话"])
    assert [x.intent for x in many] == ["logistics", OOS]
    assert many[0].confidence == pytest.approx(clf.predict("快递到哪了").confidence, abs=1e-5)
    clf.save(tmp_path / kind)
    again = load_classifier(tmp_path / kind)
    q = again.predict("我忘记密码了，登录不上去")
    assert q.intent == p.intent
    assert q.confidence == pytest.approx(p.confidence, abs=1e-5)
