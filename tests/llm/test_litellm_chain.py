"""The real LiteLLM path against the loopback OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hermes_desk.errors import BackendError, BackendTimeoutError, BackendUnavailableError
from hermes_desk.events import MemorySink
from hermes_desk.llm import Message, OfflineResponder, ResponderInput
from hermes_desk.llm.chain import ModelChain
from hermes_desk.llm.litellm_model import LiteLLMModel
from hermes_desk.llm.usage import UsageLedger
from hermes_desk.testing.openai_server import (
    OpenAIServer,
    rate_limited,
    reply,
    server_error,
    slow,
    tool_call,
)

# LiteLLM builds pydantic models of its own TypedDicts on first use and warns about them.
LITELLM_WARNINGS = pytest.mark.filterwarnings("ignore:.*will not protect items:UserWarning")
pytestmark = [pytest.mark.anyio, LITELLM_WARNINGS]

FACTS = ResponderInput("oos")
OFFLINE_REPLY = "抱歉，这个问题我暂时无法帮您处理。"


@pytest.fixture
def server() -> Iterator[tuple[OpenAIServer, str]]:
    srv = OpenAIServer()
    with srv.run() as base:
        yield srv, base


def link(base: str, model: str) -> LiteLLMModel:
    return LiteLLMModel(f"openai/{model}", api_base=base, api_key="sk-test", timeout_s=5)


def chain(base: str, *, events: MemorySink | None = None, **kw: object) -> ModelChain:
    return ModelChain(
        [
            link(base, "primary"),
            link(base, "backup"),
            OfflineResponder({"oos": {"ok": OFFLINE_REPLY}}),
        ],
        timeout_s=kw.pop("timeout_s", 5.0),  # type: ignore[arg-type]
        retries=kw.pop("retries", 1),  # type: ignore[arg-type]
        retry_backoff_s=0,
        events=events,
        usage=UsageLedger(),
    )


MSGS = [Message.system("你是客服助手"), Message.user("你好")]


async def test_primary_answers_with_usage(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    srv.script(reply("您好，请问有什么可以帮您？", prompt_tokens=20, completion_tokens=9))
    c = chain(base)
    resp = await c.complete(MSGS, context=FACTS, request_id="s1")
    assert resp.content == "您好，请问有什么可以帮您？", resp.attempts
    assert resp.link == "openai/primary"
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (20, 9)
    assert srv.requests[0]["messages"][1] == {"role": "user", "content": "你好"}
    assert c.usage is not None
    assert c.usage.get("s1").usage.total_tokens == 29


async def test_falls_back_on_429_without_retrying(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    srv.script(rate_limited(), rate_limited(), model="primary")
    srv.script(reply("备用模型回答"), model="backup")
    sink = MemorySink()
    resp = await chain(base, events=sink, retries=3).complete(MSGS, context=FACTS, request_id="s")
    assert resp.content == "备用模型回答"
    assert resp.link == "openai/backup"
    assert [(a.link, a.status) for a in resp.attempts] == [
        ("openai/primary", "rate_limited"),
        ("openai/backup", "ok"),
    ]
    assert srv.models_called() == ["primary", "backup"]
    assert [e.data["status"] for e in sink.events("s", "llm.call")] == ["rate_limited", "ok"]


async def test_retries_a_500_then_falls_back(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    srv.script(server_error(), server_error(), model="primary")
    srv.script(reply("第二个模型"), model="backup")
    resp = await chain(base, retries=1).complete(MSGS, context=FACTS)
    assert resp.link == "openai/backup"
    assert srv.models_called() == ["primary", "primary", "backup"]
    assert resp.attempts[0].status == "server_error" and resp.attempts[0].retryable


async def test_a_retry_can_succeed_on_the_same_link(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    srv.script(server_error(503), reply("重试成功"), model="primary")
    resp = await chain(base, retries=1).complete(MSGS, context=FACTS)
    assert (resp.link, resp.content) == ("openai/primary", "重试成功")


async def test_falls_back_on_timeout(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    srv.script(slow(5.0), model="primary")
    srv.script(reply("及时回答"), model="backup")
    resp = await chain(base, retries=0, timeout_s=0.5).complete(MSGS, context=FACTS)
    assert resp.link == "openai/backup"
    assert resp.attempts[0].status == "timeout"


async def test_chain_ends_offline_when_every_model_fails(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    srv.script(rate_limited(), model="primary")
    srv.script(server_error(), server_error(), model="backup")
    resp = await chain(base, retries=1).complete(MSGS, context=FACTS)
    assert resp.link == "offline" and resp.offline
    assert resp.content == OFFLINE_REPLY
    assert [a.link for a in resp.attempts] == [
        "openai/primary",
        "openai/backup",
        "openai/backup",
        "offline",
    ]


async def test_connection_refused_falls_through_to_offline() -> None:
    from hermes_desk.testing.servers import free_port

    dead = f"http://127.0.0.1:{free_port()}/v1"
    c = ModelChain([link(dead, "primary"), OfflineResponder()], retries=0, retry_backoff_s=0)
    resp = await c.complete(MSGS, context=ResponderInput("x", language="en"))
    assert resp.link == "offline"
    assert resp.attempts[0].status == "connection"


async def test_native_tool_call_is_returned_raw(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    srv.script(tool_call("get_order", {"order_id": "202405180001"}))
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_order",
                "description": "查询订单",
                "parameters": {
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"],
                },
            },
        }
    ]
    resp = await chain(base).complete(MSGS, tools=tools, context=FACTS)
    (call,) = resp.tool_calls
    assert call.name == "get_order"
    assert call.arguments == '{"order_id": "202405180001"}'
    assert srv.requests[0]["tools"] == tools


async def test_errors_are_translated_at_the_boundary(server: tuple[OpenAIServer, str]) -> None:
    srv, base = server
    m = link(base, "x")
    srv.script(rate_limited(), server_error(401), server_error(400), slow(3.0))
    with pytest.raises(BackendUnavailableError) as rl:
        await m.complete(MSGS)
    assert rl.value.details["reason"] == "rate_limited" and rl.value.retryable
    assert isinstance(rl.value.__cause__, Exception)
    with pytest.raises(BackendError) as auth:
        await m.complete(MSGS)
    assert auth.value.details["reason"] == "auth" and not auth.value.retryable
    with pytest.raises(BackendError) as bad:
        await m.complete(MSGS)
    assert bad.value.details["reason"] == "bad_request"
    with pytest.raises(BackendTimeoutError):
        await m.complete(MSGS, timeout_s=0.3)
