from __future__ import annotations

from hermes_desk.nlu import (
    OOS,
    DialogueState,
    IntentPrediction,
    asks_the_same_of,
    is_acknowledgement,
    is_follow_up,
    is_short,
    is_slot_only,
    only_changes_to,
)


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


def test_acknowledgement_is_out_of_scope_even_in_a_conversation() -> None:
    state = DialogueState(threshold=0.5)
    state.resolve("我的快递怎么还没到", pred("logistics", 0.9))
    for text in ("好的谢谢", "ok thanks", "行吧，知道了"):
        assert state.resolve(text, pred("logistics", 0.6)).out_of_scope
    assert state.intent == "logistics"
    assert is_acknowledgement("好的，谢谢你")
    assert not is_acknowledgement("好的，那帮我退货")


def test_english_slot_only_turn_keeps_intent() -> None:
    state = DialogueState(threshold=0.5)
    state.resolve("I want to return this", pred("return_exchange", 0.9))
    r = state.resolve("my order number is 123456789012", pred("order_status", 0.95))
    assert (r.intent, r.carried) == ("return_exchange", True)


def test_short_turn_keeps_intent_when_still_ranked() -> None:
    state = DialogueState(threshold=0.5)
    state.resolve("我的快递怎么还没到", pred("logistics", 0.9))
    r = state.resolve("能快点吗", pred("payment_methods", 0.6, ("logistics", 0.2)))
    assert (r.intent, r.carried) == ("logistics", True)
    # Not ranked at all: the short turn is a new request.
    r = state.resolve("忘记密码了", pred("password_reset", 0.7, ("complaint", 0.2)))
    assert (r.intent, r.carried) == ("password_reset", False)


def test_very_confident_elliptical_turn_changes_topic() -> None:
    state = DialogueState(threshold=0.5)
    state.resolve("我的订单到哪了", pred("order_status", 0.9))
    r = state.resolve("那我要投诉", pred("complaint", 0.95))
    assert (r.intent, r.carried) == ("complaint", False)
    r = state.resolve("那什么时候处理", pred("kb_question", 0.8))
    assert (r.intent, r.carried) == ("complaint", True)


def test_unsure_turn_mid_conversation_keeps_intent() -> None:
    state = DialogueState(threshold=0.5)
    state.resolve("衣服小了想换一下", pred("return_exchange", 0.9))
    r = state.resolve("不过这件我挺喜欢的颜色也好看", pred("kb_question", 0.35))
    assert (r.intent, r.carried) == ("return_exchange", True)


def test_is_short() -> None:
    assert is_short("能快点吗") and is_short("is that right?")
    assert not is_short("我上周买的耳机左边没有声音") and not is_short("12345")


def test_context_model_answer_replaces_the_carry_over_rules() -> None:
    state = DialogueState(threshold=0.5)
    state.resolve("我要退货", pred("return_exchange", 0.9), in_context=pred("return_exchange", 0.9))
    # The classifier alone reads a refund question as logistics; the context model knows better.
    r = state.resolve(
        "大概几天到账", pred("logistics", 0.9), in_context=pred("return_exchange", 0.8)
    )
    assert (r.intent, r.carried) == ("return_exchange", True)
    assert state.last_text == "大概几天到账"
    # Unsure in context: the conversation keeps its intent.
    r = state.resolve("那个呢", pred("kb_question", 0.6), in_context=pred("kb_question", 0.4))
    assert r.intent == "return_exchange"
    # A confident topic switch is taken.
    r = state.resolve(
        "能用花呗吗", pred("payment_methods", 0.9), in_context=pred("payment_methods", 0.7)
    )
    assert r.intent == "payment_methods"
    # Unsure in context, leaning to the conversation's intent, while the turn alone is sure of
    # another: the switch is taken ("另外我还有个包裹…到哪了" after a return).
    state.resolve("我要退货", pred("return_exchange", 0.9), in_context=pred("return_exchange", 0.9))
    r = state.resolve(
        "另外我还有个包裹到哪了", pred("logistics", 0.99), in_context=pred("return_exchange", 0.48)
    )
    assert (r.intent, r.carried) == ("logistics", False)
    r = state.resolve("那个呢", pred("kb_question", 0.6), in_context=pred("logistics", 0.4))
    assert r.intent == "logistics", "not sure alone either: the conversation keeps its intent"
    state.resolve(
        "能用花呗吗", pred("payment_methods", 0.9), in_context=pred("payment_methods", 0.7)
    )
    # Confident small talk is out of scope, and so is an unsure first turn.
    r = state.resolve("今天天气不错", pred(OOS, 0.9), in_context=pred(OOS, 0.8))
    assert r.out_of_scope and state.intent == "payment_methods"
    first = DialogueState(threshold=0.5)
    assert first.resolve(
        "嗯那个", pred("logistics", 0.6), in_context=pred("logistics", 0.3)
    ).out_of_scope


def test_a_switch_the_context_model_doubts_is_taken_too_unsure_to_act_on() -> None:
    """ "能帮我弄一下吗" after a forgotten password: the turn alone reads a return at 0.86, the
    context model is unsure. The switch is taken, but ``unsure``: answered, no write put
    forward. Surer alone (0.95 and up), it is a request like any other."""
    state = DialogueState(threshold=0.5)
    state.resolve(
        "忘记密码了", pred("password_reset", 0.99), in_context=pred("password_reset", 0.99)
    )
    r = state.resolve(
        "能帮我弄一下吗", pred("return_exchange", 0.86), in_context=pred("kb_question", 0.33)
    )
    assert (r.intent, r.unsure) == ("return_exchange", True)
    sure = state.resolve(
        "我要退货", pred("return_exchange", 0.96), in_context=pred("kb_question", 0.33)
    )
    assert (sure.intent, sure.unsure) == ("return_exchange", False)


def test_another_record_named_is_a_new_request() -> None:
    """The context model leans on the conversation's intent; a turn that names a record the
    conversation has not named and says it is another one is read by itself."""
    state = DialogueState(threshold=0.5)
    state.resolve(
        "我要退货退款，订单202405231122",
        pred("return_exchange", 0.99),
        in_context=pred("return_exchange", 0.97),
    )
    state.slots["order_id"] = "202405231122"
    r = state.resolve(
        "另外我另一个订单202405100789到哪了",
        pred("logistics", 0.99),
        in_context=pred("return_exchange", 0.75),
    )
    assert (r.intent, r.carried) == ("logistics", False)
    # The same order again, or another order with no word that it is another request: the
    # context model's answer stands.
    for text in ("另外订单202405100789的退货怎么寄", "订单 2024-0510-0789 到哪了"):
        state = DialogueState(threshold=0.5, intent="return_exchange")
        state.last_text = "我要退货，订单202405100789"
        r = state.resolve(text, pred("logistics", 0.99), in_context=pred("return_exchange", 0.75))
        assert r.intent == "return_exchange", text
    # Another number said in passing (a phone) without "another": the conversation's intent.
    state = DialogueState(threshold=0.5, intent="order_status")
    r = state.resolve(
        "用的手机号是18602937741", pred("password_reset", 0.9), in_context=pred("order_status", 0.8)
    )
    assert r.intent == "order_status"
    # Unsure alone: not taken either — unless at least ``another_record`` (0.4) sure: with the
    # marker and the new record, "另外订单…的退货到哪一步了" reads a return at 0.49 alone.
    # Taken under the threshold, the reading is unsure (enough to answer, not to act on).
    for alone, expected, unsure in (
        (0.3, "logistics", False),
        (0.45, "return_exchange", True),
        (0.9, "return_exchange", False),
    ):
        state = DialogueState(threshold=0.5, intent="logistics")
        r = state.resolve(
            "另外订单202405100789的退货到哪一步了",
            pred("return_exchange", alone),
            in_context=pred("logistics", 0.99),
        )
        assert (r.intent, r.unsure) == (expected, unsure), alone


def test_both_readings_unsure_of_another_intent_take_it_for_a_new_record() -> None:
    """ "好的谢谢，另外我那个<order>还要多久到" right after a password reset: the context model
    and the turn alone both read logistics, each under the threshold; the conversation's reset
    was kept and its "密码已重置" said again, the order question dropped. With a record the
    conversation has not named, the turn is the new intent — unsure, so nothing is put forward.
    Without a new record, or when the readings disagree, the conversation's intent stands."""
    for text in ("好的谢谢，另外我那个202405201234还要多久到", "谢谢 我那个202405201234还要多久到"):
        state = DialogueState(threshold=0.5, intent="password_reset")
        r = state.resolve(text, pred("logistics", 0.46), in_context=pred("logistics", 0.45))
        assert (r.intent, r.unsure, r.carried) == ("logistics", True, False), text
    for said, alone in (("那还要多久到", "logistics"), (text, "order_status")):
        state = DialogueState(threshold=0.5, intent="password_reset")
        r = state.resolve(said, pred(alone, 0.46), in_context=pred("logistics", 0.45))
        assert r.intent == "password_reset", (said, alone)


def test_a_sure_question_about_another_record_is_read_by_itself() -> None:
    """ "where is order B?" after a return of order A read as the return (0.66 in context) and
    the waiting return was shown again. A question naming a record besides the one the
    conversation named, that the turn alone surely reads as another intent, is that intent —
    not a question whether it may be done ("能退吗 订单B"), nor the first record named."""

    def after_a_return(text: str, alone: str = "logistics", sure: float = 0.9) -> str:
        state = DialogueState(threshold=0.5, intent="return_exchange")
        state.last_text = "I want to return order 202405181001"
        state.slots["order_id"] = "202405181001"
        return state.resolve(
            text, pred(alone, sure), in_context=pred("return_exchange", 0.66)
        ).intent

    assert after_a_return("where is order 202405201234?") == "logistics"
    assert after_a_return("thanks. where is order 202405201234?") == "logistics"
    assert after_a_return("where is order 202405181001?") == "return_exchange"  # the same one
    assert after_a_return("where is order 202405201234?", sure=0.45) == "return_exchange"
    assert after_a_return("能退吗 订单202405201234", alone="kb_question") == "return_exchange"
    first = DialogueState(threshold=0.5, intent="kb_question")
    first.last_text = "我想修改收货地址"
    r = first.resolve(
        "订单202405241357还没发货，能改吗",
        pred("order_status", 0.9),
        in_context=pred("kb_question", 0.7),
    )
    assert r.intent == "kb_question", "the first record the conversation names is no other one"


def test_a_sure_request_for_another_intent_is_taken_whatever_its_follow_up_marker() -> None:
    state = DialogueState(threshold=0.5)
    state.resolve(
        "订单202405220505的包裹到哪了", pred("logistics", 0.9), in_context=pred("logistics", 0.9)
    )
    r = state.resolve(
        "那我不要了，退款吧", pred("return_exchange", 0.99), in_context=pred("logistics", 0.7)
    )
    assert (r.intent, r.carried) == ("return_exchange", False)
    # So is one naming only records the conversation named ("我要退货，订单A和B" after asking
    # the status of A and B: the context model kept the status at 0.9).
    state = DialogueState(threshold=0.5)
    state.resolve("订单202405201234和202405181001是什么状态", pred("order_status", 0.9),
                  in_context=pred("order_status", 0.9))  # fmt: skip
    r = state.resolve("我要退货，订单202405181001和202405201234", pred("return_exchange", 0.958),
                      in_context=pred("order_status", 0.9))  # fmt: skip
    assert (r.intent, r.carried) == ("return_exchange", False)
    # A question, a request naming a number not named before (a phone said in passing), or one
    # read less surely alone: the conversation's intent, as the context model has it.
    for text, alone in (
        ("那退款要多久？", 0.99),
        ("用的手机号是18602937741", 0.99),
        ("那我要退货", 0.9),
    ):
        state = DialogueState(threshold=0.5, intent="logistics")
        r = state.resolve(text, pred("return_exchange", alone), in_context=pred("logistics", 0.7))
        assert r.intent == "logistics", text


def test_an_unsure_first_turn_that_names_a_record_is_not_small_talk() -> None:
    state = DialogueState(threshold=0.5)
    r = state.resolve(
        "my keyboard order 202405120345 never arrived",
        pred("logistics", 0.71),
        in_context=pred("logistics", 0.47),
    )
    assert (r.intent, r.out_of_scope, r.unsure) == ("logistics", False, False)  # 0.71 alone
    # Both in scope but not the same intent: the surer reading, unsure whatever its confidence
    # (a return at 0.50 alone, the order's status at 0.42 in context, put a return forward).
    lost = "my keyboard order 202405120345 says lost, what now?"
    for alone, in_context, chosen in (
        (pred("logistics", 0.536), pred("order_status", 0.44), "logistics"),
        (pred("logistics", 0.40), pred("order_status", 0.44), "order_status"),
        (pred("return_exchange", 0.503), pred("order_status", 0.425), "return_exchange"),
    ):
        r = DialogueState(threshold=0.5).resolve(lost, alone, in_context=in_context)
        assert (r.intent, r.out_of_scope, r.unsure) == (chosen, False, True)
    # A sure first turn is not unsure.
    sure = DialogueState(threshold=0.5).resolve(
        lost, pred("logistics", 0.9), in_context=pred("logistics", 0.8)
    )
    assert (sure.intent, sure.unsure) == ("logistics", False)
    # No record named, or a reading out of scope: out of scope, as before.
    for text, alone in (("my keyboard never arrived", "logistics"), ("订单202405120345", "oos")):
        r = DialogueState(threshold=0.5).resolve(
            text, pred(alone, 0.71), in_context=pred("logistics", 0.47)
        )
        assert r.out_of_scope, text


def test_an_unsure_first_turn_that_says_what_is_wrong_is_not_small_talk() -> None:
    # "我买的耳机坏了" read return_exchange 0.4992 in context: "this I cannot help with" before.
    for text in ("我买的耳机坏了", "收到的杯子是碎的", "my headphones stopped working"):
        r = DialogueState(threshold=0.5).resolve(
            text, pred("return_exchange", 0.46), in_context=pred("return_exchange", 0.4992)
        )
        assert (r.intent, r.out_of_scope, r.unsure) == ("return_exchange", False, True), text
    # Saying nothing wrong, or read out of scope either way, it stays out of scope; and later in
    # a conversation the conversation's intent is kept as before.
    for text, alone in (("我买了一副耳机", "return_exchange"), ("耳机坏了", OOS)):
        r = DialogueState(threshold=0.5).resolve(
            text, pred(alone, 0.46), in_context=pred("return_exchange", 0.4992)
        )
        assert r.out_of_scope, text
    # naming what the service is about ("any news on my lost parcel?" at 0.466) is no small talk
    subjects = ("parcel", "包裹")
    for text in ("any news on my lost parcel?", "上次那个包裹呢"):
        r = DialogueState(threshold=0.5, subjects=subjects).resolve(
            text, pred("logistics", 0.42), in_context=pred("logistics", 0.466)
        )
        assert (r.intent, r.out_of_scope, r.unsure) == ("logistics", False, True), text
    plain = DialogueState(threshold=0.5, subjects=subjects).resolve(
        "any news for me?", pred("logistics", 0.42), in_context=pred("logistics", 0.466)
    )
    assert plain.out_of_scope
    later = DialogueState(threshold=0.5, intent="logistics")
    r = later.resolve("耳机坏了", pred("return_exchange", 0.46), in_context=pred("logistics", 0.4))
    assert (r.intent, r.out_of_scope) == ("logistics", False)


def test_rules_that_come_before_the_context_model() -> None:
    state = DialogueState(threshold=0.5, intent="order_status")
    # A bare value answers the open request whatever the model says; thanks are out of scope.
    r = state.resolve("202405201234", pred(OOS, 0.5), in_context=pred("logistics", 0.9))
    assert r.intent == "order_status"
    r = state.resolve("cheers", pred("kb_question", 0.6), in_context=pred("kb_question", 0.9))
    assert r.out_of_scope


def test_state_round_trips_the_last_turn() -> None:
    state = DialogueState(threshold=0.5)
    state.resolve("我的快递怎么还没到", pred("logistics", 0.9))
    again = DialogueState.from_dict(state.to_dict())
    assert (again.intent, again.last_text, again.turns) == ("logistics", "我的快递怎么还没到", 1)


def test_only_changes_to_reads_a_value_whose_subject_is_the_turn_before() -> None:
    said = [
        "改成北京市朝阳区建国路88号",
        "那就换成大一号的",
        "change it to 88 Jianguo Road, Beijing",
        "ok, send it to my office instead",
        "the new address is 12 Park Lane",
    ]
    assert all(only_changes_to(text) for text in said)
    # a request that names its subject, a question, an alternative asked about
    other = [
        "我想改一下收货地址",
        "能改成北京吗",
        "how do I change it to another address?",
        "发到邮箱还是要自己下载",
    ]
    assert not any(only_changes_to(text) for text in other)


def test_a_number_said_as_what_it_is_is_only_a_slot_value() -> None:
    said = [
        "it is 202405181001",
        "this is 202405181001",
        "that's 202405181001",
        "订单号是202405181001",
        "202411030861 is the order",
    ]
    assert all(is_slot_only(text) for text in said)
    assert not is_slot_only("it is broken, order 202405181001")
    assert not is_slot_only("202411030861 is the order shipped?")


def test_another_record_asked_the_same_of() -> None:
    """ "and for 202405181001?" after a policy question asks it of that order."""
    for text in ("and for 202405181001?", "what about order 202405181001", "那202405181001呢",
                 "订单202405181001呢", "and 202405181001?"):  # fmt: skip
        assert asks_the_same_of(text), text
    for text in ("202405181001", "202405181001能退吗", "还有202405181001到哪了",
                 "and for 202405181001 can I get a refund?"):  # fmt: skip
        assert not asks_the_same_of(text), text


def test_an_order_number_with_its_possessive_is_only_that_number() -> None:
    """ "订单…的" after "发票怎么开" read as a return (0.89) and put one forward: it only says
    which order the invoice is for, and keeps the conversation's intent."""
    assert is_slot_only("订单202405181001的") and is_slot_only("202405181001的。")
    assert not is_slot_only("202405181001的杯子")
    state = DialogueState(threshold=0.5, intent="kb_question")
    r = state.resolve(
        "订单202405181001的",
        pred("return_exchange", 0.89),
        in_context=pred("return_exchange", 0.89),
    )
    assert (r.intent, r.carried) == ("kb_question", True)
