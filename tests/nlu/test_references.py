"""Ids written loosely, several ids in one turn, ordinal and anaphoric references, and the
dialogue state that keeps them (``DialogueState.take``)."""

from __future__ import annotations

from datetime import date

import pytest

from hermes_desk.nlu import DialogueState, SlotExtractor, find_reference, normalise_ids
from hermes_desk.nlu.references import Reference, resolve_reference
from hermes_desk.nlu.slot_eval import _FixedDay
from hermes_desk.packs import load_pack

RULES = load_pack("ecommerce").slot_rules

A, B, C = "202405201234", "202405181001", "202405250077"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("订单号 2024-0520-1234", "订单号 202405201234"),
        ("2024 0520 1234到哪了", "202405201234到哪了"),
        ("２０２４０５２０１２３４", "202405201234"),
        ("订单 ２０２４－０５２０－１２３４", "订单 202405201234"),
        ("2024.0520.1234", "202405201234"),
    ],
)
def test_grouped_and_full_width_ids_become_one_run(text: str, expected: str) -> None:
    assert normalise_ids(text) == expected


@pytest.mark.parametrize(
    "text",
    ["手机 138-0013-8000", "2024-05-20买的", "退了 35.5 元", "两单 202405201234 202405181001"],
)
def test_other_digit_groups_are_left_alone(text: str) -> None:
    assert normalise_ids(text) == text


@pytest.mark.parametrize(
    ("text", "kind", "position"),
    [
        ("第二个到哪了", "ordinal", 2),
        ("第2单呢", "ordinal", 2),
        ("那第一个呢", "ordinal", 1),
        ("前面那个取消吧", "ordinal", 1),
        ("最后一单", "last", 0),
        ("后面那个呢", "last", 0),
        ("不是这个，是另一个", "other", 0),
        ("那个订单", "current", 0),
        ("where is the second one?", "ordinal", 2),
        ("the 3rd order", "ordinal", 3),
        ("and the first one?", "ordinal", 1),
        ("the last one please", "last", 0),
        ("what about the other one", "other", 0),
        ("that order", "current", 0),
    ],
)
def test_references_are_read(text: str, kind: str, position: int) -> None:
    reference = find_reference(text)
    assert reference is not None, text
    assert (reference.kind, reference.position) == (kind, position)


@pytest.mark.parametrize(
    "text",
    [
        "第二天还没到",
        "第一次买",
        "第二个问题是运费怎么算",
        "换另一个颜色",
        "the other day I ordered",
        "I have another question",
        "今天",
    ],
)
def test_words_that_are_not_references(text: str) -> None:
    assert find_reference(text) is None


def test_resolving_against_the_ids_named() -> None:
    named = [A, B, C]
    assert resolve_reference(Reference("ordinal", "第二个", 2), named, A) == B
    assert resolve_reference(Reference("ordinal", "第五个", 5), named, A) is None
    assert resolve_reference(Reference("last", "最后一个"), named, A) == C
    assert resolve_reference(Reference("other", "另一个"), [A, B], A) == B
    assert resolve_reference(Reference("other", "另一个"), [A, B], B) == A
    assert resolve_reference(Reference("other", "另一个"), [A], A) is None
    assert resolve_reference(Reference("current", "这个"), named, B) == B


@pytest.fixture
def extractor() -> SlotExtractor:
    return SlotExtractor(RULES, _FixedDay(date(2024, 6, 1), "Asia/Shanghai"))


def take(state: DialogueState, extractor: SlotExtractor, text: str) -> dict[str, object]:
    return state.take(text, extractor.extract(text), extractor.mentions(text))


def test_the_state_keeps_every_id_and_follows_references(extractor: SlotExtractor) -> None:
    state = DialogueState()
    assert take(state, extractor, f"我有两个订单，{A}和{B}")["order_id"] == A
    assert state.slots["order_ids"] == [A, B]
    assert take(state, extractor, "第二个到哪了")["order_id"] == B
    assert state.slots["order_id"] == B
    assert take(state, extractor, "the other one?")["order_id"] == A
    assert take(state, extractor, f"还有一单{C}")["order_id"] == C
    assert state.slots["order_ids"] == [A, B, C]
    assert take(state, extractor, "第一个呢")["order_id"] == A
    assert take(state, extractor, "好的谢谢") == {}, "nothing named, nothing changed"
    assert state.slots["order_id"] == A


def test_an_ordinal_in_the_turn_that_names_the_ids(extractor: SlotExtractor) -> None:
    state = DialogueState()
    assert take(state, extractor, f"{A}和{B}，第二个到哪了")["order_id"] == B


def test_a_reference_with_one_id_known_changes_nothing(extractor: SlotExtractor) -> None:
    state = DialogueState()
    take(state, extractor, f"订单{A}")
    assert "order_id" not in take(state, extractor, "另一个呢")
    assert state.slots["order_id"] == A
    assert take(state, extractor, "这个订单能开发票吗")["order_id"] == A, "pointed at: brought"
    assert "order_id" not in take(state, extractor, "退款多久到账")


@pytest.mark.parametrize("text", ["where is my other order?", "那我另一个订单呢", "另一单呢"])
def test_another_record_with_one_known_is_not_the_one_known(
    extractor: SlotExtractor, text: str
) -> None:
    """ "where is my other order?" after one order was named answered of that order: which
    other one is not known, so the current value goes (and is asked for); the one named stays
    listed, so "this order" still finds it."""
    state = DialogueState()
    take(state, extractor, f"订单{A}")
    assert "order_id" not in take(state, extractor, text)
    assert "order_id" not in state.slots
    assert take(state, extractor, "这个订单呢")["order_id"] == A
    assert take(state, extractor, f"是{B}")["order_id"] == B


def test_another_record_while_two_kinds_are_current_changes_nothing(
    extractor: SlotExtractor,
) -> None:
    """With an order and a phone both current, "the other number" could be either: both stay."""
    state = DialogueState()
    take(state, extractor, f"订单{A}，手机13800138000")
    take(state, extractor, "my other number")
    assert state.slots["order_id"] == A and state.slots["phone"] == "13800138000"


def test_slots_for_shows_the_list_only_when_several(extractor: SlotExtractor) -> None:
    schema = {"order_id": {"type": "string"}}
    state = DialogueState()
    take(state, extractor, f"订单{A}")
    assert state.slots_for(schema) == {"order_id": A}
    take(state, extractor, f"还有{B}")
    assert state.slots_for(schema) == {"order_id": B, "order_ids": [A, B]}
    assert state.slots_for({}) == {}


def test_a_record_in_a_clause_of_its_own_is_found_there(extractor: SlotExtractor) -> None:
    """Each id in the clause it was named in; none when two share a clause or the turn has one."""
    assert extractor.clauses(f"订单{A}到哪了，另外我想退货订单{B}") == [
        (f"订单{A}到哪了", {"order_id": [A]}),
        (f"我想退货订单{B}", {"order_id": [B]}),
    ]
    assert extractor.clauses(f"where is {A}? also return {B}") == [
        (f"where is {A}", {"order_id": [A]}),
        (f"return {B}", {"order_id": [B]}),
    ]
    assert extractor.clauses(f"订单２０２４-０５２０-１２３４到哪了 还有{B}要退") == [
        (f"订单{A}到哪了", {"order_id": [A]}),
        (f"{B}要退", {"order_id": [B]}),
    ], "ids written loosely are found as the whole turn finds them"
    assert extractor.clauses(f"我的订单{A}和{B}都到哪了") is None
    assert extractor.clauses(f"我要退货，订单{A}、{B}") is None
    assert extractor.clauses(f"订单{A}") is None


def test_the_record_a_request_is_made_of_is_the_current_one(extractor: SlotExtractor) -> None:
    state = DialogueState()
    text = f"订单{A}到哪了，另外我想退货订单{B}"
    found, mentions = extractor.read(text)
    assert state.take(text, found, mentions, requested={"order_id": B})["order_id"] == B
    assert state.slots["order_ids"] == [A, B], "both are still named, in order"
    ordinal = f"{A}和{B}，第一个退货"
    found, mentions = extractor.read(ordinal)
    taken = DialogueState().take(ordinal, found, mentions, requested={"order_id": B})
    assert taken["order_id"] == A, "the customer's own pick wins"
    unnamed = DialogueState().take(text, found, mentions, requested={"order_id": "202405250077"})
    assert unnamed["order_id"] == A, "a record the turn did not name is never taken"
