"""A turn whose records each sit in a clause of its own has each clause read alone: the request
is made of the record named with it, and a request beside a question is not dropped."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hermes_desk.assist.read import MAX_CLAUSES_READ, TurnReaderStage
from hermes_desk.clock import SystemClock
from hermes_desk.nlu import IntentPrediction, SlotExtractor
from hermes_desk.packs import Pack

A, B = "202405201234", "202405181001"


class _ByWords:
    """Reads a clause by its words, and counts the clauses it was asked to read."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def predict(self, text: str) -> IntentPrediction:
        self.read.append(text)
        if "到哪" in text:
            return IntentPrediction("logistics", 0.9)
        if "退货" in text:
            return IntentPrediction("return_exchange", 0.9)
        return IntentPrediction("oos", 0.2)


def _stage(pack: Pack) -> tuple[TurnReaderStage, _ByWords]:
    reads = _ByWords()
    stage = TurnReaderStage(
        pack=pack,
        intents=SimpleNamespace(classifier=reads),  # type: ignore[arg-type]
        slots=SlotExtractor(pack.slot_rules, SystemClock(), "Asia/Shanghai"),
        workflows=None,
        actions=None,  # type: ignore[arg-type]
        oos_threshold=0.5,
    )
    return stage, reads


def _read(stage: TurnReaderStage, pack: Pack, text: str, intent: str) -> Any:
    _found, mentions = stage.slots.read(text)
    clauses = stage._clauses(text, pack.intent(intent), mentions)
    return clauses, stage._request_among(clauses, pack.intent(intent))


def test_each_record_is_read_in_its_own_clause(pack: Pack) -> None:
    stage, reads = _stage(pack)
    clauses, request = _read(stage, pack, f"订单{A}到哪了，另外我想退货订单{B}", "return_exchange")
    assert [(c.value, c.intent) for c in clauses] == [(A, "logistics"), (B, "return_exchange")]
    assert request is None, "the turn is the request already"
    assert reads.read == [f"订单{A}到哪了", f"我想退货订单{B}"]


def test_a_request_beside_a_question_makes_the_turn_that_request(pack: Pack) -> None:
    stage, _reads = _stage(pack)
    _clauses, request = _read(stage, pack, f"订单{B}退货，还有{A}到哪了", "logistics")
    assert request is not None and request.name == "return_exchange"
    # a question in each clause: nothing is requested
    _clauses, asked = _read(stage, pack, f"订单{B}能退货吗，还有{A}到哪了", "logistics")
    assert asked is None


def test_records_in_one_clause_or_a_long_list_are_not_read_one_by_one(pack: Pack) -> None:
    stage, reads = _stage(pack)
    clauses, _request = _read(stage, pack, f"订单{A}和{B}都到哪了", "logistics")
    assert clauses == () and reads.read == []
    ids = [f"2024052{n:05d}" for n in range(MAX_CLAUSES_READ + 1)]
    listed = "，".join(f"{i}到哪了" for i in ids)
    clauses, _request = _read(stage, pack, listed, "logistics")
    assert clauses == () and reads.read == [], "a classifier pass per id of a list: none"
    fewer = "，".join(f"{i}到哪了" for i in ids[:MAX_CLAUSES_READ])
    clauses, _request = _read(stage, pack, fewer, "logistics")
    assert len(clauses) == MAX_CLAUSES_READ


def test_a_request_after_the_records_it_names_makes_the_turn_that_request(pack: Pack) -> None:
    """ "订单A和B帮我退货" read as their status (0.82): the statuses were said and the return
    asked for went unheard. The words after the last record are the request."""
    stage, reads = _stage(pack)
    for text in (
        f"订单{B}和{A}帮我退货",
        f"我的订单{B}，还有{A}，帮我退货",
        f"orders {B} and {A} 退货",
    ):
        _found, mentions = stage.slots.read(text)
        request = stage._request_after_records(text, pack.intent("order_status"), mentions)
        assert request is not None and request.name == "return_exchange", text
    assert reads.read[-1] == " 退货"
    # a question after them, words about one of them before the last, one record, or a turn
    # already of a workflow's intent: nothing more is read into it
    for text, intent in ((f"订单{B}和{A}能退货吗", "order_status"),
                         (f"订单{B}到哪了，{A}帮我退货", "order_status"),
                         (f"订单{B}帮我退货", "order_status"),
                         (f"订单{B}和{A}帮我退货", "return_exchange")):  # fmt: skip
        _found, mentions = stage.slots.read(text)
        assert stage._request_after_records(text, pack.intent(intent), mentions) is None, text
