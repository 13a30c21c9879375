"""The decide stage is pure: questions propose nothing, requests propose, writes never run,
a waiting workflow takes its slot, a repeated complaint keeps one ticket."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from hermes_desk.actions import Proposal
from hermes_desk.assist import Reading, decide
from hermes_desk.assist.records import Lookup, WorkflowMove
from hermes_desk.nlu import DialogueState, request_act
from hermes_desk.packs import Pack
from hermes_desk.tools import ToolSpec
from hermes_desk.workflows import WorkflowView


def reading(pack: Pack, intent: str, text: str, **extra: Any) -> Reading:
    slots = extra.pop("slots", {})
    # what the turn itself names, as the reader finds it: the slots whose value it says
    found = {k: v for k, v in slots.items() if not isinstance(v, str) or v in text}
    values: dict[str, Any] = {
        "text": text, "language": "zh", "intent": pack.intent(intent), "confidence": 0.9,
        "carried": False, "ranking": [(intent, 0.9)], "act": "request", "found": found,
        "slots": dict(slots), "state": DialogueState(), "nlu_ms": 0.1, "waiting": None,
        "proposals": [],
    }  # fmt: skip
    values.update(extra)
    return Reading(**values)


def test_a_policy_question_is_answered_from_the_knowledge_base(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    plan = decide(
        reading(pack, "return_exchange", "退货运费谁承担？", act="question"), pack, tools, user="u1"
    )
    assert plan.answer_intent == "kb_question"
    assert [lookup.tool for lookup in plan.lookups] == ["kb_search"]
    assert plan.writes == () and plan.workflow is None


def test_a_question_about_a_named_orders_refund_looks_the_order_up_before_the_article(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """The intent's ``kb_record``: "退款多久到账" about a named order is searched with the
    order's status, so the answer is about a refunded order, and says it is refunded."""
    text = "我的跑步鞋退款多久到账，订单202405170666"
    plan = decide(
        reading(pack, "return_exchange", text, act="question", slots={"order_id": "202405170666"}),
        pack, tools, user="u1",
    )  # fmt: skip
    assert plan.answer_intent == "kb_question" and plan.writes == () and plan.workflow is None
    assert [(lookup.tool, lookup.arguments, lookup.status_of) for lookup in plan.lookups] == [
        ("get_order", {"order_id": "202405170666"}, None),
        ("kb_search", {"query": text, "language": "zh"}, "get_order"),
    ]
    # a shipped order's parcel tells its status more closely (kb_record_detail)
    assert plan.lookups[0].detail == (
        ("shipped", Lookup("get_shipment", {"order_id": "202405170666"})),
    )


def test_a_delivered_parcels_order_is_looked_up_for_what_came_after(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """The intent's ``calls_detail``: "订单…什么状态" of an order being returned got the parcel's
    "已签收。如果您没有收到…"; a delivered or returned parcel's order is looked up next."""
    plan = decide(
        reading(pack, "order_status", "订单202405100789什么状态", act="question",
                slots={"order_id": "202405100789"}),
        pack, tools, user="u1003",
    )  # fmt: skip
    [shipment] = plan.lookups
    order = Lookup("get_order", {"order_id": "202405100789"})
    assert shipment.tool == "get_shipment"
    assert shipment.detail == (("delivered", order), ("returned", order))


@pytest.mark.parametrize(
    ("text", "reported", "said"),
    [("我的退货202405100789到哪一步了", True, "order_status"),
     ("where is my parcel 202405100789", False, None),  # the parcel's own question
     # the parcel's subject named: sent back by the courier, not a return
     ("我的包裹202405100789被退回去了 怎么回事", False, None),
     ("202405100789的退货到哪一步了，帮我取消吧", False, None)],  # a request the article answers
)  # fmt: skip
def test_a_report_of_another_intent_read_as_a_parcels_says_where_the_record_stands(
    pack: Pack, tools: dict[str, ToolSpec], text: str, reported: bool, said: str | None
) -> None:
    """ "我的退货…到哪一步了" read as a parcel's question (0.51) got the outbound parcel's status
    ("已签收。如果您没有收到，我马上帮您核实") for an order being returned. In the words of another
    intent's ``status_reports`` it is that report: the order is looked up and its status said,
    and the conversation goes on with that intent."""
    turn = reading(pack, "logistics", text, act=request_act(text),
                   slots={"order_id": "202405100789"})  # fmt: skip
    plan = decide(turn, pack, tools, user="u1")
    assert (plan.if_found == "status_reported") is reported, plan
    assert plan.conversation_intent == said and plan.writes == () and plan.workflow is None


@pytest.mark.parametrize(
    "text, intent",
    [("我的跑步鞋退款到账了吗，订单202405170666", "return_exchange"),
     ("退货的钱到了吗 202405170666", "return_exchange"),
     ("has my refund for 202405170666 arrived", "return_exchange"),
     ("did the refund for 202405170666 go through", "return_exchange"),
     ("did you get my return 202405170666", "return_exchange"),
     ("is the money for 202405170666 back yet", "kb_question"),
     # Sent back already, or not refunded yet: a return was put forward for each
     ("i sent 202405170666 back last week", "return_exchange"),
     ("我已经把202405170666寄回去了", "return_exchange"),
     ("202405170666 退货寄回去了 你们收到没", "return_exchange"),
     ("was my return for 202405170666 approved", "return_exchange"),
     ("why hasn't 202405170666 been refunded", "return_exchange"),
     ("why hasn't my order 202405170666 been refunded yet", "order_status"),
     ("202405170666 怎么还没退款", "return_exchange"),
     # Applied for already, or turned down: a return was put forward again
     ("i already requested a return for 202405170666", "return_exchange"),
     ("202405170666 我申请过退货了", "return_exchange"),
     ("202405170666 退货被拒了", "return_exchange"),
     ("202405170666 退货申请通过了吗", "return_exchange"),
     ("has my return for 202405170666 been processed", "return_exchange")],
)  # fmt: skip
def test_asked_whether_a_named_orders_refund_came_the_order_says_where_it_stands(
    pack: Pack, tools: dict[str, ToolSpec], text: str, intent: str
) -> None:
    """ "has my refund for … arrived" quoted the lost-parcel article, "退货的钱到了吗 …" the
    shortfall sentence, and "did the refund for … go through" put a return forward for a
    delivered order ("did the" opened no question). Each is a report of the customer's own
    refund (``status_reports``): the order is looked up and its status said, nothing proposed."""
    plan = decide(
        reading(pack, intent, text, act=request_act(text), slots={"order_id": "202405170666"}),
        pack, tools, user="u1",
    )  # fmt: skip
    assert plan.if_found == "status_reported" and plan.writes == () and plan.workflow is None
    assert [(lookup.tool, lookup.arguments) for lookup in plan.lookups] == [
        ("get_order", {"order_id": "202405170666"})
    ]


@pytest.mark.parametrize(
    "text, intent",
    [("东西寄回去了多久能退款", "kb_question"),  # when, after sending it back: a timing question
     ("I already sent it back, when do I get refunded?", "kb_question"),
     ("被拒收的包裹怎么退款", "return_exchange")],  # a refused parcel, not a refused return
)  # fmt: skip
def test_a_policy_question_near_a_report_is_answered_not_asked_for_the_order(
    pack: Pack, tools: dict[str, ToolSpec], text: str, intent: str
) -> None:
    plan = decide(reading(pack, intent, text, act=request_act(text)), pack, tools, user="u1")
    assert plan.if_found != "status_reported" and plan.missing_slots == ()
    assert [lookup.tool for lookup in plan.lookups] == ["kb_search"] and plan.writes == ()


@pytest.mark.parametrize(
    "text",
    ["i exchanged 202405170666 last week", "I was told I'd get a refund for 202405170666",
     "you promised me a refund for 202405170666", "i cancelled the return for 202405170666",
     "the refund for 202405170666 was supposed to come yesterday",
     "202405170666 refund pending for two weeks", "客服说202405170666可以退款",
     "上次客服答应给我退款 订单202405170666", "202405170666 换过货了", "202405170666 我已经退了",
     "202405170666 退款一直在处理中"],
)  # fmt: skip
def test_what_was_done_or_promised_with_an_order_is_a_report_not_a_request(
    pack: Pack, tools: dict[str, ToolSpec], text: str
) -> None:
    """Each put a return forward for a delivered order nobody asked to return: what the customer
    did, was told or waits for is looked up and said; the return is offered, not proposed."""
    plan = decide(
        reading(pack, "return_exchange", text, act=request_act(text),
                slots={"order_id": "202405170666"}),
        pack, tools, user="u1",
    )  # fmt: skip
    assert plan.if_found == "status_reported" and plan.writes == () and plan.workflow is None


@pytest.mark.parametrize(
    "text",
    ["I returned it yesterday, can you refund me for 202405170666",
     "please refund 202405170666, you promised", "客服说可以退，帮我退货 202405170666",
     "i want to return 202405170666, i was told it's eligible"],
)  # fmt: skip
def test_what_happened_told_beside_a_request_still_asks_for_it(
    pack: Pack, tools: dict[str, ToolSpec], text: str
) -> None:
    plan = decide(
        reading(pack, "return_exchange", text, act=request_act(text),
                slots={"order_id": "202405170666"}),
        pack, tools, user="u1",
    )  # fmt: skip
    assert plan.if_found != "status_reported" and plan.workflow is not None


@pytest.mark.parametrize(
    "previous, text, language, query",
    [("complaint", "多久能处理", "zh", "投诉 多久能处理"),  # got the refund-timing article
     ("complaint", "how long will it take", "en", "complaint how long will it take"),
     ("complaint", "多久会有人联系我", "zh", "投诉 多久会有人联系我"),
     # after an intent whose times are of several subjects (refunds, exchanges): as it is
     ("return_exchange", "要多久", "zh", "要多久"),
     # not a question of time: its own words say what it is about
     ("complaint", "what are your customer service hours", "en",
      "what are your customer service hours"),
     # a turn that names what it is about keeps its own words
     ("complaint", "退款多久到账", "zh", "退款多久到账"),
     ("complaint", "how long does delivery take", "en", "how long does delivery take"),
     # repairs are a subject of their own (it got the complaints article)
     ("complaint", "维修要多久", "zh", "维修要多久"),
     ("complaint", "how long will the repair take", "en", "how long will the repair take"),
     # the first turn, or after a knowledge question: nothing to join
     (None, "多久能处理", "zh", "多久能处理"),
     ("kb_question", "多久能处理", "zh", "多久能处理")],
)  # fmt: skip
def test_a_question_that_names_no_subject_is_searched_with_the_conversations(
    pack: Pack,
    tools: dict[str, ToolSpec],
    previous: str | None,
    text: str,
    language: str,
    query: str,
) -> None:
    plan = decide(
        reading(pack, "kb_question", text, act="question", language=language,
                previous_intent=previous),
        pack, tools, user="u1",
    )  # fmt: skip
    assert [(lookup.tool, lookup.arguments["query"]) for lookup in plan.lookups] == [
        ("kb_search", query)
    ]


@pytest.mark.parametrize(
    "previous, previous_text, text, language, query",
    [# a return's times are of refunds and of exchanges: the one the turn before named
     ("return_exchange", "I was refunded for order 202405170666 but the money isn't here",
      "how long does it take?", "en", "refunded how long does it take?"),
     ("return_exchange", "I want to exchange 202405231122, wrong size", "how long does that take?",
      "en", "exchange how long does that take?"),
     ("return_exchange", "订单202405170666退款了但是钱还没到", "要多久啊", "zh", "退款 要多久啊"),
     ("password_reset", "I want to change my password", "how long does it take?", "en",
      "password how long does it take?"),
     # after a knowledge question, the subject of any intent it named
     ("kb_question", "can I return 202405231122?", "how long will it take?", "en",
      "return how long will it take?"),
     # the intent's own subjects only: "订单号" names an order, not what the return is about
     ("return_exchange", "订单号是202410230987", "那钱多久能退回来", "zh", "那钱多久能退回来"),
     # an intent with a kb_context keeps it; a turn naming its subject keeps its words
     ("complaint", "I want to exchange it", "how long will it take", "en",
      "complaint how long will it take"),
     ("return_exchange", "I want to exchange it", "how long does a refund take", "en",
      "how long does a refund take")],
)  # fmt: skip
def test_a_question_of_time_takes_the_subject_the_turn_before_named(
    pack: Pack,
    tools: dict[str, ToolSpec],
    previous: str,
    previous_text: str,
    text: str,
    language: str,
    query: str,
) -> None:
    """ "how long does it take?" right after "I was refunded … the money isn't here", "I want
    to exchange …" or "I want to change my password" got the delivery times."""
    plan = decide(
        reading(pack, "kb_question", text, act="question", language=language,
                previous_intent=previous, previous_text=previous_text),
        pack, tools, user="u1",
    )  # fmt: skip
    assert [(lookup.tool, lookup.arguments["query"]) for lookup in plan.lookups] == [
        ("kb_search", query)
    ]


def test_a_question_of_time_read_as_its_own_intent_is_searched_with_its_subject(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "when will someone call me" right after a complaint, read as the complaint itself (not
    a knowledge question), got the hacked-account article's "someone will contact you within
    24 hours"; "多久能有人联系我" the refund times."""
    for text, language, query in (
        ("when will someone call me", "en", "complaint when will someone call me"),
        ("多久能有人联系我？再拖我就打12315了", "zh", "投诉 多久能有人联系我？再拖我就打12315了"),
    ):
        turn = reading(pack, "complaint", text, act="question", language=language,
                       previous_intent="complaint")  # fmt: skip
        plan = decide(turn, pack, tools, user="u1")
        assert plan.answer_intent == "kb_question" and plan.writes == (), plan.rule
        assert [(lu.tool, lu.arguments["query"]) for lu in plan.lookups] == [("kb_search", query)]


def test_a_refund_short_of_what_was_paid_is_its_problem_not_a_report_of_the_order(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "I returned …" reports how a return stands, but beside a short refund the refund's
    article answers (the shortfall), not the order's status."""
    text = "I returned it and got refunded but it's 30 less than I paid, order 202405170666"
    plan = decide(
        reading(pack, "return_exchange", text, act=request_act(text),
                slots={"order_id": "202405170666"}),
        pack, tools, user="u1",
    )  # fmt: skip
    assert plan.if_found != "status_reported" and plan.writes == () and plan.workflow is None
    assert "kb_search" in [lookup.tool for lookup in plan.lookups]


def test_a_request_with_an_order_starts_the_workflow_and_writes_nothing_itself(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    plan = decide(
        reading(pack, "return_exchange", "我要退货，订单202405231122",
                slots={"order_id": "202405231122"}),
        pack, tools, user="u1",
    )  # fmt: skip
    assert plan.workflow is not None and plan.workflow.kind == "start"
    assert plan.workflow.inputs == {"order_id": "202405231122"}
    assert plan.lookups == () and plan.writes == ()


def test_a_complaint_proposes_a_ticket_and_reads_nothing(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    plan = decide(reading(pack, "complaint", "我要投诉快递员"), pack, tools, user="u7")
    [write] = plan.writes
    assert write.tool == "create_ticket" and write.arguments["user_id"] == "u7"
    assert write.topic == "create_ticket:-"
    assert plan.lookups == ()


def test_a_complaint_about_an_order_looks_the_order_up_before_the_ticket(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """The intent's ``record_check``: the ticket is put forward only once the order it names is
    found for the customer (the act stage drops it otherwise)."""
    order = {"order_id": "202405201234"}
    plan = decide(
        reading(pack, "complaint", "我要投诉 订单202405201234 坏了", slots=order), pack, tools,
        user="u7",
    )  # fmt: skip
    assert [(lookup.tool, lookup.arguments) for lookup in plan.lookups] == [
        ("get_order", {"order_id": "202405201234"})
    ]
    [write] = plan.writes
    assert write.tool == "create_ticket" and write.requires == "get_order"


@pytest.mark.parametrize("text", ["我要投诉！！！", "I want to file a complaint"])
def test_a_complaint_that_says_nothing_of_what_happened_asks_and_proposes_nothing(
    pack: Pack, tools: dict[str, ToolSpec], text: str
) -> None:
    """A ticket whose summary is "我要投诉" tells the back office nothing, and the reply said it
    was put forward to be logged: the summary is what is missing, and asked for."""
    plan = decide(reading(pack, "complaint", text), pack, tools, user="u7")
    assert plan.writes == () and plan.lookups == ()
    assert plan.missing_slots == ("summary",)
    # After a greeting too: a greeting says nothing the complaint is about.
    greeted = reading(pack, "complaint", text, previous_text="你好", previous_intent="oos")
    assert decide(greeted, pack, tools, user="u7").missing_slots == ("summary",)


def test_a_bare_complaint_carries_the_turn_before_or_joins_the_waiting_ticket(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "快递三天没动了", then "我要投诉": the complaint is about what was just said; with a
    ticket waiting, the bare words join it as before."""
    after = reading(pack, "complaint", "我要投诉", previous_text="快递三天没动了",
                    previous_intent="logistics")  # fmt: skip
    [write] = decide(after, pack, tools, user="u7").writes
    assert write.arguments == {"user_id": "u7", "summary": "快递三天没动了 / 我要投诉"}
    twice = reading(pack, "complaint", "我要投诉", previous_text="我要投诉！",
                    previous_intent="complaint")  # fmt: skip
    assert decide(twice, pack, tools, user="u7").missing_slots == ("summary",)
    # a thanks keeps the conversation's intent, but says nothing the complaint is about
    thanked = reading(pack, "complaint", "我要投诉", previous_text="好的谢谢",
                      previous_intent="logistics")  # fmt: skip
    assert decide(thanked, pack, tools, user="u7").missing_slots == ("summary",)
    waiting = reading(pack, "complaint", "我要投诉", proposals=[_ticket("proposed")])
    [write] = decide(waiting, pack, tools, user="u7").writes
    assert write.arguments["summary"] == "快递员态度差 / 我要投诉"


def test_a_bare_complaint_after_a_request_turned_down_says_what_was_turned_down(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """The return was not approved; "为什么不行", then "那我要投诉" put forward a ticket whose
    summary was "为什么不行 / 那我要投诉". What was turned down opens it now; not when the turn
    before was about something else, nor for another order."""
    refused = Proposal(
        id="act_9", tenant="default", user="u7", session_id="s", tool="create_return",
        arguments={"order_id": "202405181001", "user_id": "u7"},
        why={"intent": "return_exchange"}, explanation="为订单 202405181001 创建退货单",
        language="zh", created_at=5, expires_at=600, status="rejected",
    )  # fmt: skip
    after = reading(pack, "complaint", "那我要投诉", previous_text="为什么不行",
                    previous_intent="return_exchange", proposals=[refused])  # fmt: skip
    [write] = decide(after, pack, tools, user="u7").writes
    assert write.arguments["summary"] == (
        "未获批准：为订单 202405181001 创建退货单 / 为什么不行 / 那我要投诉"
    )
    elsewhere = reading(pack, "complaint", "那我要投诉", previous_text="快递员态度差",
                        previous_intent="logistics", proposals=[refused])  # fmt: skip
    [write] = decide(elsewhere, pack, tools, user="u7").writes
    assert write.arguments["summary"] == "快递员态度差 / 那我要投诉"
    other = reading(pack, "complaint", "我要投诉", previous_text="为什么不行",
                    previous_intent="return_exchange", proposals=[refused],
                    slots={"order_id": "202405201234"})  # fmt: skip
    [write] = decide(other, pack, tools, user="u7").writes
    assert "未获批准" not in write.arguments["summary"]


@pytest.mark.parametrize("text", ["我昨天投诉过了", "i complained yesterday about the courier"])
def test_a_complaint_made_before_is_answered_not_logged_again(
    pack: Pack, tools: dict[str, ToolSpec], text: str
) -> None:
    """ "我昨天投诉过了" put a second ticket forward: it is answered from the knowledge base (when
    they hear back), nothing put forward."""
    plan = decide(reading(pack, "complaint", text), pack, tools, user="u7")
    assert plan.writes == () and plan.answer_intent == "kb_question"
    assert [lookup.tool for lookup in plan.lookups] == ["kb_search"]


def _ticket(status: str, result: Any = None) -> Proposal:
    return Proposal(
        id="act_1", tenant="default", user="u7", session_id="s", tool="create_ticket",
        arguments={"user_id": "u7", "summary": "快递员态度差"}, why={}, explanation="",
        language="zh", created_at=0, expires_at=600, status=status,  # type: ignore[arg-type]
        topic="create_ticket:-", result=result,
    )  # fmt: skip


def test_a_repeated_complaint_updates_the_pending_ticket_proposal(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    again = reading(pack, "complaint", "还是没人理我", proposals=[_ticket("proposed")])
    [write] = decide(again, pack, tools, user="u7").writes
    assert write.tool == "create_ticket" and write.topic == "create_ticket:-"
    assert write.arguments["summary"] == "快递员态度差 / 还是没人理我"


def test_the_order_named_after_a_complaint_joins_its_ticket_not_a_second_one(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "我要投诉" then "订单…": the pending ticket takes the order (the same topic, so the same
    proposal is updated); the bare number is not added to the summary, more words are."""
    order = {"order_id": "202405220318"}
    given = reading(pack, "complaint", "订单202405220318", slots=order,
                    proposals=[_ticket("proposed")])  # fmt: skip
    [write] = decide(given, pack, tools, user="u7").writes
    assert write.tool == "create_ticket" and write.topic == "create_ticket:-"
    assert write.arguments == {"user_id": "u7", "order_id": "202405220318",
                               "summary": "快递员态度差"}  # fmt: skip
    more = reading(pack, "complaint", "他还骂人", slots=order, proposals=[_ticket("proposed")])
    [write] = decide(more, pack, tools, user="u7").writes
    assert write.topic == "create_ticket:-"
    assert write.arguments["summary"] == "快递员态度差 / 他还骂人"


def test_a_complaint_after_the_ticket_was_opened_adds_a_note_to_it(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    done = _ticket("executed", {"ticket_id": "T-9", "status": "open"})
    [write] = decide(reading(pack, "complaint", "还是没人理我", proposals=[done]), pack, tools,
                     user="u7").writes  # fmt: skip
    assert write.tool == "add_ticket_note"
    assert write.arguments == {"ticket_id": "T-9", "user_id": "u7", "note": "还是没人理我"}


def _earlier_ticket(pid: str, ticket: str, order: str | None) -> Proposal:
    """A ticket an earlier contact (session ``before``) opened."""
    named = {"order_id": order} if order else {}
    return dataclasses.replace(
        _ticket("executed", {"ticket_id": ticket, "status": "open"}),
        id=pid, session_id="before", topic=f"create_ticket:{order or '-'}",
        arguments={"user_id": "u7", "summary": "一直不动", **named},
    )  # fmt: skip


def test_a_complaint_made_again_in_a_new_contact_adds_to_the_ticket_opened_then(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """X4 across contacts: the ticket an earlier contact opened for the same order (or, when
    this complaint names none, the only one opened) takes the complaint as a note."""
    order = {"order_id": "202405201234"}
    earlier = [_earlier_ticket("act_a", "T-1", "202405201234")]
    again = reading(pack, "complaint", "订单202405201234还是不动", slots=order, earlier=earlier)
    plan = decide(again, pack, tools, user="u7")
    [write] = plan.writes
    assert write.tool == "add_ticket_note" and "earlier contact" in write.rule
    note = {"ticket_id": "T-1", "user_id": "u7", "note": "订单202405201234还是不动"}
    assert write.arguments == note
    unnamed = reading(pack, "complaint", "我还要补充，快递员态度很差", earlier=earlier)
    [write] = decide(unnamed, pack, tools, user="u7").writes
    assert write.tool == "add_ticket_note" and write.arguments["ticket_id"] == "T-1"


def test_a_complaint_about_another_order_than_an_earlier_ticket_is_a_ticket_of_its_own(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """Another order, or no order named while two tickets were opened before (which one is
    the agent's to say): a new ticket is put forward; nothing was added to the earlier ones."""
    earlier = [_earlier_ticket("act_a", "T-1", "202405201234")]
    other = reading(pack, "complaint", "订单202405181001的快递员态度很差",
                    slots={"order_id": "202405181001"}, earlier=earlier)  # fmt: skip
    [write] = decide(other, pack, tools, user="u7").writes
    assert write.tool == "create_ticket" and write.topic == "create_ticket:202405181001"
    two = [*earlier, _earlier_ticket("act_b", "T-2", "202405181001")]
    unnamed = reading(pack, "complaint", "快递员态度很差，我要投诉他", earlier=two)
    [write] = decide(unnamed, pack, tools, user="u7").writes
    assert write.tool == "create_ticket" and write.topic == "create_ticket:-"


def test_asked_about_a_complaint_in_a_new_contact_recalls_the_ticket_opened_then(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "我的投诉处理得怎么样了" in a new contact: the article, with the ticket an earlier
    contact opened recalled (its number); a ticket of this contact is newer and wins."""
    earlier = [_earlier_ticket("act_a", "T-1", None)]
    asked = reading(pack, "complaint", "我的投诉处理得怎么样了", act="question", earlier=earlier)
    plan = decide(asked, pack, tools, user="u7")
    assert plan.answer_intent == "kb_question" and plan.writes == ()
    assert plan.recall == ("act_a",)
    mine = dataclasses.replace(_ticket("executed", {"ticket_id": "T-5"}), id="act_now")
    both = dataclasses.replace(asked, proposals=[mine])
    assert decide(both, pack, tools, user="u7").recall == ("act_now",)
    # "我昨天投诉过了" (a complaint made before: answered, not logged again) recalls it too
    before = reading(pack, "complaint", "我昨天投诉过了，还没人联系我", earlier=earlier)
    plan = decide(before, pack, tools, user="u7")
    assert plan.answer_intent == "kb_question" and plan.writes == ()
    assert plan.recall == ("act_a",)
    assert decide(dataclasses.replace(before, earlier=[]), pack, tools, user="u7").recall == ()


@pytest.mark.parametrize(
    ("status", "situation"),
    [("proposed", "still_proposed"), ("executed", None), ("rejected", None)],
)
@pytest.mark.parametrize(("text", "intent"), [("好了吗", "oos"), ("is it done?", "logistics")])
def test_is_it_done_after_a_request_is_asked_of_that_request(
    pack: Pack,
    tools: dict[str, ToolSpec],
    status: str,
    situation: str | None,
    text: str,
    intent: str,
) -> None:
    """ "好了吗" read as small talk ("好的。"), "is it done?" as a parcel's intent (an order
    number asked for): the newest write is recalled, whatever it came to, nothing looked up."""
    ticket = dataclasses.replace(
        _ticket(status, {"ticket_id": "T-9"} if status == "executed" else None),
        why={"intent": "complaint"},
    )
    plan = decide(reading(pack, intent, text, proposals=[ticket]), pack, tools, user="u7")
    assert plan.answer_intent == "complaint" and plan.recall == ("act_1",)
    assert plan.conversation_intent == "complaint"  # the next turn goes on with the complaint
    assert plan.situation == situation and plan.lookups == () and plan.writes == ()


@pytest.mark.parametrize(("status", "asked"), [("rejected", True), ("executed", False)])
def test_why_not_after_an_agent_turned_it_down_is_asked_of_that_write(
    pack: Pack, tools: dict[str, ToolSpec], status: str, asked: bool
) -> None:
    """ "why not?" in a Chinese conversation read as an order's intent: "which order?"."""
    ticket = dataclasses.replace(_ticket(status), why={"intent": "complaint"})
    plan = decide(reading(pack, "order_status", "why not?", proposals=[ticket]), pack, tools,
                  user="u7")  # fmt: skip
    assert (plan.recall == ("act_1",) and plan.answer_intent == "complaint") is asked


@pytest.mark.parametrize(("status", "shown"), [("proposed", True), ("executed", False)])
@pytest.mark.parametrize(("text", "intent"), [("那怎么办", "kb_question"), ("what now?", "oos")])
def test_what_now_while_the_write_waits_for_the_agent_shows_it(
    pack: Pack, tools: dict[str, ToolSpec], status: str, shown: bool, text: str, intent: str
) -> None:
    """ "那怎么办" right after a return was put forward read as a knowledge question and got
    "知识库里没有找到…". While the write waits for the agent, it is what happens now: shown, its
    workflow with it, right after it was put forward; once decided, the turn is read as before."""
    refund = Proposal(
        id="act_2", tenant="default", user="u7", session_id="s", tool="create_return",
        arguments={"order_id": "202405181001"}, why={"intent": "return_exchange",
        "workflow": "return_refund"}, explanation="", language="zh", created_at=0,
        expires_at=600, status=status, workflow_id="wf_1",  # type: ignore[arg-type]
    )  # fmt: skip
    turn = reading(pack, intent, text, proposals=[refund], previous_intent="return_exchange")
    plan = decide(turn, pack, tools, user="u7")
    assert (plan.workflow == WorkflowMove("show", "return_refund", "wf_1")) is shown, plan
    assert (plan.situation == "still_proposed") is shown and plan.writes == ()
    # after another request's turn since ("my parcel … is stuck"), or read as another
    # intent's own question (the lost parcel's), it asks of that one
    since = dataclasses.replace(turn, previous_intent="logistics")
    assert decide(since, pack, tools, user="u7").situation != "still_proposed"
    parcel = reading(pack, "logistics", text, proposals=[refund], previous_intent="return_exchange")
    assert decide(parcel, pack, tools, user="u7").situation != "still_proposed"


def test_is_it_done_after_a_note_recalls_the_ticket_it_was_added_to(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """The newest write was a note on the ticket: "好了吗" answered "已为您登记投诉（工单号 —）"."""
    ticket = dataclasses.replace(
        _ticket("executed", {"ticket_id": "T-9"}), why={"intent": "complaint"}
    )
    note = dataclasses.replace(
        ticket, id="act_2", tool="add_ticket_note", result={"ticket_id": "T-9", "notes": 1}
    )
    plan = decide(reading(pack, "oos", "好了吗", proposals=[ticket, note]), pack, tools, user="u7")
    assert plan.recall == ("act_1", "act_2") and plan.answer_intent == "complaint"


def test_is_it_done_shows_the_workflow_its_write_belongs_to(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """A workflow's write recorded the intent the turn that moved it read as ("oos"): the
    workflow's own intent answers, and the workflow is shown."""
    refund = Proposal(
        id="act_2", tenant="default", user="u7", session_id="s", tool="issue_refund",
        arguments={"order_id": "202405181001"}, why={"intent": "oos", "workflow": "return_refund"},
        explanation="", language="zh", created_at=0, expires_at=600, status="proposed",
        workflow_id="wf_1",
    )  # fmt: skip
    plan = decide(reading(pack, "oos", "好了吗", proposals=[refund]), pack, tools, user="u7")
    assert plan.answer_intent == "return_exchange" and plan.situation == "still_proposed"
    assert plan.workflow == WorkflowMove("show", "return_refund", "wf_1")


def test_a_report_after_the_reset_went_through_shows_it_a_request_starts_another(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "it says my password is wrong still" after the reset an agent approved asked for the
    phone to start another: the reset is shown as it came out. "reset it again" starts one;
    before any went through (waiting, or turned down), the turn is decided as before."""
    reset = Proposal(
        id="act_3", tenant="default", user="u7", session_id="s", tool="reset_password",
        arguments={"phone": "13800138000"},
        why={"intent": "password_reset", "workflow": "password_reset"}, explanation="",
        language="en", created_at=0, expires_at=600, status="executed", workflow_id="wf_9",
    )  # fmt: skip
    for text in ("it says my password is wrong still", "临时密码还是登不上"):
        turn = reading(pack, "password_reset", text, proposals=[reset])
        plan = decide(turn, pack, tools, user="u7")
        assert plan.workflow == WorkflowMove("show", "password_reset", "wf_9"), text
        assert plan.writes == () and plan.missing_slots == ()
    # "it's not working" gives a return's reason ("not working"): no value of the reset's own
    broke = reading(pack, "password_reset", "it's not working", proposals=[reset],
                    slots={"reason": "not working"})  # fmt: skip
    assert decide(broke, pack, tools, user="u7").workflow == WorkflowMove(
        "show", "password_reset", "wf_9"
    )
    again = decide(reading(pack, "password_reset", "please reset it again", proposals=[reset]),
                   pack, tools, user="u7")  # fmt: skip
    assert again.workflow is None or again.workflow.kind != "show"
    assert again.missing_slots == ("phone",)
    for status in ("rejected", "proposed"):
        undecided = dataclasses.replace(reset, status=status)
        turn = reading(pack, "password_reset", "it says my password is wrong still",
                       proposals=[undecided])  # fmt: skip
        plan = decide(turn, pack, tools, user="u7")
        assert plan.workflow is None and plan.missing_slots == ("phone",), status


@pytest.mark.parametrize(
    ("text", "intent"),
    [("退款好了吗", "return_exchange"),  # another intent's subject: a question of its own
     ("好了", "oos"),  # "ok": no question
     ("发货了吗", "order_status")],
)  # fmt: skip
def test_what_is_not_is_it_done_is_decided_as_before(
    pack: Pack, tools: dict[str, ToolSpec], text: str, intent: str
) -> None:
    ticket = dataclasses.replace(
        _ticket("executed", {"ticket_id": "T-9"}), why={"intent": "complaint"}
    )
    plan = decide(reading(pack, intent, text, proposals=[ticket]), pack, tools, user="u7")
    assert (
        plan.rule
        != "asked whether the session's newest write is done: its outcome, nothing proposed"
    )


@pytest.mark.parametrize("text", ["我的投诉处理得怎么样了", "what is my ticket number"])
def test_a_question_about_the_opened_ticket_recalls_it_and_runs_nothing(
    pack: Pack, tools: dict[str, ToolSpec], text: str
) -> None:
    """After an agent approved the ticket, "what is my ticket number" was answered with the
    article alone (or the order-number one): the reply now has the ticket it opened. A ticket
    an agent turned down (rejected, or expired undecided) is recalled too — the reply says it
    will not be done; one withdrawn or failed, by no one. Asked how far it has got while it
    still waits, the reply says it waits (``still_proposed``), nothing looked up."""
    done = _ticket("executed", {"ticket_id": "T-9", "status": "open"})
    plan = decide(reading(pack, "complaint", text, act="question", proposals=[done]), pack, tools,
                  user="u7")  # fmt: skip
    assert plan.recall == ("act_1",) and plan.writes == () and plan.workflow is None
    assert [lookup.tool for lookup in plan.lookups] == ["kb_search"]
    for status in ("withdrawn", "failed"):
        other = reading(pack, "complaint", text, act="question", proposals=[_ticket(status)])
        assert decide(other, pack, tools, user="u7").recall == (), status
    still = reading(pack, "complaint", text, act="question", proposals=[_ticket("proposed")])
    still_plan = decide(still, pack, tools, user="u7")
    if "怎么样了" in text:
        assert still_plan.situation == "still_proposed" and still_plan.recall == ("act_1",)
        assert still_plan.lookups == () and still_plan.writes == ()
    else:  # the ticket's number: there is none until it is opened
        assert still_plan.recall == () and still_plan.situation is None
    for status in ("rejected", "expired"):
        other = reading(pack, "complaint", text, act="question", proposals=[_ticket(status)])
        assert decide(other, pack, tools, user="u7").recall == ("act_1",), status
    # the newest decides: an opened ticket, then a second one still waiting
    waiting = [done, dataclasses.replace(_ticket("proposed"), id="act_2")]
    again = reading(pack, "complaint", text, act="question", proposals=waiting)
    expected = ("act_2",) if "怎么样了" in text else ()
    assert decide(again, pack, tools, user="u7").recall == expected


@pytest.mark.parametrize(
    "text",
    ["202405181001 的退款还没到账", "my refund for order 202405181001 hasn't arrived",
     "still waiting for my refund, order 202405181001"],
)  # fmt: skip
def test_a_refund_not_arrived_looks_the_order_up_and_puts_nothing_forward(
    pack: Pack, tools: dict[str, ToolSpec], text: str
) -> None:
    """ "202405181001 的退款还没到账" started the return workflow for a delivered order."""
    order = {"order_id": "202405181001"}
    plan = decide(reading(pack, "return_exchange", text, slots=order), pack, tools, user="u7")
    assert plan.workflow is None and plan.writes == ()
    assert [(lookup.tool, lookup.arguments) for lookup in plan.lookups] == [
        ("get_order", {"order_id": "202405181001"})
    ]
    assert plan.if_found == "status_reported"
    unnamed = decide(reading(pack, "return_exchange", "退款还没到账"), pack, tools, user="u7")
    assert unnamed.missing_slots == ("order_id",) and unnamed.workflow is None
    for request in ("我要退货 202405181001", "订单202405181001 退款还没到账 我要退货"):
        asked = decide(
            reading(pack, "return_exchange", request, slots=order), pack, tools, user="u7"
        )
        assert asked.workflow is not None and asked.workflow.kind == "start", request
    checked = decide(
        reading(pack, "return_exchange", "帮我查一下 202405181001 的退款还没到账", slots=order),
        pack, tools, user="u7",
    )  # fmt: skip
    assert checked.workflow is None and checked.if_found == "status_reported", "asked to be told"


def _waiting(slot: str) -> WorkflowView:
    return WorkflowView.model_validate({
        "id": "wf_1", "name": "password_reset", "status": "waiting_input", "tenant": "default",
        "session_id": "s", "route": "main", "phase": "action", "waiting_for": slot,
        "error": None, "failed_step": None, "created_at": 0, "updated_at": 0, "deadline_at": None,
        "finished_at": None, "duration_ms": None, "seq": 1, "inputs": {}, "steps": [],
        "phases": [], "snapshots": [],
    })  # fmt: skip


def test_a_waiting_workflow_takes_the_code_and_other_questions_are_answered(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    code = decide(reading(pack, "oos", "验证码是 482913", waiting=_waiting("sms_code")),
                  pack, tools, user="u1")  # fmt: skip
    assert code.workflow is not None and code.workflow.kind == "feed"
    assert code.workflow.inputs == {"sms_code": "482913"}
    other = decide(
        reading(pack, "logistics", "订单202405201234到哪了", slots={"order_id": "202405201234"},
                waiting=_waiting("sms_code")),
        pack, tools, user="u1",
    )  # fmt: skip
    assert other.workflow is None
    assert [lookup.tool for lookup in other.lookups] == ["get_shipment"]


def test_an_unsure_turn_that_brings_nothing_is_about_the_waiting_workflow(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "怎么还不对" right after a wrong code, read as a parcel's question at 0.38, was asked for
    an order number, and the conversation went on as a parcel's."""
    unsure = decide(
        reading(pack, "logistics", "怎么还不对", act="question", confidence=0.38, unsure=True,
                waiting=_waiting("sms_code")),
        pack, tools, user="u1",
    )  # fmt: skip
    assert unsure.workflow is not None and unsure.workflow.kind == "show"
    assert unsure.lookups == () and unsure.missing_slots == ()
    assert unsure.conversation_intent == "password_reset"
    # read surely as another intent, it is that intent's: answered as usual
    sure = decide(
        reading(pack, "logistics", "我的快递到哪了", act="question", waiting=_waiting("sms_code")),
        pack, tools, user="u1",
    )  # fmt: skip
    assert sure.workflow is None and sure.missing_slots == ("order_id",)


def test_a_workflow_waiting_for_the_agent_is_shown_not_restarted(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    asked = reading(pack, "password_reset", "我要重置密码", waiting=_waiting("approval:reset"))
    plan = decide(asked, pack, tools, user="u1")
    assert plan.workflow is not None and plan.workflow.kind == "show"


def test_asking_for_what_no_tool_does_while_a_return_waits_is_answered_not_shown(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "能换大一码吗" while the return waits for the agent answered "我已提交申请（创建退货单…）":
    the exchange is answered from the knowledge base; the same request again still shows it."""
    waiting = _waiting("approval:create_return").model_copy(update={"name": "return_refund"})
    order = {"order_id": "202405181001"}
    for text, act in (("能换大一码吗", "question"), ("还是换货吧", "request")):
        asked = reading(pack, "return_exchange", text, act=act, waiting=waiting, slots=order)
        plan = decide(asked, pack, tools, user="u1")
        assert plan.answer_intent == "kb_question" and plan.workflow is None, text
        assert [lookup.tool for lookup in plan.lookups][-1] == "kb_search"
    again = reading(pack, "return_exchange", "我要退货", waiting=waiting, slots=order)
    shown = decide(again, pack, tools, user="u1").workflow
    assert shown is not None and shown.kind == "show"


def test_the_same_request_again_continues_or_restarts_the_waiting_workflow(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    waiting = _waiting("sms_code")
    phone = {"phone": "13800138000"}
    same = decide(
        reading(pack, "password_reset", "我忘记密码了，手机号13800138000", slots=phone,
                waiting=waiting, previous_slots=phone),
        pack, tools, user="u1",
    )  # fmt: skip
    assert same.workflow is not None and same.workflow.kind == "show"
    again = decide(
        reading(pack, "password_reset", "验证码没收到，再发一次", waiting=waiting),
        pack, tools, user="u1",
    )  # fmt: skip
    assert again.workflow is not None and again.workflow.kind == "restart"
    assert again.workflow.inputs == {} and again.workflow.workflow_id == "wf_1"
    english = decide(
        reading(pack, "password_reset", "I didn't get the code", waiting=waiting),
        pack, tools, user="u1",
    )  # fmt: skip
    assert english.workflow is not None and english.workflow.kind == "restart"
    for asked in ("why didn't I get a code?", "still no sms", "haven't I received it yet?"):
        plan = decide(
            reading(pack, "password_reset", asked, waiting=waiting), pack, tools, user="u1"
        )
        assert plan.workflow is not None and plan.workflow.kind == "restart", asked
    other = {"phone": "13912345678"}
    changed = decide(
        reading(pack, "password_reset", "换个手机号 13912345678", slots=other, waiting=waiting,
                previous_slots=phone),
        pack, tools, user="u1",
    )  # fmt: skip
    assert changed.workflow is not None and changed.workflow.kind == "restart"
    assert changed.workflow.inputs == other


def test_another_phone_said_in_passing_does_not_restart_the_waiting_reset(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    waiting = _waiting("sms_code")
    phone, other = {"phone": "13800138000"}, {"phone": "13912345678"}
    in_passing = decide(
        reading(pack, "password_reset", "我以前用的是13912345678，早就不用了", slots=other,
                waiting=waiting, previous_slots=phone, carried=True),
        pack, tools, user="u1",
    )  # fmt: skip
    assert in_passing.workflow is not None and in_passing.workflow.kind == "show"
    asked_about = decide(
        reading(pack, "password_reset", "13912345678这个号也能收到验证码吗？", slots=other,
                waiting=waiting, previous_slots=phone, act="question"),
        pack, tools, user="u1",
    )  # fmt: skip
    assert asked_about.workflow is not None and asked_about.workflow.kind == "show"


def test_a_carried_question_without_its_record_is_answered_from_the_knowledge_base(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    carried = reading(pack, "logistics", "那一般几天能到？", act="question", carried=True,
                      previous_intent="logistics")  # fmt: skip
    plan = decide(carried, pack, tools, user="u1")
    assert plan.answer_intent == "kb_question" and plan.missing_slots == ()
    assert [lookup.tool for lookup in plan.lookups] == ["kb_search"]
    own = reading(pack, "logistics", "我的快递到哪了", act="question", carried=False)
    asked = decide(own, pack, tools, user="u1")
    assert asked.missing_slots == ("order_id",) and asked.lookups == ()
    # A first turn whose models disagree is not carried from a conversation: it is asked.
    opening = reading(pack, "logistics", "帮我查一下那个订单到哪了", act="question", carried=True)
    first = decide(opening, pack, tools, user="u1")
    assert first.missing_slots == ("order_id",) and first.lookups == ()


def test_a_look_up_that_finds_nothing_names_the_one_to_make_instead(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    slots = {"order_id": "202405250077"}
    for intent in ("order_status", "logistics"):
        plan = decide(reading(pack, intent, "订单202405250077到哪了", slots=slots), pack, tools,
                      user="u1")  # fmt: skip
        [lookup] = plan.lookups
        assert (lookup.tool, lookup.arguments) == ("get_shipment", slots)
        assert lookup.instead is not None
        assert (lookup.instead.tool, lookup.instead.arguments) == ("get_order", slots)
        assert lookup.instead.instead is None
    [kb] = decide(
        reading(pack, "kb_question", "运费怎么算", act="question"), pack, tools, user="u1"
    ).lookups
    assert kb.instead is None


def test_a_question_about_a_request_decided_earlier_shows_its_outcome(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    def decided(status: str, workflow: str) -> Proposal:
        return Proposal(
            id="act_1", tenant="default", user="u1", session_id="s", tool="reset_password",
            arguments={}, why={"intent": "password_reset", "workflow": workflow},
            explanation="", language="en", created_at=0, expires_at=1, status=status,  # type: ignore[arg-type]
            workflow_id="wf_9",
        )  # fmt: skip

    def ask(*proposals: Proposal) -> Any:
        turn = reading(pack, "password_reset", "did it work?", act="question",
                       proposals=list(proposals))  # fmt: skip
        return decide(turn, pack, tools, user="u1")

    shown = ask(decided("executed", "password_reset"))
    assert shown.answer_intent == "password_reset" and shown.writes == () and shown.lookups == ()
    assert shown.workflow is not None
    assert (shown.workflow.kind, shown.workflow.workflow_id) == ("show", "wf_9")
    # Still waiting for the agent: said to wait ("好了吗" / "did it work?" after a request).
    waits = ask(decided("proposed", "password_reset"))
    assert waits.situation == "still_proposed" and waits.workflow == shown.workflow
    for others in (
        (),
        (decided("executed", "x"),),
        # Taken back by the customer: no one decided it, and "did not go through, a colleague
        # will follow up" would be untrue.
        (decided("withdrawn", "password_reset"),),
    ):
        plan = ask(*others)  # none put forward, or not of this pack: the knowledge base answers
        assert plan.answer_intent == "kb_question" and plan.workflow is None


@pytest.mark.parametrize(
    ("text", "act", "answered_from_kb"),
    [
        ("我的订单202405250077还没付款，帮我取消掉吧", "request", True),
        ("能取消吗", "question", True),
        ("can I still cancel my order?", "question", True),
        ("I want to cancel order 202405250077", "request", True),
        # Whether it was cancelled, or that the customer did not: the record answers.
        ("取消了吗", "question", False),
        ("我的订单为什么被取消了", "question", False),
        ("202411140990 我没点取消", "request", False),
        ("it says cancelled but I didn't cancel it", "request", False),
        ("我的订单202405250077到哪了", "question", False),
    ],
)
def test_a_request_no_tool_carries_out_is_answered_from_the_knowledge_base(
    pack: Pack, tools: dict[str, ToolSpec], text: str, act: str, answered_from_kb: bool
) -> None:
    plan = decide(
        reading(pack, "order_status", text, act=act, slots={"order_id": "202405250077"}),
        pack, tools, user="u1",
    )  # fmt: skip
    assert plan.writes == () and plan.workflow is None
    if answered_from_kb:
        assert plan.answer_intent == "kb_question", plan.rule
        # The order first (its status joins the search: a shipped order is answered as one).
        assert [(lookup.tool, lookup.arguments, lookup.status_of) for lookup in plan.lookups] == [
            ("get_order", {"order_id": "202405250077"}, None),
            ("kb_search", {"query": text, "language": "zh"}, "get_order"),
        ]
    else:
        assert plan.answer_intent == "order_status", plan.rule
        assert [lookup.tool for lookup in plan.lookups] == ["get_shipment"]


@pytest.mark.parametrize(
    ("intent", "text"),
    [("order_status", "the item in 202405181001 is not what I ordered"),
     ("logistics", "202405181001 少发了一件"), ("order_status", "you sent me the wrong item"),
     # damage read as the order's intent: "has been delivered. If it has not reached you…"
     ("order_status", "my order 202405191888 arrived broken and I am angry"),
     ("order_status", "订单202405191888的杯子碎了")],
)  # fmt: skip
def test_a_wrong_or_missing_item_is_answered_from_the_kb_not_with_the_status(
    pack: Pack, tools: dict[str, ToolSpec], intent: str, text: str
) -> None:
    """ "…is not what I ordered" got "delivered; if it has not reached you, I will look into
    it": the parcel did reach them. Who pays to put it right is the knowledge base's."""
    plan = decide(reading(pack, intent, text, slots={"order_id": "202405181001"}), pack, tools,
                  user="u1")  # fmt: skip
    assert plan.answer_intent == "kb_question" and plan.writes == () and plan.workflow is None
    assert plan.lookups[-1].tool == "kb_search" and plan.lookups[-1].status_of is None


def test_damage_in_transit_is_answered_from_the_kb_with_the_turns_words(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """``kb_problems``: no tool handles a broken item, so the parcel's status is not said again;
    the search has the turn's words alone (no order status), and a follow-up asking for the
    remedy is searched with the problem it follows."""
    order = {"order_id": "202405181212"}

    def plan_for(text: str, **extra: Any) -> Any:
        turn = reading(pack, "logistics", text, slots=order, **extra)
        return decide(turn, pack, tools, user="u1")

    broken = plan_for("钢化膜碎了一张")
    assert broken.answer_intent == "kb_question" and broken.writes == ()
    assert [(lu.tool, lu.arguments) for lu in broken.lookups] == [
        ("kb_search", {"query": "钢化膜碎了一张", "language": "zh"})
    ]
    follow_up = plan_for(
        "能补发吗", act="question", previous_text="钢化膜碎了一张", previous_intent="logistics"
    )
    assert follow_up.lookups[0].arguments == {"query": "钢化膜碎了一张 能补发吗", "language": "zh"}
    alone = plan_for(
        "能补发吗", act="question", previous_text="到哪了", previous_intent="logistics"
    )
    assert alone.lookups[0].arguments == {"query": "能补发吗", "language": "zh"}
    # Only the number after the problem: the problem's words, after the order it names (its
    # status said, not searched with); the parcel's status alone answered nothing of the damage.
    numbered = plan_for("202405181212", previous_text="钢化膜碎了一张", previous_intent="logistics")
    assert numbered.answer_intent == "kb_question" and numbered.writes == ()
    assert [(lu.tool, lu.arguments, lu.status_of) for lu in numbered.lookups] == [
        ("get_order", order, None),
        ("kb_search", {"query": "钢化膜碎了一张", "language": "zh"}, None),
    ]
    for text in ("外包装没有破损，就是慢", "我的快递到哪了"):
        plan = plan_for(text)
        assert plan.answer_intent == "logistics"
        assert [lu.tool for lu in plan.lookups] == ["get_shipment"]


@pytest.mark.parametrize(
    ("text", "act", "answered_from_kb"),
    [
        ("能不能放快递柜", "question", True),
        ("可以交给邻居代收吗", "question", True),
        ("让快递员放门卫那里就行", "request", True),
        ("I won't be home, can they leave it with the neighbour?", "question", True),
        ("can it be left at the front door?", "question", True),
        ("please leave it in a parcel locker", "request", True),
        ("不要放快递柜，送上门", "request", False),  # not asked for: the parcel's status
        ("快递柜取件码是多少", "question", False),
    ],
)
def test_where_a_parcel_is_left_is_answered_from_the_knowledge_base(
    pack: Pack, tools: dict[str, ToolSpec], text: str, act: str, answered_from_kb: bool
) -> None:
    """No tool tells the courier where to leave a parcel: the knowledge base says how, after
    the order is looked up (its status joins the search)."""
    plan = decide(
        reading(pack, "logistics", text, act=act, slots={"order_id": "202405220011"}),
        pack, tools, user="u1",
    )  # fmt: skip
    assert plan.writes == () and plan.workflow is None
    if answered_from_kb:
        assert plan.answer_intent == "kb_question", plan.rule
        assert [lu.tool for lu in plan.lookups] == ["get_order", "kb_search"]
    else:
        assert [lu.tool for lu in plan.lookups] == ["get_shipment"]


@pytest.mark.parametrize(
    ("text", "language"),
    [("我已经付过钱了啊", "zh"), ("订单还是待付款 但是我钱已经付了", "zh"),
     ("the app shows 待付款 but i paid", "en"), ("it says unpaid but I was charged", "en")],
)  # fmt: skip
def test_paid_yet_shown_unpaid_is_answered_from_the_kb_not_with_the_status_again(
    pack: Pack, tools: dict[str, ToolSpec], text: str, language: str
) -> None:
    """ "我已经付过钱了啊" after "…目前待付款" got the same status again; the payment-problems
    article says what happens to the money. Searched in the turn's language."""
    turn = reading(pack, "order_status", text, language=language,
                   slots={"order_id": "202405250077"})  # fmt: skip
    plan = decide(turn, pack, tools, user="u1")
    assert plan.answer_intent == "kb_question" and plan.writes == ()
    assert [(lu.tool, lu.arguments) for lu in plan.lookups] == [
        ("kb_search", {"query": text, "language": language})
    ]
    asked = decide(reading(pack, "order_status", "订单什么时候发货", act="question",
                           slots={"order_id": "202405250077"}), pack, tools, user="u1")  # fmt: skip
    assert [lu.tool for lu in asked.lookups] == ["get_shipment"], "a question about the order"


@pytest.mark.parametrize(
    "text",
    ["I want my money back for the second charge", "please refund the extra charge",
     "把多扣的钱退给我", "扣了两次钱，给我退款"],
)  # fmt: skip
def test_money_back_for_a_charge_taken_twice_puts_no_return_forward(
    pack: Pack, tools: dict[str, ToolSpec], text: str
) -> None:
    """ "I want my money back for the second charge" after "I was charged twice for order …"
    put the return of the whole order (in transit) forward: the extra comes back by itself,
    and the knowledge base says when."""
    turn = reading(pack, "return_exchange", text, previous_intent="payment_methods",
                   slots={"order_id": "202405181212"})  # fmt: skip
    plan = decide(turn, pack, tools, user="u1010")
    assert plan.answer_intent == "kb_question"
    assert plan.writes == () and plan.workflow is None
    assert [lu.tool for lu in plan.lookups][-1] == "kb_search"


@pytest.mark.parametrize(
    ("intent", "text"),
    [("kb_question", "did you get the item back?"), ("kb_question", "仓库收到了吗"),
     ("return_exchange", "did you get the item back?")],
)  # fmt: skip
def test_whether_the_returned_item_came_back_says_where_the_order_stands(
    pack: Pack, tools: dict[str, ToolSpec], intent: str, text: str
) -> None:
    """ "did you get the item back?" after "I returned order …, any news?" (read as a question
    to the knowledge base) got the price-protection article ("get … back"): the order of the
    conversation is looked up and its status said; nothing is put forward."""
    turn = reading(pack, intent, text, act="question", previous_intent="return_exchange",
                   slots={"order_id": "202405100789"})  # fmt: skip
    plan = decide(turn, pack, tools, user="u1003")
    assert plan.writes == () and plan.workflow is None
    assert [(lu.tool, lu.arguments.get("order_id")) for lu in plan.lookups] == [
        ("get_order", "202405100789")
    ]
    assert plan.if_found == "status_reported"


@pytest.mark.parametrize(
    ("text", "language"),
    [("my coupon didn't apply to order 202405231122", "en"),
     ("订单202405231122的优惠券没用上", "zh")],
)  # fmt: skip
def test_a_coupon_that_did_not_apply_to_a_named_order_is_answered_from_the_kb(
    pack: Pack, tools: dict[str, ToolSpec], text: str, language: str
) -> None:
    """Read as the order's status (under the threshold), "my coupon didn't apply to order …"
    got the parcel's status alone; the coupon rules answer it, after the order."""
    turn = reading(pack, "order_status", text, language=language, unsure=True,
                   slots={"order_id": "202405231122"})  # fmt: skip
    plan = decide(turn, pack, tools, user="u1003")
    assert plan.answer_intent == "kb_question" and plan.writes == ()
    assert [lu.tool for lu in plan.lookups][-1] == "kb_search"
    assert "get_shipment" not in [lu.tool for lu in plan.lookups]


def test_the_knowledge_search_has_its_query_whatever_the_pack_maps(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """A pack whose turn arguments map neither ``query`` nor ``language`` still searches with the
    turn's words (the search's own argument), in the script's language by default."""
    bare = dataclasses.replace(pack, arguments={"user_id": "customer"})
    plan = decide(reading(bare, "kb_question", "退货运费谁出", act="question"), bare, tools,
                  user="u1")  # fmt: skip
    assert [(lu.tool, lu.arguments) for lu in plan.lookups] == [
        ("kb_search", {"query": "退货运费谁出"})
    ]


def test_every_request_of_an_intent_whose_tools_only_answer_questions_goes_to_the_kb(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """``kb_requests: all`` (the ways to pay): a problem is no question about the ways to pay."""
    problem = decide(
        reading(pack, "payment_methods", "I was charged twice"), pack, tools, user="u1"
    )
    assert problem.answer_intent == "kb_question"
    assert problem.lookups[0].arguments == {"query": "I was charged twice", "language": "zh"}
    question = decide(
        reading(pack, "payment_methods", "which ways can I pay?", act="question"),
        pack, tools, user="u1",
    )  # fmt: skip
    assert [lookup.tool for lookup in question.lookups] == ["list_payment_methods"]


def test_a_request_another_intent_says_no_tool_does_proposes_nothing(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "能帮我催一下吗" read as a return put one forward; "can you speed it up?" after a complaint
    was added to its ticket: the order's ``kb_requests`` say no tool rushes a parcel. The
    knowledge base answers, the order looked up first; the conversation goes on in the order's
    intent."""
    order = {"order_id": "202405181212"}
    for intent, text in (
        ("return_exchange", "能帮我催一下吗"),
        ("complaint", "can you speed it up?"),
    ):
        plan = decide(reading(pack, intent, text, slots=order), pack, tools, user="u1010")
        assert plan.answer_intent == "kb_question", text
        assert plan.writes == () and plan.workflow is None
        assert [lookup.tool for lookup in plan.lookups] == ["get_order", "kb_search"]
        assert plan.conversation_intent == "order_status"
    # A turn that names its own intent's subject is that intent's ("催一下退款" of a return).
    own = decide(
        reading(pack, "return_exchange", "我要退货，顺便催一下", slots=order), pack, tools,
        user="u1010",
    )  # fmt: skip
    assert own.workflow is not None and own.workflow.kind == "start"
    # A turn read in the conversation's intent is read in its terms ("send a new one please" in
    # a password reset is a new code, not a replacement parcel).
    code = decide(
        reading(pack, "password_reset", "send a new one please", carried=True), pack, tools,
        user="u1001",
    )  # fmt: skip
    assert code.answer_intent == "password_reset" and code.lookups == ()
    # Nor does a complaint lose its ticket, one that asks nothing of the kind or tells what
    # happened at length ("改地址改了三次都失败": the address article's words, a complaint's story).
    for text in ("快递员态度太差了", "上次改地址改了三次都失败 你们这功能真难用"):
        ticket = decide(reading(pack, "complaint", text, slots=order), pack, tools, user="u1010")
        assert [write.tool for write in ticket.writes] == ["create_ticket"], text


def test_a_turn_going_on_with_the_problem_is_searched_with_the_words_before(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    before = {"previous_intent": "payment_methods", "previous_text": "银行卡被扣了两次钱"}
    follow = decide(
        reading(pack, "payment_methods", "多扣的钱什么时候退给我", **before), pack, tools, user="u1"
    )
    assert follow.lookups[0].arguments == {
        "query": "银行卡被扣了两次钱 多扣的钱什么时候退给我",
        "language": "zh",
    }
    # A bare value answers the turn before: read with its words.
    bare = decide(
        reading(pack, "order_status", "202405250077", slots={"order_id": "202405250077"},
                previous_intent="order_status", previous_text="帮我取消订单"),
        pack, tools, user="u1",
    )  # fmt: skip
    assert bare.answer_intent == "kb_question"
    assert bare.lookups[-1].arguments == {"query": "帮我取消订单", "language": "zh"}
    # After another intent, the turn stands alone.
    alone = decide(
        reading(pack, "payment_methods", "我的付款失败了", previous_intent="order_status",
                previous_text="订单到哪了"),
        pack, tools, user="u1",
    )  # fmt: skip
    assert alone.lookups[0].arguments == {"query": "我的付款失败了", "language": "zh"}
    # A request named in the turn is searched with its own words ("到哪了" would find tracking).
    named = decide(
        reading(pack, "logistics", "地址改成高新路100号", previous_intent="logistics",
                previous_text="我的订单202405201234到哪了"),
        pack, tools, user="u1",
    )  # fmt: skip
    assert named.lookups[-1].arguments == {"query": "地址改成高新路100号", "language": "zh"}
    # Nor across languages: the passage is quoted in the turn's language.
    english = decide(
        reading(pack, "order_status", "can I still cancel it?", act="question", language="en",
                previous_intent="order_status", previous_text="帮我取消订单"),
        pack, tools, user="u1",
    )  # fmt: skip
    assert english.lookups[-1].arguments == {"query": "can I still cancel it?", "language": "en"}


def test_a_knowledge_question_looks_up_the_order_the_turn_names_and_searches_the_question(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """``kb_question``'s ``kb_record``: an order the turn names is looked up, so the answer says
    its status; the search has the question's words alone (a shipped order's status found the
    address article for "运费怎么算"), and the status chooses only the passage of the article
    found (``about``). A bare order number answers the question before it."""
    order = {"order_id": "202405201234"}

    def lookups(text: str, **extra: Any) -> list[tuple[str, dict[str, Any], str | None]]:
        plan = decide(reading(pack, "kb_question", text, **extra), pack, tools, user="u1")
        assert plan.answer_intent == "kb_question" and plan.writes == ()
        return [
            (lookup.tool, lookup.arguments, lookup.status_of and f"{lookup.status_in} of "
             f"{lookup.status_of}")
            for lookup in plan.lookups
        ]  # fmt: skip

    searched = {"query": "订单202405201234运费怎么算", "language": "zh"}
    assert lookups("订单202405201234运费怎么算", slots=order) == [
        ("get_order", {"order_id": "202405201234"}, None),
        ("kb_search", searched, "about of get_order"),
    ]
    assert lookups(
        "订单号202405201234", slots=order, previous_intent="kb_question",
        previous_text="我地址写错了，能改吗",
    ) == [
        ("get_order", {"order_id": "202405201234"}, None),
        ("kb_search", {"query": "我地址写错了，能改吗", "language": "zh"}, "about of get_order"),
    ]  # fmt: skip
    # "and for …?" after a policy question asks it of that order (it got "no article answers
    # this" after the order's status)
    for follow, before, language in (
        ("and for 202405201234?", "what's your refund policy?", "en"),
        ("那202405201234呢", "退货运费谁出", "zh"),
    ):
        assert lookups(
            follow, slots=order, previous_intent="kb_question", previous_text=before,
            language=language,
        ) == [
            ("get_order", {"order_id": "202405201234"}, None),
            ("kb_search", {"query": before, "language": language}, "about of get_order"),
        ]  # fmt: skip
    # An order named earlier in the conversation is not looked up for the next question.
    assert lookups("怎么开发票", found={}, slots=order) == [
        ("kb_search", {"query": "怎么开发票", "language": "zh"}, None),
    ]
    # After another intent a bare number stands alone (the intent's own search).
    assert lookups(
        "订单号202405201234", slots=order, previous_intent="logistics",
        previous_text="我的快递到哪了",
    )[-1] == ("kb_search", {"query": "订单号202405201234", "language": "zh"},
              "about of get_order")  # fmt: skip


def test_an_unsure_reading_of_an_intent_that_acts_is_answered_not_acted_on(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "my keyboard order … says lost" read as a return at 0.45: no return is put forward; the
    order is looked up and the knowledge base answers, as for a question."""
    text = "my keyboard order 202405120345 says lost"
    order = {"order_id": "202405120345"}
    unsure = decide(
        reading(pack, "return_exchange", text, slots=order, language="en", unsure=True),
        pack, tools, user="u1",
    )  # fmt: skip
    assert unsure.answer_intent == "kb_question"
    assert unsure.writes == () and unsure.workflow is None
    assert [lookup.tool for lookup in unsure.lookups] == ["get_order", "kb_search"]
    # The same request read surely starts the return's workflow.
    sure = decide(reading(pack, "return_exchange", text, slots=order), pack, tools, user="u1")
    assert sure.workflow is not None and sure.workflow.kind == "start"


def test_the_order_given_for_a_question_answers_it_and_puts_no_write_forward(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "我的退货怎么样了", then "订单号…": the number answers the question (the order, then the
    article with its status), it is no request to return that order again. After a request
    ("我要退货"), the same number starts the return's workflow."""
    order = {"order_id": "202405100789"}

    def after(before: str, text: str, language: str = "zh") -> Any:
        return decide(
            reading(pack, "return_exchange", text, slots=order, language=language,
                    previous_intent="return_exchange", previous_text=before),
            pack, tools, user="u1",
        )  # fmt: skip

    for before, text, language in (
        ("我的退货怎么样了", "订单号202405100789", "zh"),
        ("how is my return going?", "it's 202405100789", "en"),
    ):
        plan = after(before, text, language)
        assert plan.answer_intent == "kb_question", text
        assert plan.writes == () and plan.workflow is None, text
        assert [(lookup.tool, lookup.arguments, lookup.status_of) for lookup in plan.lookups] == [
            ("get_order", order, None),
            ("kb_search", {"query": before, "language": language}, "get_order"),
        ], text
    # A report of a refund not come ("where is my refund?"), then the number: that report, the
    # order looked up and its status said.
    for before, text, language in (
        ("where is my refund?", "it is 202405100789", "en"),
        ("我的退款还没到账", "202405100789", "zh"),
    ):
        report = after(before, text, language)
        assert report.if_found == "status_reported" and report.writes == (), before
        assert [(lookup.tool, lookup.arguments) for lookup in report.lookups] == [
            ("get_order", order)
        ]
    # A request, or a question whether it may be done, then the number: the return's workflow.
    for before in ("我要退货", "我这个才用两周 能不能直接退", "can I return them?"):
        request = after(before, "订单号202405100789")
        assert request.workflow is not None and request.workflow.kind == "start", before
    # A complaint's progress asked, then the order: no ticket whose summary is the number.
    ticket = decide(
        reading(pack, "complaint", "订单202405201234", slots={"order_id": "202405201234"},
                previous_intent="complaint", previous_text="我的投诉处理得怎么样了"),
        pack, tools, user="u1",
    )  # fmt: skip
    assert ticket.writes == () and ticket.answer_intent == "kb_question"
    assert [lookup.arguments for lookup in ticket.lookups] == [
        {"query": "我的投诉处理得怎么样了", "language": "zh"}
    ]
    # A workflow without a kb_record: the phone after the question is what the reset needs.
    phone = {"phone": "13812457796"}
    reset = decide(
        reading(pack, "password_reset", "13812457796", slots=phone, language="en",
                previous_intent="password_reset",
                previous_text="I forgot my password and can't log in"),
        pack, tools, user="u1",
    )  # fmt: skip
    assert reset.workflow is not None and reset.workflow.kind == "start"


def test_a_refund_short_of_what_was_paid_opens_no_return(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "退款少了20块 订单…" started the return workflow (a return of the whole order, then a
    refund of 20); it is a problem the knowledge base answers (``kb_problems``)."""
    order = {"order_id": "202405181001", "amount": 20.0}
    for text, calls in (("退款少了20块 订单202405181001", ["get_order", "kb_search"]),
                        ("the refund I got is short by 15 dollars", ["kb_search"])):  # fmt: skip
        plan = decide(reading(pack, "return_exchange", text, slots=order), pack, tools, user="u1")
        assert plan.answer_intent == "kb_question", text
        assert plan.workflow is None and plan.writes == (), text
        # the order the turn names is looked up first (checked against the customer)
        assert [lookup.tool for lookup in plan.lookups] == calls, text


def test_an_exchange_asked_for_is_answered_from_the_kb_and_puts_no_refund_forward(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """No tool exchanges an item: the return workflow would return and refund it. An exchange
    asked for is answered with how one is made; a return (or "不要换货，直接退款") starts it."""
    order = {"order_id": "202405181001"}
    for text in ("T恤尺码不合适，帮我换大一号", "I want a replacement not a refund"):
        plan = decide(reading(pack, "return_exchange", text, slots=order), pack, tools, user="u1")
        assert plan.answer_intent == "kb_question", text
        assert plan.workflow is None and plan.writes == (), text
        assert [lookup.tool for lookup in plan.lookups] == ["get_order", "kb_search"], text
    for text in ("不要换货，直接退款", "我要退换货", "我要退货"):
        plan = decide(reading(pack, "return_exchange", text, slots=order), pack, tools, user="u1")
        assert plan.workflow is not None and plan.workflow.kind == "start", text


@pytest.mark.parametrize(
    "text",
    [
        "我不要退货，只要退款",
        "不想退货 能直接退钱吗",
        "I don't want to return it, I just want my money back",
    ],
)
def test_a_turn_that_turns_the_return_down_never_puts_it_forward(
    pack: Pack, tools: dict[str, ToolSpec], text: str
) -> None:
    """ "我不要退货，只要退款" (nothing put in yet) was read as a return request and proposed the
    return ("我已为订单…提交申请"). What it asks is answered from the knowledge base, after the
    order the conversation names; nothing is proposed or started."""
    named = {"order_id": "202405181001"}
    for slots, looked_up in (({}, ["kb_search"]), (named, ["get_order", "kb_search"])):
        plan = decide(reading(pack, "return_exchange", text, slots=slots), pack, tools, user="u1")
        assert plan.answer_intent == "kb_question", text
        assert plan.workflow is None and plan.writes == (), text
        assert [lookup.tool for lookup in plan.lookups] == looked_up, text
    # Taking back something else ("不投诉了") leaves the return asked for as it is.
    plan = decide(
        reading(pack, "return_exchange", "不投诉了，我要退货", slots={"order_id": "202405181001"}),
        pack, tools, user="u1",
    )  # fmt: skip
    assert plan.workflow is not None and plan.workflow.kind == "start"


@pytest.mark.parametrize(
    "before, said, language",
    [("can I return order 202405181001?", "great, do it", "en"),
     # "yes please" after the policy got "All right. Is there anything else I can help with?"
     ("can I return order 202405181001?", "yes please", "en"),
     ("can I return order 202405181001?", "Yes, please.", "en"),
     ("订单202405181001能退吗", "那就办吧", "zh"),
     # after a report whose reply offered the return ("I can put in a return for you if you
     # like"): "yes please" got "All right." and nothing was put forward
     ("I was told I'd get a refund for 202405181001", "yes please", "en"),
     ("202405181001 退款一直在处理中", "那就办吧", "zh")],
)  # fmt: skip
def test_a_go_ahead_after_asking_whether_it_may_be_done_is_that_request(
    pack: Pack, tools: dict[str, ToolSpec], before: str, said: str, language: str
) -> None:
    """ "can I return order …?" is answered with the policy; "great, do it" read out of scope
    ("Sorry, I cannot help with that one"). It asks for the return: the workflow starts (its
    write waits for the agent), with the order the conversation named."""
    act = pack.acts.read(said)
    turn = reading(
        pack, "oos", said, language=language, dialogue_act=act, previous_intent="return_exchange",
        previous_text=before, previous_slots={"order_id": "202405181001"},
    )  # fmt: skip
    plan = decide(turn, pack, tools, user="u1")
    assert plan.workflow is not None and plan.workflow.kind == "start"
    assert plan.workflow.inputs["order_id"] == "202405181001"


@pytest.mark.parametrize(
    "before, said",
    [("can I return order 202405181001?", "ok"),  # an acknowledgement, no go-ahead
     ("订单202405181001能退吗", "好的"),
     ("how long does a refund take?", "ok do it"),  # no question whether it may be done
     ("how long does a refund take?", "yes please"),
     ("运费怎么算", "那就办吧"),
     ("I was told I'd get a refund for 202405181001", "ok")],  # the offer only acknowledged
)  # fmt: skip
def test_an_acknowledgement_or_a_go_ahead_after_another_question_starts_nothing(
    pack: Pack, tools: dict[str, ToolSpec], before: str, said: str
) -> None:
    turn = reading(
        pack, "oos", said, dialogue_act=pack.acts.read(said), previous_intent="return_exchange",
        previous_text=before, previous_slots={"order_id": "202405181001"},
    )  # fmt: skip
    plan = decide(turn, pack, tools, user="u1")
    assert plan.workflow is None and plan.writes == ()


@pytest.mark.parametrize(
    ("before", "said", "language"),
    [("the price of what I bought dropped, can I get the difference?", "ok please do it", "en"),
     ("降价了能退差价吗", "那就办吧", "zh")],
)  # fmt: skip
def test_a_go_ahead_for_what_no_tool_does_says_it_is_not_put_in_here(
    pack: Pack, tools: dict[str, ToolSpec], before: str, said: str, language: str
) -> None:
    """ "ok please do it" after "…can I get the difference?" (answered with the
    price-protection article) searched the knowledge base for "ok please do it" and found
    nothing: no tool here does it, and the reply says so."""
    turn = reading(
        pack, "kb_question", said, dialogue_act=pack.acts.read(said), language=language,
        previous_intent="kb_question", previous_text=before,
    )  # fmt: skip
    plan = decide(turn, pack, tools, user="u1")
    assert plan.situation == "not_put_in_here" and plan.lookups == () and plan.writes == ()
    # after a question whether a return may be made, the go-ahead is the return
    ret = reading(
        pack, "kb_question", said, dialogue_act=pack.acts.read(said), language=language,
        previous_intent="return_exchange", previous_text="can I return order 202405181001?",
        previous_slots={"order_id": "202405181001"},
    )  # fmt: skip
    assert decide(ret, pack, tools, user="u1").situation != "not_put_in_here"


def test_while_a_return_waits_when_questions_are_answered_and_approval_ones_show_it(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "那退款什么时候到" re-showed the waiting return; "多久能批下来" (read as a knowledge
    question) quoted an unrelated article. A question of when is answered from the knowledge
    base (without the order's status: the return, not the delivered order, is the subject); a
    question whether or when the waiting write is approved shows it, whatever it reads as."""
    waiting = _waiting("approval:create_return").model_copy(
        update={"name": "return_refund", "inputs": {"order_id": "202405181001"}}
    )
    order = {"order_id": "202405181001"}
    when = reading(pack, "return_exchange", "那退款什么时候到", act="question", waiting=waiting,
                   slots=order)  # fmt: skip
    plan = decide(when, pack, tools, user="u1")
    assert plan.answer_intent == "kb_question" and plan.workflow is None
    assert [(lookup.tool, lookup.arguments) for lookup in plan.lookups] == [
        ("kb_search", {"query": "那退款什么时候到", "language": "zh"})
    ]
    for intent, text in (("kb_question", "多久能批下来"), ("return_exchange", "退货申请通过了吗"),
                         ("oos", "has it been approved yet?")):  # fmt: skip
        asked = reading(pack, intent, text, act="question", waiting=waiting, slots=order)
        shown = decide(asked, pack, tools, user="u1").workflow
        assert shown is not None and shown.kind == "show", text
    other = reading(pack, "kb_question", "订单202405201234的退款审核通过了吗", act="question",
                    waiting=waiting, slots={"order_id": "202405201234"})  # fmt: skip
    assert decide(other, pack, tools, user="u1").workflow is None, "another order: not the return"


_REFUND_SAID = {
    "zh": "为订单 202405120345 退款 599 元，原路退回",
    "en": "refund 599 yuan for order 202405120345 to the original payment method",
}


@pytest.mark.parametrize(
    ("intent", "text", "language", "query"),
    [
        ("return_exchange", "钱什么时候到", "zh", "退款 钱什么时候到"),
        ("kb_question", "多久能到账", "zh", "退款 多久能到账"),
        ("kb_question", "when do I get the money?", "en", "refund when do I get the money?"),
        ("return_exchange", "那退款什么时候到", "zh", "那退款什么时候到"),
    ],
)
def test_a_question_of_when_while_the_refund_waits_says_it_waits_first(
    pack: Pack, tools: dict[str, ToolSpec], intent: str, text: str, language: str, query: str
) -> None:
    """A lost parcel's return went through and its refund waited for the agent: "when do I get
    the money?" was told the returned goods were being checked (nothing comes back), and "钱什么
    时候到" was told nothing was found. The waiting refund is said first, then the refund times,
    searched with the refund's subject when the question names none."""
    waiting = _waiting("approval:issue_refund").model_copy(
        update={"name": "return_refund", "inputs": {"order_id": "202405120345"}}
    )
    refund = Proposal(
        id="act_2", tenant="default", user="u7", session_id="s", tool="issue_refund",
        arguments={"order_id": "202405120345", "amount": 599.0},
        why={"intent": "return_exchange", "workflow": "return_refund"},
        explanation=_REFUND_SAID[language], language=language, created_at=0, expires_at=600,
        status="proposed", workflow_id="wf_1",
    )  # fmt: skip
    turn = reading(pack, intent, text, act="question", waiting=waiting, proposals=[refund],
                   language=language, slots={"order_id": "202405120345"})  # fmt: skip
    plan = decide(turn, pack, tools, user="u7")
    assert plan.waits_first == "act_2" and plan.workflow is None and plan.writes == ()
    assert [(lookup.tool, lookup.arguments["query"]) for lookup in plan.lookups] == [
        ("kb_search", query)
    ]
    # a knowledge question of when about something else is not about the refund
    hours = reading(pack, "kb_question", "when are you open?", act="question", waiting=waiting,
                    proposals=[refund], language="en")  # fmt: skip
    assert decide(hours, pack, tools, user="u7").waits_first is None


def test_when_the_refund_comes_looks_the_conversations_order_up(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "ok and when will the refund come" after an order being returned got "A refunded
    order's refund is sent…" (the words matched; no refund had started): a question of when that
    names a subject whose answer depends on the record's status (a refund's) looks the
    conversation's order up, and its status picks the passage. Other questions of when do not."""
    order = {"order_id": "202405100789"}
    turn = reading(pack, "kb_question", "ok and when will the refund come", act="question",
                   slots=order, language="en")  # fmt: skip
    plan = decide(turn, pack, tools, user="u1003")
    assert [(lookup.tool, lookup.status_in) for lookup in plan.lookups] == [
        ("get_order", "query"),
        ("kb_search", "about"),
    ]
    assert plan.lookups[0].arguments == order
    hours = dataclasses.replace(turn, text="when are you open?")
    assert [lookup.tool for lookup in decide(hours, pack, tools, user="u1003").lookups] == [
        "kb_search"
    ]


@pytest.mark.parametrize(
    ("text", "language"),
    [("can the courier call me?", "en"), ("能让快递员送之前给我打电话吗", "zh"),
     ("the courier will call me right", "en")],
)  # fmt: skip
def test_asking_for_the_couriers_call_is_answered_from_the_knowledge_base(
    pack: Pack, tools: dict[str, ToolSpec], text: str, language: str
) -> None:
    """ "can the courier call me?" got the parcel's status again, and "the courier will call me
    right" (read as a return) started one: no tool calls the courier; the rush article says the
    courier calls or texts before delivering."""
    turn = reading(pack, "logistics", text, act="question", language=language,
                   slots={"order_id": "202405240001"})  # fmt: skip
    plan = decide(turn, pack, tools, user="u1004")
    assert plan.answer_intent == "kb_question" and plan.writes == () and plan.workflow is None
    assert "kb_search" in [lookup.tool for lookup in plan.lookups]


def _reset(status: str) -> Proposal:
    return Proposal(
        id="act_1", tenant="default", user="u1001", session_id="s", tool="reset_password",
        arguments={"phone": "13800138000", "user_id": "u1001"},
        why={"intent": "password_reset", "workflow": "password_reset"},
        explanation="send a temporary password by SMS to the phone ending 8000 (SMS code passed)",
        language="en", created_at=0, expires_at=600, status=status, workflow_id="wf_1",
    )  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "what's the temporary password?",
        "when will I get the temporary password?",
        "临时密码是多少？",
    ],
)
def test_asked_what_the_waiting_write_gives_says_it_waits(
    pack: Pack, tools: dict[str, ToolSpec], text: str
) -> None:
    """ "what's the temporary password?" while the reset waited for the agent got the article's
    self-service steps: the question names what the write does in its tool's own words, so the
    reply says it is in and waits, and where the password will go."""
    waiting = _waiting("approval:reset_password")
    turn = reading(pack, "kb_question", text, act="question", waiting=waiting,
                   proposals=[_reset("proposed")])  # fmt: skip
    plan = decide(turn, pack, tools, user="u1001")
    assert plan.situation == "still_proposed" and plan.recall == ("act_1",)
    assert plan.answer_intent == "password_reset" and plan.lookups == () and plan.workflow is None
    # a question of its process that names nothing it gives is still answered from the articles
    steps = dataclasses.replace(turn, text="how do I reset my password myself?")
    assert [lookup.tool for lookup in decide(steps, pack, tools, user="u1001").lookups] == [
        "kb_search"
    ]


def test_asked_what_the_write_gave_after_it_went_through_shows_its_outcome(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "where do I find the temporary password?" after the agent approved the reset and it ran
    got the self-service steps: the workflow is shown as it came out (where the password went).
    Not the words of a write's arguments: a return's reason is the customer's own."""
    turn = reading(pack, "kb_question", "where do I find the temporary password?", act="question",
                   proposals=[_reset("executed")], language="en")  # fmt: skip
    plan = decide(turn, pack, tools, user="u1001")
    assert plan.workflow == WorkflowMove("show", "password_reset", "wf_1")
    assert plan.answer_intent == "password_reset" and plan.lookups == ()
    returned = Proposal(
        id="act_2", tenant="default", user="u1001", session_id="s", tool="create_return",
        arguments={"order_id": "202405181001", "reason": "尺码不合适", "user_id": "u1001"},
        why={"intent": "return_exchange", "workflow": "return_refund"},
        explanation="为订单 202405181001 创建退货单（原因：尺码不合适）", language="zh",
        created_at=0, expires_at=600, status="executed", workflow_id="wf_2",
    )  # fmt: skip
    asked = reading(pack, "kb_question", "尺码不合适能换吗", act="question", proposals=[returned])
    assert decide(asked, pack, tools, user="u1001").workflow is None


@pytest.mark.parametrize(
    ("intent", "said", "language"),
    [("payment_methods", "should I pay again?", "en"),  # read as another intent's own
     ("order_status", "要不要再付一次", "zh"),  # the problem's intent: a longer what-now
     ("oos", "do I have to pay again?", "en")],
)  # fmt: skip
def test_whether_to_pay_again_after_a_payment_not_shown_is_the_problem_answered(
    pack: Pack, tools: dict[str, ToolSpec], intent: str, said: str, language: str
) -> None:
    """ "我付了钱…还显示待付款" was answered "请不要再付一次…"; then "要不要再付一次" got the
    order's status ("付款后会尽快为您发货") and "should I pay again?" the payment methods, as if
    to pay again. A few words asking whether to do it again, or what to do now, right after a
    reported problem are answered as that problem, whatever intent they read as."""
    before = {
        "zh": "我付了钱 202405250077 还显示待付款",
        "en": "I paid for 202405250077 but it still says unpaid",
    }[language]
    turn = reading(
        pack, intent, said, language=language, previous_intent="order_status",
        previous_text=before, slots={"order_id": "202405250077"},
    )  # fmt: skip
    plan = decide(turn, pack, tools, user="u1")
    assert plan.answer_intent == "kb_question" and plan.writes == () and plan.workflow is None
    [search] = [lookup for lookup in plan.lookups if lookup.tool == "kb_search"]
    assert search.arguments["query"] == f"{before} {said}"
    # after a turn that reported nothing, the words are read as before
    plain = dataclasses.replace(turn, previous_text="where is 202405250077?")
    assert decide(plain, pack, tools, user="u1").lookups != plan.lookups


_EXCHANGE = "I want to exchange order 202405231122 for a bigger size"


@pytest.mark.parametrize(
    ("before", "text", "carried", "answered_from_kb"),
    [
        # After an exchange no tool carries out, a turn read as returns only by the conversation
        # goes on with the exchange: no return was asked for.
        (_EXCHANGE, "it hasn't arrived yet", True, True),
        ("我想换个颜色 订单202405100789", "东西还没到呢", True, True),
        # A turn that reads as a return by itself is one; so is any turn after a return asked for.
        (_EXCHANGE, "just return it then", False, False),
        ("我要退货 订单202405181001", "东西有点问题", True, False),
    ],
)
def test_a_turn_after_a_request_no_tool_carries_out_puts_no_write_forward(
    pack: Pack,
    tools: dict[str, ToolSpec],
    before: str,
    text: str,
    carried: bool,
    answered_from_kb: bool,
) -> None:
    language = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in text) else "en"
    turn = reading(
        pack, "return_exchange", text, carried=carried, language=language,
        previous_text=before, previous_intent="return_exchange",
        slots={"order_id": "202405231122"},
    )  # fmt: skip
    plan = decide(turn, pack, tools, user="u1")
    if answered_from_kb:
        assert plan.answer_intent == "kb_question" and plan.workflow is None
        [*_, kb] = plan.lookups
        assert kb.tool == "kb_search" and kb.arguments["query"] == f"{before} {text}"
    else:
        assert plan.workflow is not None and plan.workflow.kind == "start"


@pytest.mark.parametrize("text", ["order 202405181001", "202405181001", "for order 202405181001"])
def test_a_bare_number_with_no_request_before_it_only_looks_the_record_up(
    pack: Pack, tools: dict[str, ToolSpec], text: str
) -> None:
    """ "order 202405181001" after "when are you open?" (out of scope) read as a return, and a
    return was put forward: a number asks for nothing to be done. It is looked up as the order
    intent would; after a request for the return ("退货", then the number), it is that request."""
    opening = reading(pack, "return_exchange", text, slots={"order_id": "202405181001"})
    plan = decide(opening, pack, tools, user="u1")
    assert plan.writes == () and plan.workflow is None, plan
    assert plan.conversation_intent == "order_status"
    assert [lookup.tool for lookup in plan.lookups] == ["get_shipment"]
    asked = dataclasses.replace(opening, previous_intent="return_exchange", previous_text="退货")
    requested = decide(asked, pack, tools, user="u1").workflow
    assert requested is not None and requested.kind == "start"


def test_asking_for_the_hotline_is_no_complaint_but_the_hotline_failing_is(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "customer service phone number" read as a complaint (0.57) put a ticket forward: the
    knowledge base answers it. A complaint about the hotline is still a complaint."""
    asked = decide(reading(pack, "complaint", "customer service phone number", language="en"),
                   pack, tools, user="u1")  # fmt: skip
    assert asked.answer_intent == "kb_question" and asked.writes == ()
    failing = "你们的客服热线打不通 打了十几遍都占线 太差了"
    [write] = decide(reading(pack, "complaint", failing), pack, tools, user="u1").writes
    assert write.tool == "create_ticket"
