"""A turn that names several records of one kind has each looked up, not only the first; one
that would write, start a workflow or quote the knowledge base goes on with the first alone."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from hermes_desk.assist import decide
from hermes_desk.assist.records import Clause, Plan, Reading
from hermes_desk.assist.several import other_asks, other_records
from hermes_desk.packs import Pack
from hermes_desk.tools import ToolSpec

from .test_decide import reading

A, B, C, D = "202405201234", "202405181001", "202405250077", "202405211314"


def _others(
    pack: Pack, tools: dict[str, ToolSpec], intent: str, text: str, named: list[str], **extra: Any
) -> tuple[Plan, list[tuple[Reading, Plan]]]:
    turn = reading(pack, intent, text, slots={"order_id": named[0]}, listed={"order_id": named},
                   **extra)  # fmt: skip
    plan = decide(turn, pack, tools, user="u1")
    limit = extra.get("limit", 3)
    return plan, other_records(
        turn, plan, lambda other: decide(other, pack, tools, user="u1"), limit=limit
    )


def test_each_order_named_is_looked_up_as_the_first(pack: Pack, tools: dict[str, ToolSpec]) -> None:
    plan, others = _others(pack, tools, "order_status", f"我的订单{A}和{B}都到哪了", [A, B])
    assert [(lookup.tool, lookup.arguments) for lookup in plan.lookups] == [
        ("get_shipment", {"order_id": A})
    ]
    [(other, other_plan)] = others
    assert other.found["order_id"] == B and other.slots["order_id"] == B
    assert [(lookup.tool, lookup.arguments) for lookup in other_plan.lookups] == [
        ("get_shipment", {"order_id": B})
    ]
    assert other_plan.lookups[0].instead is not None  # not shipped yet: the order itself
    assert other_plan.lookups[0].instead.arguments == {"order_id": B}


def test_at_most_the_limit_of_records_in_all(pack: Pack, tools: dict[str, ToolSpec]) -> None:
    turn = reading(pack, "order_status", f"{A}、{B}、{C}、{D} 这几个订单什么状态",
                   slots={"order_id": A}, listed={"order_id": [A, B, C, D, B]})  # fmt: skip
    plan = decide(turn, pack, tools, user="u1")

    def others(limit: int) -> list[str]:
        found = other_records(turn, plan, lambda o: decide(o, pack, tools, user="u1"), limit=limit)
        return [other.found["order_id"] for other, _plan in found]

    assert others(3) == [B, C] and others(10) == [B, C, D] and others(1) == []


@pytest.mark.parametrize(
    "intent, text, extra",
    [
        ("return_exchange", f"我要退货，订单{A}和{B}", {}),  # a workflow: the first alone
        ("complaint", f"我要投诉 订单{A}和{B}", {}),  # a write
        ("kb_question", f"订单{A}和{B}能开发票吗", {"act": "question"}),  # a policy, once
    ],
)
def test_a_turn_that_does_more_than_look_up_goes_on_with_the_first_alone(
    pack: Pack, tools: dict[str, ToolSpec], intent: str, text: str, extra: dict[str, Any]
) -> None:
    _plan, others = _others(pack, tools, intent, text, [A, B], **extra)
    assert others == []


def test_nothing_is_added_when_the_record_looked_up_is_not_one_named(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """The turn names B and C, but the order it is about is A (a reference picked it): the
    others are not looked up on a plan made for another record."""
    turn = reading(pack, "order_status", f"{B}和{C}呢", slots={"order_id": A},
                   listed={"order_id": [B, C]})  # fmt: skip
    plan = decide(turn, pack, tools, user="u1")
    assert other_records(turn, plan, lambda o: decide(o, pack, tools, user="u1"), limit=3) == []


@pytest.mark.parametrize(
    "text", [f"{A}和{B}，第二个到哪了", f"{A} and {B}, where is the last one?"]
)
def test_a_turn_that_picks_one_of_those_it_names_is_about_that_one(
    pack: Pack, tools: dict[str, ToolSpec], text: str
) -> None:
    turn = reading(pack, "order_status", text, slots={"order_id": B}, listed={"order_id": [A, B]})
    plan = decide(turn, pack, tools, user="u1")
    assert [lookup.arguments for lookup in plan.lookups] == [{"order_id": B}]
    assert other_records(turn, plan, lambda o: decide(o, pack, tools, user="u1"), limit=3) == []


def _asked(pack: Pack, intent: str, current: str, clauses: list[tuple[str, str, str]]) -> Reading:
    return reading(
        pack, intent, "，另外".join(text for _v, text, _i in clauses),
        slots={"order_id": current}, listed={"order_id": [v for v, _t, _i in clauses]},
        clauses=tuple(Clause("order_id", v, text, i) for v, text, i in clauses),
    )  # fmt: skip


def test_a_record_asked_of_in_a_clause_of_its_own_is_looked_up_beside_the_request(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    asked = [(A, f"订单{A}到哪了", "logistics"), (B, f"我想退货订单{B}", "return_exchange")]
    turn = _asked(pack, "return_exchange", B, asked)
    plan = decide(turn, pack, tools, user="u1")
    assert plan.workflow is not None and plan.workflow.inputs["order_id"] == B
    planned = lambda other: decide(other, pack, tools, user="u1")  # noqa: E731
    assert other_records(turn, plan, planned, limit=3) == []
    [(other, other_plan)] = other_asks(turn, planned, pack.intent, limit=3)
    assert other.intent.name == "logistics" and other.text == f"订单{A}到哪了"
    assert other.found == {"order_id": A} and other.slots["order_id"] == A
    assert other.listed == {} and other.clauses == () and other.waiting is None
    assert [(lookup.tool, lookup.arguments) for lookup in other_plan.lookups] == [
        ("get_shipment", {"order_id": A})
    ]
    assert other_asks(turn, planned, pack.intent, limit=1) == []


@pytest.mark.parametrize(
    "clause",
    [
        (A, f"我要投诉订单{A}", "complaint"),  # a write: one request per turn
        (A, f"订单{A}嗯嗯", "oos"),  # reads as nothing
        (A, f"订单{A}也退", "return_exchange"),  # the same request: not another ask
    ],
)
def test_a_clause_that_does_more_than_look_up_or_asks_nothing_is_not_answered(
    pack: Pack, tools: dict[str, ToolSpec], clause: tuple[str, str, str]
) -> None:
    turn = _asked(pack, "return_exchange", B, [clause, (B, f"我想退货订单{B}", "return_exchange")])
    planned = lambda other: decide(other, pack, tools, user="u1")  # noqa: E731
    assert other_asks(turn, planned, pack.intent, limit=3) == []


def test_a_record_asked_a_policy_of_in_its_own_clause_gets_that_answer(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "订单A到哪了？B能退吗" looked B up as a parcel too ("已签收…如果您没有收到"): B's own clause
    asks whether it can be returned — the order, then the policy for its status."""
    asked = [(A, f"订单{A}到哪了", "logistics"), (B, f"{B}能退吗", "kb_question")]
    turn = _asked(pack, "logistics", A, asked)
    planned = lambda other: decide(other, pack, tools, user="u1")  # noqa: E731
    plan = planned(turn)
    assert other_records(turn, plan, planned, limit=3) == [], "not asked where B is"
    [(other, other_plan)] = other_asks(turn, planned, pack.intent, limit=3)
    assert other.text == f"{B}能退吗" and other.act == "question"
    assert [(lookup.tool, lookup.status_of) for lookup in other_plan.lookups] == [
        ("get_order", None),
        ("kb_search", "get_order"),
    ]
    assert other_plan.lookups[1].arguments["query"] == f"{B}能退吗"
    # a bare number in a clause of its own asks nothing else: looked up as the first
    bare = _asked(pack, "logistics", A, [(A, f"订单{A}到哪了", "logistics"), (B, B, "oos")])
    [(again, _plan)] = other_records(bare, planned(bare), planned, limit=3)
    assert again.found["order_id"] == B


def test_the_request_is_searched_with_its_own_clause(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "订单A取消，另外B的退款什么时候到": A's 取消 found the cancellation article for B's
    refund."""
    asked = [(A, f"订单{A}取消", "order_status"), (B, f"{B}的退款什么时候到", "return_exchange")]
    turn = _asked(pack, "return_exchange", B, asked)
    # the turn's other slots may hold lists (every date it names)
    found = {**turn.found, "dates": ["2024-05-18", "2024-05-20"]}
    turn = replace(turn, act="question", found=found)
    plan = decide(turn, pack, tools, user="u1")
    [search] = [lookup for lookup in plan.lookups if lookup.tool == "kb_search"]
    assert search.arguments["query"] == f"{B}的退款什么时候到"


def test_a_record_of_the_same_intent_with_its_own_problem_gets_its_answer(
    pack: Pack, tools: dict[str, ToolSpec]
) -> None:
    """ "订单A到哪了，另外B碎了": both read as the parcel's intent, but B's clause reports its own
    problem — the order, then what to do about it."""
    asked = [(A, f"订单{A}到哪了", "logistics"), (B, f"{B}碎了", "logistics")]
    turn = _asked(pack, "logistics", A, asked)
    planned = lambda other: decide(other, pack, tools, user="u1")  # noqa: E731
    [(other, other_plan)] = other_asks(turn, planned, pack.intent, limit=3)
    assert other.found == {"order_id": B} and other.text == f"{B}碎了"
    assert [(lookup.tool, lookup.arguments.get("query")) for lookup in other_plan.lookups] == [
        ("get_order", None),  # the order it names, checked against the customer
        ("kb_search", f"{B}碎了"),
    ]
