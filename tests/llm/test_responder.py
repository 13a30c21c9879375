"""A model turn over the real LiteLLM path: native tool calls through the tools executor."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from hermes_desk.events import MemorySink
from hermes_desk.llm import OfflineResponder, ResponderInput
from hermes_desk.llm.chain import ModelChain
from hermes_desk.llm.litellm_model import LiteLLMModel
from hermes_desk.llm.responder import ModelResponder
from hermes_desk.testing.chat_model import ScriptedChatModel
from hermes_desk.testing.openai_server import (
    OpenAIServer,
    malformed_tool_call,
    rate_limited,
    reply,
    tool_call,
)
from hermes_desk.tools.binding import PythonBinding
from hermes_desk.tools.executor import ToolExecutor, ToolStatus
from hermes_desk.tools.registry import ToolRegistry
from hermes_desk.tools.spec import BindingSpec, ToolSpec

LITELLM_WARNINGS = pytest.mark.filterwarnings("ignore:.*will not protect items:UserWarning")
pytestmark = [pytest.mark.anyio, LITELLM_WARNINGS]

FALLBACK = "订单系统繁忙，请稍后再试。"
REPLIES = {"order_status": {"ok": "订单 {order_id}：{get_order.status}"}}
INTENT_TOOLS = {"order_status": ["get_order"], "oos": []}


@dataclass
class Turn:
    role: str
    text: str


@dataclass
class Session:
    id: str
    turns: list[Turn] = field(default_factory=list)


def executor(sink: MemorySink) -> ToolExecutor:
    registry = ToolRegistry()

    async def get_order(order_id: str) -> dict[str, Any]:
        return {"order_id": order_id, "status": "已发货"}

    async def update_password(phone: str) -> dict[str, Any]:
        raise AssertionError("must never run: not allowed for this intent")

    for name, fn, props in (
        ("get_order", get_order, {"order_id": {"type": "string", "pattern": "^[0-9]{12}$"}}),
        ("update_password", update_password, {"phone": {"type": "string"}}),
    ):
        registry.add(
            ToolSpec(
                name=name,
                description=name,
                parameters={"type": "object", "properties": props, "required": list(props)},
                binding=BindingSpec(kind="python"),
                fallback=FALLBACK,
            ),
            PythonBinding(fn),
        )
    return ToolExecutor(registry, events=sink)


@pytest.fixture
def server() -> Iterator[tuple[OpenAIServer, str]]:
    srv = OpenAIServer()
    with srv.run() as base:
        yield srv, base


def responder(base: str, sink: MemorySink) -> ModelResponder:
    offline = OfflineResponder(REPLIES)
    chain = ModelChain(
        [LiteLLMModel("openai/primary", api_base=base, api_key="sk-test"), offline],
        retries=0,
        retry_backoff_s=0,
        events=sink,
    )
    return ModelResponder(
        chain,
        offline,
        executor=executor(sink),
        allowed_tools=lambda intent: INTENT_TOOLS.get(intent, []),
    )


FACTS = ResponderInput("order_status", slots={"order_id": "202405180001"})
SESSION = Session("sess-1", [Turn("user", "我的订单 202405180001 到哪了")])


async def test_tool_call_round_trip(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    sink = MemorySink()
    srv.script(
        tool_call("get_order", {"order_id": "202405180001"}),
        reply("您的订单已发货。"),
    )
    r = responder(base, sink)
    result = await r.run(r.prompt(FACTS, SESSION), request_id="sess-1")
    assert (result.reply, result.link, result.rounds) == ("您的订单已发货。", "openai/primary", 1)
    assert [t.status for t in result.tool_results] == [ToolStatus.OK]
    first, second = srv.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["get_order"]  # gated
    assert second["messages"][-1]["role"] == "tool"
    assert '"已发货"' in second["messages"][-1]["content"]
    assert await r.suggest(FACTS, SESSION) == ("好的。", "openai/primary")  # server default


async def test_malformed_tool_call_ends_in_fallback_and_event(
    server: tuple[OpenAIServer, str],
) -> None:
    srv, base = server
    sink = MemorySink()
    srv.script(malformed_tool_call("get_order", '{"order_id": "2024'))
    r = responder(base, sink)
    text, link = await r.suggest(FACTS, SESSION)
    assert text == FALLBACK and link == "openai/primary"
    assert len(sink.events("sess-1", "tool_parse_error")) == 1
    assert len(srv.requests) == 1  # no second model round after a failed call


async def test_tool_outside_the_intent_is_refused(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    sink = MemorySink()
    srv.script(tool_call("update_password", {"phone": "13800138000"}))
    r = responder(base, sink)
    result = await r.run(r.prompt(FACTS, SESSION), request_id="sess-1")
    assert result.reply == FALLBACK
    assert result.tool_results[0].status is ToolStatus.NOT_ALLOWED


async def test_model_down_gives_the_offline_reply(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    srv.script(rate_limited())
    facts = ResponderInput(
        "order_status",
        slots={"order_id": "202405180001"},
        tool_results={"get_order": {"status": "已发货"}},
    )
    text, link = await responder(base, MemorySink()).suggest(facts, SESSION)
    assert (text, link) == ("订单 202405180001：已发货", "offline")


async def test_text_form_calls_are_parsed_strictly() -> None:
    sink = MemorySink()
    offline = OfflineResponder(REPLIES)
    model = ScriptedChatModel(
        [
            '{"name": "get_order", "arguments": {"order_id": "202405180001"}}',
            "已为您查到：已发货。",
            '{"name": "get_order", "args": {"order_id": "202405180001"}}',
        ],
        name="scripted",
    )
    r = ModelResponder(
        ModelChain([model, offline], retry_backoff_s=0),
        offline,
        executor=executor(sink),
        allowed_tools=lambda intent: INTENT_TOOLS.get(intent, []),
    )
    ok = await r.run(r.prompt(FACTS, SESSION), request_id="s")
    assert ok.reply == "已为您查到：已发货。" and ok.tool_results[0].ok
    bad = await r.run(r.prompt(FACTS, SESSION), request_id="s")
    assert bad.reply == FALLBACK
    assert bad.tool_results[0].status is ToolStatus.PARSE_ERROR
    assert len(sink.events("s", "tool_parse_error")) == 1
