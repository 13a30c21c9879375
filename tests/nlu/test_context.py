"""The context model: trained on labelled dialogues, it reads an elliptical turn by the
conversation it belongs to; cached with the classifier."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_desk.config import NluSettings
from hermes_desk.errors import MisuseError
from hermes_desk.nlu import (
    ContextModel,
    Conversation,
    DialogueState,
    Example,
    load_or_train,
    train_turn_reader,
)
from hermes_desk.nlu.cache import model_path
from hermes_desk.nlu.context import TurnReader, read_conversation, training_views

REFUND = [
    "我要退款",
    "退款申请提交了",
    "想把这件退了",
    "申请退货退款",
    "退货的钱什么时候退",
    "我要退货",
]
SHIPPING = [
    "快递到哪了",
    "物流一直没更新",
    "包裹什么时候送到",
    "快递还在路上吗",
    "查下物流",
    "配送太慢了",
]
CHAT = ["你好", "今天天气不错", "讲个笑话", "你是机器人吗", "早上好", "吃饭了吗"]
FOLLOW_UPS = ["多久能好", "大概要几天", "还要等多久", "一般多长时间", "要多久啊", "几天能好"]


def _examples() -> list[Example]:
    return [
        *(Example(t, "return_exchange") for t in REFUND),
        *(Example(t, "logistics") for t in SHIPPING),
        *(Example(t, "oos") for t in CHAT),
    ]


def _dialogues() -> list[Conversation]:
    """The same "how long?" follow-ups after a refund and after a parcel question."""
    out = []
    for i, follow_up in enumerate(FOLLOW_UPS * 3):
        for opener, intent in ((REFUND[i % 6], "return_exchange"), (SHIPPING[i % 6], "logistics")):
            turns = (
                Example(opener, intent),
                Example(follow_up, intent),
                Example(CHAT[i % 6], "oos"),
            )
            out.append(Conversation(f"{intent}-{i}", turns))
    return out


def test_elliptical_turn_takes_the_intent_of_its_conversation() -> None:
    reader = train_turn_reader(_examples(), _dialogues(), "linear", folds=3)
    assert reader.context is not None
    after_refund = read_conversation(reader, ["我想退货退款", "那大概多久"], threshold=0.5)
    after_parcel = read_conversation(reader, ["我的快递到哪了", "那大概多久"], threshold=0.5)
    assert after_refund == ["return_exchange", "return_exchange"]
    assert after_parcel == ["logistics", "logistics"]


def test_without_dialogues_there_is_no_context_model() -> None:
    reader = train_turn_reader(_examples(), [], "linear")
    assert reader.context is None
    assert read_conversation(reader, ["快递到哪了"], threshold=0.5) == ["logistics"]
    off = train_turn_reader(_examples(), _dialogues(), "linear", context=False)
    assert off.context is None


def test_load_or_train_saves_and_reloads_the_context_model(tmp_path: Path) -> None:
    settings = NluSettings(classifier="linear")
    dialogues = _dialogues()
    first = load_or_train(_examples(), settings, tmp_path, dialogues=dialogues)
    target = model_path(_examples(), settings, tmp_path, dialogues)
    assert (target / "context.pkl").is_file()
    again = load_or_train(_examples(), settings, tmp_path, dialogues=dialogues)
    assert again.context is not None
    texts = ["申请退款", "要多久啊"]
    assert read_conversation(again, texts, 0.5) == read_conversation(first, texts, 0.5)
    # Other dialogues (or context switched off) are another model.
    fewer = dialogues[:-1]
    assert model_path(_examples(), settings, tmp_path, fewer) != target
    off = NluSettings(classifier="linear", context_model=False)
    assert model_path(_examples(), off, tmp_path, dialogues) != target


def test_bad_use_is_refused() -> None:
    classifier = train_turn_reader(_examples(), [], "linear").classifier
    untrained = ContextModel(["logistics", "oos", "return_exchange"])
    with pytest.raises(MisuseError, match="not trained"):
        TurnReader(classifier, untrained).read("快递到哪了", DialogueState())
    views, gold = training_views(classifier, _dialogues()[:2])
    with pytest.raises(MisuseError, match="not among the intents"):
        ContextModel(["logistics", "oos"]).fit(views, gold)


def test_probabilities_are_sklearns_logistic_regression() -> None:
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    classifier = train_turn_reader(_examples(), [], "linear").classifier
    views, gold = training_views(classifier, _dialogues())
    model = ContextModel(sorted(set(gold)))
    model.fit(views, gold)
    reference = LogisticRegression(C=model.c, max_iter=2000)
    rows = [model._features(v) for v in views]
    reference.fit(rows, gold)
    expected = reference.predict_proba(rows)
    got = np.array([[p for _, p in model.probabilities(v)] for v in views])
    assert list(reference.classes_) == [label for label, _ in model.probabilities(views[0])]
    assert np.allclose(got, expected, atol=1e-9)


def test_training_reports_progress_up_to_done() -> None:
    shares: list[float] = []
    train_turn_reader(_examples(), _dialogues(), "linear", folds=3, progress=shares.append)
    assert len(shares) == 5  # the classifier, three folds, the context model
    assert shares == sorted(shares) and shares[-1] == 1.0 and 0 < shares[0] < 1


def test_the_context_model_of_an_ensemble_reads_its_svm_member() -> None:
    from hermes_desk.nlu import build_classifier
    from hermes_desk.nlu.context import context_reader
    from hermes_desk.nlu.ensemble import EnsembleIntentClassifier

    ensemble = build_classifier("ensemble")
    assert isinstance(ensemble, EnsembleIntentClassifier)
    assert context_reader(ensemble) is ensemble.linear
    linear = build_classifier("linear")
    assert context_reader(linear) is linear
