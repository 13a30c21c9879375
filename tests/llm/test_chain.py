"""Chain policy with in-process scripted models (no HTTP): retries, fall-through, usage."""

from __future__ import annotations

import pytest

from hermes_desk.errors import (
    BackendError,
    BackendTimeoutError,
    BackendUnavailableError,
    ConfigError,
    MissingExtraError,
)
from hermes_desk.events import MemorySink
from hermes_desk.llm import Message, OfflineResponder, ResponderInput, Usage
from hermes_desk.llm.chain import ModelChain
from hermes_desk.llm.usage import UsageLedger
from hermes_desk.testing.chat_model import ScriptedChatModel
from hermes_desk.testing.clock import FakeClock

pytestmark = pytest.mark.anyio
MSGS = [Message.user("hi")]
FACTS = ResponderInput("oos", language="en")


def make(*links: ScriptedChatModel, retries: int = 2, **kw: object) -> ModelChain:
    return ModelChain(
        [*links, OfflineResponder({"oos": {"ok": "offline reply"}})],
        retries=retries,
        retry_backoff_s=0,
        clock=FakeClock(),
        **kw,  # type: ignore[arg-type]
    )


async def test_needs_a_link() -> None:
    with pytest.raises(ConfigError):
        ModelChain([])


async def test_retryable_errors_are_retried_then_answered() -> None:
    a = ScriptedChatModel(
        [BackendTimeoutError("t"), BackendUnavailableError("down"), "third"], name="a"
    )
    resp = await make(a).complete(MSGS, context=FACTS)
    assert (resp.link, resp.content) == ("a", "third")
    assert [x.status for x in resp.attempts] == ["backend_timeout", "backend_unavailable", "ok"]


async def test_non_retryable_falls_through_without_retry() -> None:
    a = ScriptedChatModel([BackendError("bad key", reason="auth")], name="a")
    b = ScriptedChatModel(["from b"], name="b")
    resp = await make(a, b).complete(MSGS, context=FACTS)
    assert resp.link == "b" and len(a.calls) == 1


async def test_missing_extra_and_bugs_fall_through_to_offline() -> None:
    a = ScriptedChatModel([MissingExtraError("litellm", "llm")], name="a")
    b = ScriptedChatModel([RuntimeError("bug")], name="b")
    resp = await make(a, b).complete(MSGS, context=FACTS)
    assert (resp.link, resp.content) == ("offline", "offline reply")
    assert [x.status for x in resp.attempts] == ["missing_extra", "error", "ok"]


async def test_rate_limit_skips_retries() -> None:
    limited = BackendUnavailableError("429", reason="rate_limited")
    a = ScriptedChatModel([limited, "never"], name="a")
    resp = await make(a, retries=5).complete(MSGS, context=FACTS)
    assert resp.link == "offline" and len(a.calls) == 1


async def test_timeout_is_enforced_by_the_chain() -> None:
    slow = ScriptedChatModel(["late"], name="slow", delay_s=5)
    resp = await make(slow, retries=0, timeout_s=0.05).complete(MSGS, context=FACTS)
    assert resp.link == "offline"
    assert resp.attempts[0].status == "timeout"
    assert slow.calls[0].timeout_s == 0.05


async def test_usage_and_events_per_session() -> None:
    sink = MemorySink()
    ledger = UsageLedger()
    a = ScriptedChatModel(["one two three", BackendError("x")], name="a")
    chain = make(a, events=sink, usage=ledger)
    await chain.complete(MSGS, context=FACTS, request_id="s1")
    await chain.complete(MSGS, context=FACTS, request_id="s1")
    totals = ledger.get("s1")
    assert totals.calls == 2
    assert totals.by_link["a"].completion_tokens == 3
    assert totals.by_link["offline"].total_tokens == 0
    assert totals.to_dict()["total_tokens"] == totals.usage.total_tokens
    calls = [(e.data["link"], e.data["status"]) for e in sink.events("s1", "llm.call")]
    assert calls == [("a", "ok"), ("a", "backend_error"), ("offline", "ok")]
    assert ledger.pop("s1").calls == 2 and ledger.get("s1").calls == 0


async def test_usage_addition_keeps_unknown_cost() -> None:
    assert (Usage(1, 2) + Usage(3, 4)).cost_usd is None
    assert (Usage(1, 2, 0.5) + Usage(3, 4)).cost_usd == 0.5
