"""The conversation's own moves: a request the customer takes back is withdrawn, never left for
the agent to approve; only what the customer named is taken back; and a request never put in is
said to be so, not asked about."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import pytest

from hermes_desk.actions import Proposal
from hermes_desk.assist.converse import after_the_withdrawal, conversation_plan, with_the_rest
from hermes_desk.assist.decide import asks_what_no_tool_does
from hermes_desk.assist.records import Clause, Lookup, Plan, ProposedWrite
from hermes_desk.nlu import request_act
from hermes_desk.packs import Pack

from .test_decide import _waiting, reading


def _proposal(
    pid: str, order: str, status: str = "proposed", tool: str = "create_return", **extra: Any
) -> Proposal:
    return Proposal(
        id=pid, tenant="default", user="u1", session_id=extra.pop("session_id", "s"), tool=tool,
        arguments={"order_id": order, "user_id": "u1"}, why=extra.pop("why", {}), explanation="",
        language="zh",
        created_at=float(pid[-1]), expires_at=600, status=status,  # type: ignore[arg-type]
        **extra,
    )  # fmt: skip


def _plan(pack: Pack, text: str, proposals: list[Proposal], **extra: Any) -> Any:
    turn = reading(pack, "return_exchange", text, proposals=proposals, **extra)
    return conversation_plan(turn, pack.acts, lambda _text: [])


@pytest.mark.parametrize(
    "text",
    [
        "算了不退了",
        "我还是留着吧",
        "actually never mind, I'll keep it",
        "cancel my return request please",
        # the return named, then a closing: it read as a complaint and put a ticket forward
        "退货的事就不用了",
        "退货就算了 谢谢",
        "never mind the return",
    ],
)
def test_a_request_taken_back_withdraws_what_waits(pack: Pack, text: str) -> None:
    plan = _plan(pack, text, [_proposal("act_1", "202405181001"), _proposal("act_2", "2024")])
    assert plan is not None and plan.situation is None  # the act stage says how it came out
    assert plan.withdraw == ("act_1", "act_2") and plan.withdraw_workflow is None
    assert plan.lookups == () and plan.writes == () and plan.workflow is None


def test_naming_an_order_withdraws_only_its_proposal(pack: Pack) -> None:
    waiting = [_proposal("act_1", "202405181001"), _proposal("act_2", "202405201234")]
    order = {"order_id": "202405201234"}
    plan = _plan(pack, "订单202405201234不退了", waiting, slots=order)
    assert plan is not None and plan.withdraw == ("act_2",)


@pytest.mark.parametrize(
    "text",
    ["算了", "never mind", "不用了", "退货要多久", "我要退货", "我要退 不换了",
     "I changed my mind, I want my money back"],
)  # fmt: skip
def test_a_closing_or_a_request_withdraws_nothing(pack: Pack, text: str) -> None:
    """Bare "算了" / "never mind" close a conversation: nothing is withdrawn on them when
    nothing the conversation's intent put in waits (here: proposed for no intent)."""
    plan = _plan(pack, text, [_proposal("act_1", "202405181001")])
    assert plan is None or plan.withdraw == ()


def test_with_nothing_waiting_the_last_approved_is_named_not_withdrawn(pack: Pack) -> None:
    """The act stage finds it decided and the reply says it went ahead (withdraw_too_late)."""
    done = [
        _proposal("act_1", "202405181001", status="rejected"),
        _proposal("act_2", "202405181001", status="executed"),
    ]
    plan = _plan(pack, "算了不退了", done)
    assert plan is not None and plan.withdraw == ("act_2",)


@pytest.mark.parametrize(
    "text, slots, after_a_rejected_return",
    [("算了不退了", {}, "not_going_ahead"), ("我不退了", {}, "not_going_ahead"),
     ("never mind, I'll keep it", {}, "not_going_ahead"), ("撤回申请", {}, "not_going_ahead"),
     ("订单202405181001不退了", {"order_id": "202405181001"}, "not_going_ahead"),
     ("订单202405201234不退了", {"order_id": "202405201234"}, "nothing_to_withdraw"),
     ("算了，不投诉了", {}, "nothing_to_withdraw")],
)  # fmt: skip
def test_taking_back_what_was_never_put_in_is_answered_as_such(
    pack: Pack, text: str, slots: dict[str, str], after_a_rejected_return: str
) -> None:
    """Nothing waits and nothing was approved: the reply says nothing was put in — the turn is
    not read as a new request ("我不退了" asked for an order number to return). After an agent
    rejected the return it names, it says the request will not be done (it was put in)."""
    rejected = [_proposal("act_1", "202405181001", status="rejected")]
    for proposals, situation in (([], "nothing_to_withdraw"), (rejected, after_a_rejected_return)):
        plan = _plan(pack, text, proposals, slots=slots)
        assert plan is not None and plan.situation == situation
        assert plan.withdraw == () and plan.lookups == () and plan.writes == ()


@pytest.mark.parametrize("text", ["我不退了，我要换货", "I'll keep it but the other one is broken"])
def test_a_withdrawal_that_says_more_is_read_as_usual(pack: Pack, text: str) -> None:
    assert _plan(pack, text, []) is None


def test_a_withdrawal_takes_back_only_what_it_names(pack: Pack) -> None:
    """ "算了，不投诉了" with a return and a ticket waiting withdraws the ticket (both, before)."""
    waiting = [
        _proposal("act_1", "202405181001"),
        _proposal("act_2", "202405201234", tool="create_ticket"),
    ]
    assert _plan(pack, "算了，不投诉了", waiting).withdraw == ("act_2",)
    assert _plan(pack, "算了，不退了", waiting).withdraw == ("act_1",)
    assert _plan(pack, "drop the complaint", waiting).withdraw == ("act_2",)
    assert _plan(pack, "撤回申请", waiting).withdraw == ("act_1", "act_2")  # names none: all
    only_return = waiting[:1]
    assert _plan(pack, "算了，不投诉了", only_return).situation == "nothing_to_withdraw"


def test_taking_back_a_ticket_an_earlier_contact_opened_says_it_stands(pack: Pack) -> None:
    """ "不投诉了" in the contact after the one whose ticket an agent opened was told nothing
    was put in: that ticket is recalled as decided (it stands); a return an earlier contact
    opened is not what "不投诉了" takes back, and a turn that says more is read as usual."""
    ticket = _proposal("act_7", "202405201234", status="executed", tool="create_ticket",
                       session_id="before", result={"ticket_id": "TK1"})  # fmt: skip
    returned = _proposal("act_8", "202405181001", status="executed", session_id="before")
    for text in ("算了，不投诉了", "I want to cancel the complaint"):
        plan = _plan(pack, text, [], earlier=[ticket, returned])
        assert plan is not None and plan.withdraw == ("act_7",), text
        assert plan.situation is None and plan.writes == ()
    assert _plan(pack, "算了，不投诉了", [], earlier=[returned]).situation == "nothing_to_withdraw"
    mine = _proposal("act_9", "202405201234", tool="create_ticket")
    assert _plan(pack, "算了，不投诉了", [mine], earlier=[ticket]).withdraw == ("act_9",)


@pytest.mark.parametrize(
    "text", ["我想起来了，不用重置了", "never mind, I remember my password", "撤回申请"]
)
def test_a_workflow_waiting_for_the_customer_is_taken_back(pack: Pack, text: str) -> None:
    plan = _plan(pack, text, [], waiting=_waiting("sms_code"))
    assert plan is not None and plan.withdraw_workflow == "wf_1" and plan.withdraw == ()
    assert plan.workflow is None and plan.lookups == ()


def test_a_workflow_is_not_taken_back_by_what_names_another_request(pack: Pack) -> None:
    """ "不退了" while the reset waits for the code leaves the reset alone; a workflow waiting
    for an agent is taken back through its proposal, never here."""
    plan = _plan(pack, "不退了", [], waiting=_waiting("sms_code"))
    assert plan is not None and plan.withdraw_workflow is None
    approval = _plan(pack, "不用重置了", [], waiting=_waiting("approval:reset"))
    assert approval is not None and approval.withdraw_workflow is None


@pytest.mark.parametrize(
    "text",
    ["我不退了，我要换货", "算了还是换货吧", "actually I'd rather exchange it for a larger one"],
)
def test_a_withdrawal_that_says_more_has_the_rest_answered(pack: Pack, text: str) -> None:
    plan = _plan(pack, text, [_proposal("act_1", "202405181001")])
    assert plan is not None and plan.withdraw == ("act_1",) and plan.answers_rest


def test_asking_whether_to_switch_withdraws_nothing(pack: Pack) -> None:
    """ "can I exchange instead?" asks; it decides nothing: the return still waits."""
    waiting = [_proposal("act_1", "202405181001")]
    for text in ("can I exchange instead of a return?", "能改成换货吗"):
        plan = _plan(pack, text, waiting, act="question")
        assert plan is None or plan.withdraw == (), text
    assert _plan(pack, "改成换货吧", waiting).withdraw == ("act_1",)


def test_a_value_named_for_something_else_does_not_pick_what_is_withdrawn(pack: Pack) -> None:
    """ "算了不退了，另外订单B到哪了" while the return of order A waits left the return waiting (B
    picked nothing): the return is withdrawn and the rest asks about B."""
    waiting = [_proposal("act_1", "202405181001")]
    other = {"order_id": "202405201234"}
    plan = _plan(pack, "算了不退了，另外订单202405201234到哪了", waiting, slots=other)
    assert plan is not None and plan.withdraw == ("act_1",) and plan.answers_rest
    named = {"order_id": "202405201234"}
    both = [*waiting, _proposal("act_2", "202405201234")]
    assert _plan(pack, "订单202405201234不退了", both, slots=named).withdraw == ("act_2",)
    assert _plan(pack, "订单202405201234，不退了", both, slots=named).withdraw == ("act_2",)


def test_the_rest_is_followed_only_when_it_looks_things_up() -> None:
    withdrawal = Plan("return_exchange", "withdrawn", withdraw=("act_1",), answers_rest=True)
    answer = Plan("kb_question", "answered", lookups=(Lookup("kb_search", {"query": "换货"}),))
    merged = with_the_rest(withdrawal, answer)
    assert merged.withdraw == ("act_1",) and merged.lookups == answer.lookups
    assert merged.answer_intent == "kb_question" and merged.answers_rest
    write = Plan("complaint", "ticket", writes=(ProposedWrite("create_ticket", {}, "r"),))
    for rest in (write, Plan("return_exchange", "asks", missing_slots=("order_id",))):
        alone = with_the_rest(withdrawal, rest)
        assert alone.withdraw == ("act_1",) and not alone.answers_rest and alone.lookups == ()


def test_the_rest_is_read_without_what_the_withdrawal_took_back(pack: Pack) -> None:
    """ "actually I'll keep it, what are your hours?" with the return waiting: the rest was read
    with the waiting return (shown again, the question unanswered) and its order (the hours
    searched with the order's status). The rest has its own words, the other proposals, and
    the values the turn names itself."""
    order, other = "202405231122", "202405201234"
    waiting = _waiting("approval:create_return")
    gone = _proposal("act_1", order, workflow_id=waiting.id)
    kept = _proposal("act_2", other, tool="create_ticket")
    turn = reading(pack, "return_exchange", "actually I'll keep it, what are your hours?",
                   proposals=[gone, kept], waiting=waiting, found={},
                   slots={"order_id": order, "phone": "13800138000"})  # fmt: skip
    plan = Plan("return_exchange", "withdrawn", withdraw=("act_1",), answers_rest=True)
    rest = after_the_withdrawal(turn, plan, pack.acts)
    assert rest.text == "actually  , what are your hours?" and rest.waiting is None
    assert rest.proposals == [kept] and rest.slots == {"phone": "13800138000"}
    # The turn names the order itself: it stays ("订单…不退了，能开发票吗").
    named = replace(turn, found={"order_id": order})
    assert after_the_withdrawal(named, plan, pack.acts).slots["order_id"] == order
    # Nothing withdrawn from that workflow: it still waits.
    nothing = Plan("return_exchange", "withdrawn", answers_rest=True)
    assert after_the_withdrawal(turn, nothing, pack.acts).waiting == waiting


def _declined(pack: Pack, text: str, proposals: list[Proposal], **extra: Any) -> Any:
    turn = reading(pack, "oos", text, proposals=proposals, **extra)
    workflows = {name: spec.workflow for name, spec in pack.intents.items()}
    return conversation_plan(turn, pack.acts, lambda _text: [], workflows)


@pytest.mark.parametrize(
    "text",
    ["算了不用了", "不用了", "算了吧，不需要了", "never mind", "Nevermind.", "不用了，谢谢",
     # "actually never mind" was taken as a remark, the return left for the agent to approve
     "actually never mind", "forget it", "no need, thanks", "其实算了"],
)  # fmt: skip
def test_a_bare_decline_right_after_a_request_takes_it_back(pack: Pack, text: str) -> None:
    """ "我要投诉…", then "算了不用了": the ticket was left for the agent to approve and the
    reply said goodbye. What the conversation's intent put forward is withdrawn; a proposal
    of another intent (an earlier return) still waits."""
    ticket = _proposal("act_2", "202405181001", tool="create_ticket", why={"intent": "complaint"})
    ret = _proposal("act_1", "202405201234", why={"intent": "return_exchange"})
    plan = _declined(pack, text, [ret, ticket], previous_intent="complaint")
    assert plan is not None and plan.withdraw == ("act_2",), text
    assert plan.situation is None and plan.lookups == () and plan.writes == ()


def test_a_bare_decline_while_the_reset_waits_for_the_code_ends_it(pack: Pack) -> None:
    plan = _declined(pack, "算了，不用了", [], previous_intent="password_reset",
                     waiting=_waiting("sms_code"))  # fmt: skip
    assert plan is not None and plan.withdraw_workflow == "wf_1" and plan.withdraw == ()


@pytest.mark.parametrize(
    "text, previous",
    [
        ("算了不用了", "kb_question"),  # a question came between: the answer is declined
        ("算了不用了", None),
        ("好的，不用了，谢谢", "complaint"),  # a yes too: it acknowledges
        ("算了，再见", "complaint"),
        ("算了不用了，订单202405181001呢", "complaint"),
    ],
)
def test_a_decline_after_anything_else_closes_as_before(
    pack: Pack, text: str, previous: str | None
) -> None:
    ticket = _proposal("act_2", "202405181001", tool="create_ticket", why={"intent": "complaint"})
    slots = {"order_id": "202405181001"} if "2024" in text else {}
    plan = _declined(pack, text, [ticket], previous_intent=previous, slots=slots,
                     waiting=_waiting("approval:create_ticket"))  # fmt: skip
    assert plan is None or plan.withdraw == (), text


def test_a_decline_while_the_reset_waits_after_another_question_leaves_it(pack: Pack) -> None:
    plan = _declined(pack, "算了不用了", [], previous_intent="kb_question",
                     waiting=_waiting("sms_code"))  # fmt: skip
    assert plan is None or plan.withdraw_workflow is None


@pytest.mark.parametrize(
    ("text", "situation"),
    [
        ("ok thanks for the info", "act_thanks"),
        ("好 我再等等", "act_confirmation"),
        ("你好请问有人吗", "act_greeting"),
        ("算了 不说了", "act_closing"),
        ("问一下", "act_greeting"),  # asking to ask: "what can I help you with?"
        # Small talk, a request read out of scope, and a long question opening with a greeting
        # are not answered with a courtesy.
        ("今天天气好冷啊", None),
        ("行 那你帮我取消吧", None),
        ("ok cancel it then", None),  # "All right." would say it is done
        ("好 那取消吧", None),
        ("你好，我上个月买了个电饭煲，用了不到一个月内胆涂层就掉了，这个能免费修吗？", None),
    ],
)
def test_an_out_of_scope_turn_with_a_courtesy_is_answered_as_it(
    pack: Pack, text: str, situation: str | None
) -> None:
    """ "ok thanks for the info" was answered "Sorry, I cannot help with that one" (442 of the
    pack's 4,807 labelled customer turns got that reply, most of them thanks or an ok)."""
    plan = conversation_plan(reading(pack, "oos", text), pack.acts, lambda _text: [])
    if situation is None:
        assert plan is None
    else:
        assert plan is not None and plan.situation == situation
        assert plan.lookups == () and plan.writes == () and plan.workflow is None


def test_a_courtesy_waits_for_nothing_the_customer_owes(pack: Pack) -> None:
    """While the reset waits for the code, "ok I'll check" is asked for the code again (decide)
    and, beside a waiting proposal, an ok says it waits for the agent."""
    waiting = reading(pack, "oos", "ok I'll check", waiting=_waiting("sms_code"))
    assert conversation_plan(waiting, pack.acts, lambda _text: []) is None
    pending = reading(pack, "oos", "好 我等结果", proposals=[_proposal("act_1", "202405181001")])
    plan = conversation_plan(pending, pack.acts, lambda _text: [])
    assert plan is not None and plan.situation == "act_confirmation_pending"


def test_a_day_beside_a_courtesy_is_no_business_of_its_own(pack: Pack) -> None:
    """ "好 我明天打", "ok tomorrow then": the day is a slot, yet the turn asks for nothing; an
    order number beside an ok is business (decide reads it)."""
    day = reading(pack, "oos", "好 我明天打", slots={"date": "2026-12-07"})
    plan = conversation_plan(day, pack.acts, lambda _text: [])
    assert plan is not None and plan.situation == "act_confirmation"
    order = reading(pack, "oos", "好 202405181001", slots={"order_id": "202405181001"})
    assert conversation_plan(order, pack.acts, lambda _text: []) is None


@pytest.mark.parametrize(
    "text", ["我说了不退了", "I said I'll keep it", "不退了", "退货的事就不用了"]
)
def test_taking_back_again_what_was_withdrawn_puts_nothing_forward(pack: Pack, text: str) -> None:
    """ "我说了不退了" after "不退了" was read as usual and put the return forward again ("我已为
    订单…提交申请"): it says it stays withdrawn. A turn that says more is still answered."""
    withdrawn = [_proposal("act_1", "202405181001", status="withdrawn")]
    plan = _plan(pack, text, withdrawn)
    assert plan is not None and plan.situation == "already_withdrawn"
    assert plan.withdraw == () and plan.writes == () and plan.workflow is None
    assert _plan(pack, "不退了，还是换货吧", withdrawn) is None
    assert _plan(pack, "我不要退货，只想问问保修", withdrawn) is None
    # Withdrawn once, then put in again and rejected by an agent: the last was not withdrawn.
    rejected = [*withdrawn, _proposal("act_2", "202405181001", status="rejected")]
    assert _plan(pack, text, rejected).situation == "not_going_ahead"


@pytest.mark.parametrize("status", ["rejected", "expired"])
@pytest.mark.parametrize("text", ["不退了", "never mind, I'll keep it"])
def test_taking_back_what_an_agent_turned_down_never_says_it_was_never_put_in(
    pack: Pack, text: str, status: str
) -> None:
    """ "不退了" after an agent rejected the return was told "这次没有为您提交过这项申请" — it was
    put in. It is told the request will not be done; nothing is withdrawn or put forward."""
    plan = _plan(pack, text, [_proposal("act_1", "202405181001", status=status)])
    assert plan is not None and plan.situation == "not_going_ahead"
    assert plan.withdraw == () and plan.writes == () and plan.workflow is None
    # With nothing put in at all, it is still told nothing was put in.
    assert _plan(pack, text, []).situation == "nothing_to_withdraw"


@pytest.mark.parametrize("text", ["好了吗", "is it done?", "办好了没"])
def test_asked_if_done_with_nothing_put_in_is_told_so(pack: Pack, text: str) -> None:
    """ "好了吗" with nothing put forward in the conversation got "好的。请问还有什么可以帮您？"
    (read as "好"). It is told nothing was put in; after a request, it is the request's
    outcome (decide), and after only a withdrawn one, a courtesy as before."""
    plan = conversation_plan(reading(pack, "oos", text), pack.acts, lambda _text: [])
    assert plan is not None and plan.situation == "nothing_put_in", plan
    assert plan.lookups == () and plan.writes == () and plan.workflow is None
    put_in = [_proposal("act_1", "202405181001")]
    asked = reading(pack, "oos", text, proposals=put_in)
    assert conversation_plan(asked, pack.acts, lambda _text: []) is None
    withdrawn = [_proposal("act_1", "202405181001", status="withdrawn")]
    after = reading(pack, "oos", text, proposals=withdrawn)
    later = conversation_plan(after, pack.acts, lambda _text: [])
    assert later is None or later.situation != "nothing_put_in", later


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("订单 {others} 需要单独办理。", "订单 202405201234 需要单独办理。"),
        # a pack's template naming a field it is not given says it blank, never fails the turn
        ("订单 {others}（{order_id}）需要单独办理。", "订单 202405201234（）需要单独办理。"),
    ],
)
def test_the_other_orders_a_request_named_are_said_to_need_their_own(
    pack: Pack, template: str, said: str
) -> None:
    from types import SimpleNamespace

    from hermes_desk.assist.suggest import _one_at_a_time

    own = SimpleNamespace(
        conversation={**pack.conversation, "one_at_a_time": {"zh": template}},
        slot_rules=pack.slot_rules,
    )
    acting = SimpleNamespace(
        workflow=SimpleNamespace(inputs={"order_id": "202405181001", "reason": "客户申请退货"}),
        also=(),
    )
    turn = reading(
        pack, "return_exchange", "我要退货 202405181001 和 202405201234",
        slots={"order_id": "202405181001"},
        listed={"order_id": ["202405181001", "202405201234"]},
    )  # fmt: skip
    text = _one_at_a_time("好的。", own, turn, acting, "proposed", "zh")  # type: ignore[arg-type]
    assert text == f"好的。{said}"
    # only one order named, or a reply about nothing put forward: nothing added
    alone = replace(turn, listed={})
    assert _one_at_a_time("好的。", own, alone, acting, "proposed", "zh") == "好的。"  # type: ignore[arg-type]
    assert _one_at_a_time("好的。", own, turn, acting, "ok", "zh") == "好的。"  # type: ignore[arg-type]
    # an order the turn asked something else of, answered after the request, needs no request
    asked = SimpleNamespace(reading=SimpleNamespace(found={"order_id": "202405201234"}))
    answered = SimpleNamespace(workflow=acting.workflow, also=(asked,))
    assert _one_at_a_time("好的。", own, turn, answered, "proposed", "zh") == "好的。"  # type: ignore[arg-type]
    # nor one whose own clause asked something else ("…退货。202405201234取消")
    cancelled = replace(turn, clauses=(
        Clause("order_id", "202405181001", "202405181001退货", "return_exchange"),
        Clause("order_id", "202405201234", "202405201234取消", "order_status"),
    ))  # fmt: skip
    assert _one_at_a_time("好的。", own, cancelled, acting, "proposed", "zh") == "好的。"  # type: ignore[arg-type]
    # a reason given while the request waits is not another order ("订单 尺码太小了 需要单独办理")
    because = replace(
        turn, listed={}, found={"reason": "尺码太小了"}, slots={"reason": "尺码太小了"}
    )
    assert _one_at_a_time("好的。", own, because, acting, "still_proposed", "zh") == "好的。"  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["ok go ahead", "好的，就这么办", "帮我办吧", "yes please"])
def test_a_go_ahead_with_nothing_put_in_or_offered_is_told_so(pack: Pack, text: str) -> None:
    """ "ok go ahead" after the damage policy ("…we send a replacement or refund it") got "All
    right. Is there anything else I can help with?": as if it would be done, with nothing put
    in. It is told nothing is in yet; once something was put in, a confirmation as before."""
    act = pack.acts.read(text)
    after_policy = reading(
        pack, "oos", text, dialogue_act=act, previous_intent="logistics",
        previous_text="the cup in 202405230909 arrived broken",
        previous_slots={"order_id": "202405230909"},
    )  # fmt: skip
    plan = conversation_plan(after_policy, pack.acts, lambda _text: [])
    assert plan is not None and plan.situation == "nothing_to_go_ahead", plan
    assert plan.lookups == () and plan.writes == () and plan.workflow is None
    for status, situation in (("proposed", "act_confirmation_pending"),
                              ("executed", "act_confirmation")):  # fmt: skip
        put_in = replace(after_policy, proposals=[_proposal("act_1", "202405230909", status)])
        later = conversation_plan(put_in, pack.acts, lambda _text: [])
        assert later is not None and later.situation == situation, (status, later)
    # a plain "好的" is no go-ahead: a confirmation as before
    ok = reading(pack, "oos", "好的", dialogue_act=pack.acts.read("好的"))
    plain = conversation_plan(ok, pack.acts, lambda _text: [])
    assert plain is not None and plain.situation == "act_confirmation", plain
    # after asking whether it may be done, it is that request (decide's)
    asked = replace(after_policy, previous_text="订单202405230909能退吗")
    assert conversation_plan(asked, pack.acts, lambda _text: []) is None


@pytest.mark.parametrize(
    ("before", "intent", "said"),
    [
        ("I want to cancel order 202405231122", "order_status", "not_put_in_here"),
        ("帮我把订单202405231122取消掉", "order_status", "not_put_in_here"),
        # a look-up or a policy question asked for nothing beyond the tools
        ("帮我查一下订单202405231122", "order_status", "nothing_to_go_ahead"),
        ("退货运费谁出", "kb_question", "nothing_to_go_ahead"),
        ("能取消吗", "order_status", "nothing_to_go_ahead"),
        # a knowledge question of how, about what no intent's tool does: "can you do it for me?"
        # got "Tell me what you would like done (a return and refund, a complaint…)"
        ("how do I change my delivery address for 202405231122?", "kb_question", "not_put_in_here"),
        ("change it to 88 Jianguo Road, Beijing", "kb_question", "not_put_in_here"),
        # …and about what a tool does: what to put in is asked
        ("how do I return an item?", "kb_question", "nothing_to_go_ahead"),
    ],
)
def test_a_go_ahead_with_what_no_tool_does_is_told_it_is_not_put_in_here(
    pack: Pack, before: str, intent: str, said: str
) -> None:
    """ "ok do it" after "I want to cancel order …" (answered how a paid order is cancelled; no
    tool cancels) got "Tell me what you would like done": it had just been said."""
    turn = reading(
        pack, "oos", "ok do it", dialogue_act=pack.acts.read("ok do it"),
        previous_intent=intent, previous_text=before,
    )  # fmt: skip
    beyond = functools.partial(asks_what_no_tool_does, pack=pack)
    plan = conversation_plan(turn, pack.acts, lambda _text: [], beyond=beyond)
    assert plan is not None and plan.situation == said, plan
    assert plan.lookups == () and plan.writes == () and plan.workflow is None


def _answers_as(pack: Pack, turn: Any, situation: str | None, *, beyond: bool = False) -> None:
    """The turn's conversation plan says ``situation`` (None: no plan of its own), and looks up
    and proposes nothing."""
    told = functools.partial(asks_what_no_tool_does, pack=pack) if beyond else None
    plan = conversation_plan(turn, pack.acts, lambda _text: [], beyond=told)
    assert (plan and plan.situation) == situation, plan
    assert plan is None or (plan.lookups == () and plan.writes == () and plan.workflow is None)


@pytest.mark.parametrize(
    ("said", "status", "situation"),
    [
        # a ticket waits for the agent: it is in, and goes ahead once confirmed
        ("行那你们尽快处理吧", "proposed", "act_confirmation_pending"),
        ("ok please hurry", "proposed", "act_confirmation_pending"),
        # nothing put in: said so, and what to do asked (no promise of speed)
        ("好的 麻烦尽快", None, "nothing_to_go_ahead"),
        # after a request was decided, left to the usual answers
        ("好的 麻烦尽快", "executed", None),
    ],
)
def test_asked_to_be_quick_says_what_waits_or_that_nothing_is_in(
    pack: Pack, said: str, status: str | None, situation: str | None
) -> None:
    """ "好的 麻烦尽快" and "行那你们尽快处理吧" got "抱歉，这个问题我暂时无法帮您处理"."""
    proposals = [] if status is None else [_proposal("act_1", "202405230909", status)]
    turn = reading(pack, "oos", said, proposals=proposals, previous_intent="complaint",
                   previous_text="我要投诉快递员态度差")  # fmt: skip
    _answers_as(pack, turn, situation)


@pytest.mark.parametrize(
    ("before", "said", "situation"),
    [
        # the turn before asked for it, or this one does: "抱歉，这个问题我暂时无法帮您处理"
        ("我想把订单202405231122的收货地址改一下", "好的 那你帮我改吧", "not_put_in_here"),
        ("取消了钱多久退回来", "行 那你帮我取消吧", "not_put_in_here"),
        # after a look-up, asking us to do it is no request of what no tool does
        ("帮我查一下订单202405231122", "好的 那你帮我改吧", None),
    ],
)
def test_asked_to_do_what_no_tool_does_after_how_is_told_it_is_not_put_in_here(
    pack: Pack, before: str, said: str, situation: str | None
) -> None:
    turn = reading(pack, "oos", said, dialogue_act=pack.acts.read(said),
                   previous_intent="order_status", previous_text=before)  # fmt: skip
    _answers_as(pack, turn, situation, beyond=True)


@pytest.mark.parametrize(
    ("said", "act", "situation"),
    [
        # told to go ahead, with the value: the account-security article was found by its words
        ("ok do it, new address is 上海市浦东新区世纪大道100号", "request", "not_put_in_here"),
        # asked how: not told to
        ("how do I do that", "question", None),
    ],
)
def test_a_go_ahead_with_the_value_after_how_is_told_it_is_not_put_in_here(
    pack: Pack, said: str, act: str, situation: str | None
) -> None:
    before = "how do I change the delivery address of order 202405231122?"
    turn = reading(pack, "kb_question", said, act=act, dialogue_act=pack.acts.read(said),
                   previous_intent="kb_question", previous_text=before)  # fmt: skip
    _answers_as(pack, turn, situation, beyond=True)


@pytest.mark.parametrize(
    "text", ["找到了 在快递柜", "那我再考虑考虑", "finally an answer", "I was home all day"]
)
def test_a_remark_later_in_a_conversation_is_taken_as_said(pack: Pack, text: str) -> None:
    """ "I was home all day" after a parcel's status got "Sorry, I cannot help with that one. Is
    there anything about orders, shipping or returns?": not a reply to send."""
    later = reading(pack, "oos", text, previous_text="我的包裹202405240001到哪了",
                    previous_intent="logistics")  # fmt: skip
    plan = conversation_plan(later, pack.acts, lambda _text: [])
    assert plan is not None and plan.situation == "remark_noted", plan
    assert plan.lookups == () and plan.writes == () and plan.workflow is None


@pytest.mark.parametrize(
    ("text", "previous"),
    [("找到了 在快递柜", None),  # the first turn: what this service does is said
     ("你们卖手机吗", "我的包裹202405240001到哪了"),  # a question
     ("行 那你帮我取消吧", "我的包裹202405240001到哪了"),  # a request
     ("我跟你说，我上个月买了一个东西，到现在都没用上，我家里人也一直问我这个东西怎么回事，烦死了",
      "我的包裹202405240001到哪了")],  # more than a remark
)  # fmt: skip
def test_a_question_a_request_or_a_first_turn_is_no_remark(
    pack: Pack, text: str, previous: str | None
) -> None:
    turn = reading(pack, "oos", text, previous_text=previous, act=request_act(text))
    plan = conversation_plan(turn, pack.acts, lambda _text: [])
    assert plan is None or plan.situation != "remark_noted", plan
