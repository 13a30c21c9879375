"""Which record a turn is about, over real HTTP against the demo backend: several ids in one
turn are all kept, ordinal and anaphoric references pick the right one, ids written loosely are
normalised, returns get product / purchase date / reason, known slots carry into questions."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from fastapi import FastAPI

from hermes_desk.api.app import create_app
from hermes_desk.runtime import build_runtime
from hermes_desk.testing import FakeClock
from hermes_desk.testing.servers import serve_in_thread
from tests.e2e.conftest import Service, make_settings

FIRST, SECOND, THIRD = "202405201234", "202405181001", "202405250077"  # all of u1001


def shipment(service: Service, order_id: str) -> dict[str, Any]:
    return dict(httpx.get(f"{service.backend_url}/shipments/{order_id}").json())


def looked_up(out: dict[str, Any]) -> list[str]:
    """The order ids the turn's get_shipment calls answered for."""
    return [
        c["result"]["order_id"]
        for c in out["tool_calls"]
        if c["tool"] == "get_shipment" and c["status"] == "ok"
    ]


def test_two_ids_in_one_turn_are_both_kept_and_the_second_is_picked(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    first = service.turn(sid, "u1001", f"我有两个订单，{FIRST}和{SECOND}，帮我看看")
    assert first["slots"]["order_id"] == FIRST, "the first named is the current one"
    assert first["mentions"] == {"order_id": [FIRST, SECOND]}
    assert first["slots"]["order_ids"] == [FIRST, SECOND]

    second = service.turn(sid, "u1001", "第二个现在到哪了")
    assert second["slots"]["order_id"] == SECOND
    assert looked_up(second) == [SECOND]
    assert shipment(service, SECOND)["status_text"] in second["suggestion"]["text"]

    back = service.turn(sid, "u1001", "那第一个呢")
    assert back["slots"]["order_id"] == FIRST
    assert looked_up(back) == [FIRST]
    assert back["mentions"] == {"order_id": [FIRST, SECOND]}, "the list is kept"


def test_the_other_one_and_the_last_one_in_english(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", f"I have three orders: {FIRST}, {SECOND} and {THIRD}")
    last = service.turn(sid, "u1001", "where is the last one?")
    assert last["slots"]["order_id"] == THIRD
    other = service.turn(sid, "u1001", f"and where is {FIRST}?")
    assert other["slots"]["order_id"] == FIRST
    flipped = service.turn(sid, "u1001", "no, I meant the second one")
    assert flipped["slots"]["order_id"] == SECOND
    assert flipped["mentions"]["order_id"] == [FIRST, SECOND, THIRD]


def test_a_correction_to_the_other_order(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", f"订单{FIRST}和{SECOND}都是我的")
    out = service.turn(sid, "u1001", "不是这个，是另一个订单，到哪了")
    assert out["slots"]["order_id"] == SECOND
    assert looked_up(out) == [SECOND]


@pytest.mark.parametrize(
    ("first", "other", "language"),
    [
        ("where is order 202405201234?", "ok and where is my other order?", "en"),
        ("订单202405201234到哪了", "那我另一个订单呢，到哪了", "zh"),
    ],
)
def test_my_other_order_with_one_named_asks_which(
    service: Service, first: str, other: str, language: str
) -> None:
    """ "where is my other order?" after one order answered of the same order again: the
    customer means one not yet named, so the number is asked for and nothing is looked up."""
    sid = service.open_session("u1001")["session_id"]
    assert looked_up(service.turn(sid, "u1001", first)) == [FIRST]
    out = service.turn(sid, "u1001", other)
    assert "order_id" not in out["slots"]
    assert [c["tool"] for c in out["tool_calls"] if c["tool"] != "kb_search"] == []
    assert FIRST not in out["suggestion"]["text"]
    assert ("订单号" if language == "zh" else "order number") in out["suggestion"]["text"]
    named = service.turn(sid, "u1001", SECOND)
    assert named["slots"]["order_id"] == SECOND and named["tool_calls"]


@pytest.mark.parametrize(
    "text",
    [
        "订单号 2024-0520-1234 到哪了",
        "单号 2024 0520 1234 到哪了",
        "２０２４０５２０１２３４到哪了",
        "order number 2024-0520-1234, where is it?",
    ],
)
def test_ids_written_in_groups_or_full_width_are_normalised(service: Service, text: str) -> None:
    sid = service.open_session("u1001")["session_id"]
    out = service.turn(sid, "u1001", text)
    assert out["slots"]["order_id"] == FIRST
    assert looked_up(out) == [FIRST]


def test_an_order_named_earlier_is_carried_into_a_knowledge_question(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", f"我的订单是{SECOND}")
    out = service.turn(sid, "u1001", "这个订单能开发票吗？")
    assert out["intent"]["answered_as"] == "kb_question"
    assert out["slots"]["order_id"] == SECOND
    assert SECOND in out["suggestion"]["text"]
    assert out["knowledge"] and out["knowledge"][0]["article_id"] == "invoices"
    assert out["proposals"] == [] and "请提供" not in out["suggestion"]["text"]
    general = service.turn(sid, "u1001", "退款一般多久到账？")
    assert general["intent"]["answered_as"] == "kb_question"
    assert general["slots"]["order_id"] == SECOND, "still known"
    assert SECOND not in general["suggestion"]["text"], "a general answer names no order"


@pytest.fixture
def clocked_service(tmp_path: Path, backend_url: str) -> Iterator[tuple[Service, FakeClock]]:
    """The service on a fake clock: 2024-06-01 10:00 in Shanghai."""
    httpx.delete(f"{backend_url}/_faults")
    settings = make_settings(tmp_path, backend_url)
    start = datetime(2024, 6, 1, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai")).timestamp()
    clock = FakeClock(start)
    runtime = build_runtime(settings, clock=clock)
    app = create_app(runtime=runtime)
    given = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with given(app):
            await runtime.start()
            try:
                yield
            finally:
                await runtime.stop()

    app.router.lifespan_context = lifespan
    with (
        serve_in_thread(app) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        yield Service(url, backend_url, client, settings), clock


def test_a_return_gets_product_purchase_date_and_reason(
    clocked_service: tuple[Service, FakeClock],
) -> None:
    service, _clock = clocked_service
    sid = service.open_session("u1001")["session_id"]
    out = service.turn(sid, "u1001", "我昨天买的耳机有杂音，想退货")
    assert out["intent"]["name"] == "return_exchange", out["intent"]
    assert out["slots"]["product"] == "耳机"
    assert out["slots"]["purchase_date"] == "2024-05-31", "yesterday on the service's clock"
    assert out["slots"]["reason"]
    assert out["missing_slots"] == ["order_id"]

    given = service.turn(sid, "u1001", f"订单号{FIRST}")
    assert given["slots"]["product"] == "耳机", "carried to the turn that brings the order"
    [proposal] = given["proposals"]
    assert proposal["tool"] == "create_return"
    assert proposal["arguments"]["reason"] == out["slots"]["reason"], "the reason goes with it"


def test_an_english_return_gets_its_details(clocked_service: tuple[Service, FakeClock]) -> None:
    service, _clock = clocked_service
    sid = service.open_session("u1002")["session_id"]
    out = service.turn(
        sid, "u1002", "the yoga mat I ordered last week is too thin, I want to return it"
    )
    assert out["intent"]["name"] == "return_exchange", out["intent"]
    assert out["slots"]["product"] == "yoga mat"
    assert out["slots"]["purchase_date"] == "2024-05-25"
    assert out["slots"]["reason"] == "too thin"
