from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from hermes_desk.config import LlmSettings
from hermes_desk.events import MemorySink
from hermes_desk.llm import Message, OfflineResponder, ResponderInput
from hermes_desk.llm.factory import build_chain
from hermes_desk.llm.prompt import build_prompt
from hermes_desk.llm.slots import ModelSlotChannel, validate_slots
from hermes_desk.testing.openai_server import OpenAIServer, rate_limited, reply

# LiteLLM builds pydantic models of its own TypedDicts on first use and warns about them.
LITELLM_WARNINGS = pytest.mark.filterwarnings("ignore:.*will not protect items:UserWarning")
pytestmark = LITELLM_WARNINGS

SCHEMA = {
    "order_id": {"type": "string", "pattern": "^[0-9]{12}$"},
    "date": {"type": "string", "format": "date"},
}
TOOLS = [
    {
        "type": "function",
        "function": {"name": n, "description": n, "parameters": {"type": "object"}},
    }
    for n in ("get_order", "get_shipment", "update_password")
]


@dataclass
class Turn:
    role: str
    text: str
    name: str | None = None
    tool_call_id: str | None = None


def test_prompt_carries_facts_notes_context_and_only_allowed_tools() -> None:
    facts = ResponderInput(
        "order_status",
        slots={"order_id": "202405180001"},
        notes=("物流已延迟 7 天",),
        tool_results={"get_order": {"status": "shipped"}},
    )
    history = [
        Turn("user", "我的快递呢"),
        Turn("agent", "请提供订单号"),
        Turn("tool", "{}", "get_order"),
    ]
    prompt = build_prompt(
        facts,
        query="订单 202405180001",
        history=history,
        tools=TOOLS,
        allowed_tools=["get_order", "get_shipment"],
        intent_description="查询订单状态",
    )
    system = prompt.messages[0]
    assert system.role == "system"
    assert "order_status（查询订单状态）" in (system.content or "")
    assert "物流已延迟 7 天" in (system.content or "")
    assert '"status":"shipped"' in (system.content or "")
    assert [m.role for m in prompt.messages] == ["system", "user", "assistant", "assistant", "user"]
    assert prompt.messages[-1].content == "订单 202405180001"
    assert [t["function"]["name"] for t in prompt.tools] == ["get_order", "get_shipment"]
    assert prompt.context is facts
    assert build_prompt(facts, query="x", tools=TOOLS, allowed_tools=()).tools == ()


def test_prompt_does_not_repeat_the_query_already_in_history() -> None:
    prompt = build_prompt(ResponderInput("oos"), query="你好", history=[Turn("user", "你好")])
    assert [m.content for m in prompt.messages[1:]] == ["你好"]


def test_validate_slots_drops_what_fails_its_schema() -> None:
    ok, bad = validate_slots(
        {"order_id": "202405180001", "date": "2024-13-45", "phone": "1", "x": None}, SCHEMA
    )
    assert ok == {"order_id": "202405180001"}
    assert bad == {"date": "fails format", "phone": "unknown slot"}
    assert validate_slots(["a"], SCHEMA) == ({}, {"(root)": "not a JSON object"})


@pytest.fixture
def server() -> Iterator[tuple[OpenAIServer, str]]:
    srv = OpenAIServer()
    with srv.run() as base:
        yield srv, base


def _chain(base: str, sink: MemorySink) -> object:
    settings = LlmSettings(
        chain=["openai/primary", "offline"],
        retries=0,
        retry_backoff_s=0,
        links={"openai/primary": {"api_base": base, "api_key_env": "TEST_KEY"}},
    )
    return build_chain(settings, OfflineResponder(), events=sink, environ={"TEST_KEY": "sk-t"})


@pytest.mark.anyio
async def test_model_slots_through_litellm(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    sink = MemorySink()
    chain = _chain(base, sink)
    channel = ModelSlotChannel(chain, events=sink)  # type: ignore[arg-type]
    srv.script(reply(json.dumps({"order_id": "202405180001", "date": "2024-05-18"})))
    srv.script(reply(json.dumps({"order_id": "no-12345", "date": "昨天"})))
    srv.script(reply("订单号是 202405180001"))
    good = await channel.extract(
        "订单 202405180001 昨天", intent="logistics", schema=SCHEMA, request_id="s1"
    )
    assert good.slots == {"order_id": "202405180001", "date": "2024-05-18"}
    assert good.link == "openai/primary"
    assert srv.requests[0]["response_format"] == {"type": "json_object"}
    bad = await channel.extract("x", intent="logistics", schema=SCHEMA, request_id="s1")
    assert bad.slots == {} and set(bad.rejected) == {"order_id", "date"}
    prose = await channel.extract("x", intent="logistics", schema=SCHEMA, request_id="s1")
    assert prose.slots == {} and prose.rejected == {"(root)": "not a JSON object"}
    events = sink.events("s1", "llm.slots")
    assert [e.data["accepted"] for e in events] == [["date", "order_id"], [], []]
    # names, never values (one no timestamp or latency can hold)
    assert "no-12345" not in json.dumps([e.to_dict() for e in events])


@pytest.mark.anyio
async def test_slot_channel_offline_gives_no_slots(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    srv.script(rate_limited())
    channel = ModelSlotChannel(_chain(base, MemorySink()))  # type: ignore[arg-type]
    out = await channel.extract("x", intent="logistics", schema=SCHEMA)
    assert out.slots == {} and out.link == "offline"


def test_build_chain_from_settings() -> None:
    offline = OfflineResponder()
    settings = LlmSettings(chain=["openai/gpt-4o-mini", "ollama/qwen2.5"], api_base="http://x")
    chain = build_chain(settings, offline)
    assert [link.name for link in chain.links] == [
        "openai/gpt-4o-mini",
        "ollama/qwen2.5",
        "offline",
    ]
    assert chain.links[-1] is offline
    assert build_chain(LlmSettings(), offline).links == (offline,)
    _ = Message  # the public API re-exports records used with the chain


def test_the_prompt_says_what_actually_happened_in_the_turns_language() -> None:
    from hermes_desk.llm import ResponderInput
    from hermes_desk.llm.prompt import build_prompt

    english = build_prompt(
        ResponderInput(
            intent="password_reset",
            slots={"tries_left": 2},
            situation="input_rejected",
            language="en",
        )
    )
    system = english.messages[0].content
    assert "the code the customer gave is wrong" in system and '"tries_left":2' in system
    chinese = build_prompt(ResponderInput(intent="complaint", situation="proposed"))
    assert "尚未执行" in chinese.messages[0].content
    plain = build_prompt(ResponderInput(intent="order_status", language="en"))
    assert "What actually happened" not in plain.messages[0].content


def test_the_prompt_tells_a_model_which_promised_date_has_passed() -> None:
    from hermes_desk.llm import ResponderInput
    from hermes_desk.llm.prompt import build_prompt

    late = ResponderInput(
        intent="logistics",
        tool_results={"get_shipment": {"status": "in_transit", "eta": "2026-12-01"}},
        overdue={"get_shipment": 4},
        today="2026-12-05",
        language="en",
    )
    system = build_prompt(late).messages[0].content
    assert "today is 2026-12-05" in system and "never promise that date again" in system
    assert "- get_shipment: 4 days late" in system
    chinese = build_prompt(ResponderInput(intent="logistics", overdue={"get_shipment": 1}))
    assert "不要再承诺这个日期" in chinese.messages[0].content
    on_time = build_prompt(ResponderInput(intent="logistics", today="2026-12-05", language="en"))
    assert "promised date" not in on_time.messages[0].content


def test_the_packs_rules_open_the_prompt_in_the_turns_language() -> None:
    from hermes_desk.llm.prompt import DEFAULT_RULES

    rules = {"zh": "你是电信客服坐席的助手。", "en": "You assist a telecom agent."}
    english = build_prompt(ResponderInput(intent="data_balance", language="en"), rules=rules)
    chinese = build_prompt(ResponderInput(intent="data_balance", language="zh"), rules=rules)
    assert english.messages[0].content.startswith("You assist a telecom agent.")
    assert chinese.messages[0].content.startswith("你是电信客服坐席的助手。")
    default = build_prompt(ResponderInput(intent="data_balance", language="en"))
    assert default.messages[0].content.startswith(DEFAULT_RULES["en"])
    assert "order" not in DEFAULT_RULES["en"] and "电商" not in DEFAULT_RULES["zh"]
