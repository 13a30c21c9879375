from __future__ import annotations

from hermes_desk.nlu import OOS, DialogueState, IntentPrediction, is_follow_up


def pred(intent: str, conf: float, *rest: tuple[str, float]) -> IntentPrediction:
    return IntentPrediction(intent, conf, ((intent, conf), *rest))


def test_confident_prediction_is_taken() -> None:
    state = DialogueState(threshold=0.5)
    r = state.resolve("我的订单到哪了", pred("order_status", 0.9))
    assert (r.intent, r.carried) == ("order_status", False)


def test_unsure_without_context_is_out_of_scope() -> None:
    r = DialogueState(threshold=0.5).resolve("嗯嗯", pred("logistics", 0.3))
    assert r.out_of_scope


def test_elliptical_follow_up_keeps_previous_intent() -> None:
    state = DialogueState(threshold=0.5)
    state.resolve("我的快递怎么还没到", pred("logistics", 0.9))
    r = state.resolve("那什么时候能到？", pred("kb_question", 0.3))
    assert (r.intent, r.carried) == ("logistics", True)


def test_slot_only_turn_keeps_intent_even_if_classifier_disagrees() -> None:
    state = DialogueState(threshold=0.5)
    state.resolve("我想退货", pred("return_exchange", 0.8))
    r = state.resolve("订单号是123456789012", pred("order_status", 0.9))
    assert r.intent == "return_exchange"


def test_confident_small_talk_stays_out_of_scope() -> None:
    state = DialogueState(threshold=0.5)
    state.resolve("我的订单到哪了", pred("order_status", 0.9))
    r = state.resolve("今天天气怎么样", pred(OOS, 0.95))
    assert r.out_of_scope
    assert state.intent == "order_status"


def test_slots_carry_over_and_filter_by_schema() -> None:
    state = DialogueState()
    state.update_slots({"order_id": "123456789012"})
    state.update_slots({"date": "2026-05-20", "order_id": None})
    assert state.slots == {"order_id": "123456789012", "date": "2026-05-20"}
    assert state.slots_for({"order_id": {"type": "string"}}) == {"order_id": "123456789012"}
    restored = DialogueState.from_dict(state.to_dict(), threshold=0.4)
    assert restored.slots == state.slots and restored.threshold == 0.4


def test_is_follow_up() -> None:
    assert is_follow_up("那什么时候能到？")
    assert is_follow_up("what about the refund?")
    assert is_follow_up("13800138000")
    assert not is_follow_up("我要投诉快递员")
