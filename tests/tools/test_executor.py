"""The executor with in-process tools: every status, its event, its metric, and the gate."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.tools.tools_helpers import PACK

from hermes_desk.config import BreakerSettings, ToolSettings
from hermes_desk.errors import BackendError
from hermes_desk.events import MemorySink
from hermes_desk.testing import FakeClock
from hermes_desk.tools import (
    BindingSpec,
    CallContext,
    IntentGate,
    PythonBinding,
    ToolExecutor,
    ToolRegistry,
    ToolSpec,
    ToolStatus,
)

pytestmark = pytest.mark.anyio

ORDER = {"order_id": "202405201234"}


class Scripted:
    """A tool whose next answers are scripted: a value, an exception, or a hang."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.contexts: list[CallContext] = []
        self.answers: list[Any] = []
        self.healthy = True
        self.probes = 0

    async def call(self, arguments: Any, *, timeout_s: float, context: CallContext) -> Any:
        self.calls.append(dict(arguments))
        self.contexts.append(context)
        answer = self.answers.pop(0) if self.answers else {"status": "shipped"}
        if answer == "hang":
            await asyncio.sleep(30)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def health(self, *, timeout_s: float) -> bool:
        self.probes += 1
        return self.healthy


def _spec(name: str = "get_order", **over: Any) -> ToolSpec:
    fields: dict[str, Any] = {
        "name": name,
        "description": "look up an order",
        "parameters": {
            "type": "object",
            "properties": {
                "order_id": {"type": "string", "pattern": "^[0-9]{12}$"},
                "day": {"type": "string", "format": "date"},
                "channel": {"type": "string", "enum": ["app", "web"]},
            },
            "required": ["order_id"],
        },
        "response_format": {
            "type": "object",
            "required": ["status"],
            "properties": {"status": {"type": "string"}},
        },
        "fallback": "订单系统繁忙，请稍后再试。",
        "binding": BindingSpec(kind="python"),
        "timeout_s": 0.2,
    }
    fields.update(over)
    return ToolSpec(**fields)


class Timer:
    """A latency clock the test moves, so a 'slow' answer needs no real waiting."""

    def __init__(self) -> None:
        self.t = 0.0
        self.step = 0.0

    def __call__(self) -> float:
        self.t += self.step
        return self.t


@pytest.fixture
def setup(fake_clock: FakeClock) -> tuple[ToolExecutor, Scripted, MemorySink, Timer]:
    tool = Scripted()
    registry = ToolRegistry()
    registry.add(_spec(), tool)
    registry.add(_spec("get_shipment"), Scripted())
    sink = MemorySink()
    timer = Timer()
    executor = ToolExecutor(
        registry,
        settings=ToolSettings(breaker=BreakerSettings()),
        events=sink,
        clock=fake_clock,
        timer=timer,
    )
    return executor, tool, sink, timer


async def _call(executor: ToolExecutor, call: Any = None, **kw: Any) -> Any:
    return await executor.execute(
        call if call is not None else {"name": "get_order", "arguments": ORDER},
        request_id=kw.pop("request_id", "ses_abc"),
        allowed_tools=kw.pop("allowed_tools", ["get_order", "get_shipment"]),
        **kw,
    )


def _last(sink: MemorySink) -> dict[str, Any]:
    return sink.events()[-1].to_dict()


async def test_ok_call_emits_one_event_and_counts(setup: Any) -> None:
    executor, tool, sink, _ = setup
    result = await _call(executor, context=CallContext("ses_abc", idempotency_key="k1"))
    assert result.status is ToolStatus.OK and result.ok
    assert result.result == {"status": "shipped"} and result.fallback is None
    assert tool.contexts[0].idempotency_key == "k1"
    events = sink.events(request_id="ses_abc")
    assert len(events) == 1
    event = events[0].to_dict()
    assert event["event"] == "tool.call" and event["request_id"] == "ses_abc"
    assert event["tool"] == "get_order" and event["status"] == "ok"
    assert len(event["args_digest"]) == 16
    assert executor.metrics.count("get_order", "ok") == 1
    text = executor.metrics.render().decode()
    assert 'hermes_tool_call_duration_seconds_count{tool="get_order"} 1.0' in text


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({}, "'order_id' is a required property"),
        ({"order_id": 202405201234}, "order_id: type"),
        ({"order_id": "2024"}, "order_id: pattern"),
        ({"order_id": "202405201234", "day": "2024-13-01"}, "day: format"),
        ({"order_id": "202405201234", "channel": "fax"}, "channel: enum"),
    ],
)
async def test_invalid_arguments_never_reach_the_tool(
    setup: Any, arguments: dict[str, Any], problem: str
) -> None:
    executor, tool, sink, _ = setup
    result = await _call(executor, {"name": "get_order", "arguments": arguments})
    assert result.status is ToolStatus.INVALID_ARGS
    assert result.fallback == "订单系统繁忙，请稍后再试。"
    assert problem in (result.error or "")
    assert tool.calls == []
    assert _last(sink)["status"] == "invalid_args"
    assert executor.metrics.count("get_order", "invalid_args") == 1


async def test_invalid_result_is_a_failure(setup: Any) -> None:
    executor, tool, sink, _ = setup
    tool.answers = [{"state": "shipped"}]
    result = await _call(executor)
    assert result.status is ToolStatus.INVALID_RESULT and result.result is None
    assert result.fallback and "status" in (result.error or "")
    assert (await executor.store.get("get_order")).failures == 1
    assert _last(sink)["status"] == "invalid_result"
    assert executor.metrics.count("get_order", "invalid_result") == 1


async def test_error_and_timeout(setup: Any) -> None:
    executor, tool, sink, _ = setup
    tool.answers = [BackendError("GET /orders/{order_id}: HTTP 503"), RuntimeError("boom"), "hang"]
    first = await _call(executor)
    assert first.status is ToolStatus.ERROR and "HTTP 503" in (first.error or "")
    second = await _call(executor)
    assert second.status is ToolStatus.ERROR and second.error == "RuntimeError raised"
    third = await _call(executor)
    assert third.status is ToolStatus.TIMEOUT and third.fallback
    assert [e.data["status"] for e in sink.events()] == ["error", "error", "timeout"]
    assert executor.metrics.count("get_order", "error") == 2
    assert executor.metrics.count("get_order", "timeout") == 1


async def test_parse_error_gives_the_tools_fallback_and_a_parse_error_event(setup: Any) -> None:
    executor, tool, sink, _ = setup
    result = await _call(executor, {"name": "get_order", "arguments": "202405201234"})
    assert result.status is ToolStatus.PARSE_ERROR
    assert result.fallback == "订单系统繁忙，请稍后再试。"
    event = _last(sink)
    assert event["event"] == "tool_parse_error" and event["status"] == "parse_error"
    prose = await _call(executor, 'I will call get_order now {"name": "get_order"}')
    assert prose.status is ToolStatus.PARSE_ERROR and prose.fallback  # default fallback
    assert tool.calls == []
    assert executor.metrics.count("get_order", "parse_error") == 1
    assert executor.metrics.count("<unknown>", "parse_error") == 1


async def test_unknown_tool_is_refused(setup: Any) -> None:
    executor, _, sink, _ = setup
    result = await _call(executor, {"name": "drop_tables", "arguments": {}}, allowed_tools=None)
    assert result.status is ToolStatus.UNKNOWN_TOOL and result.fallback
    assert _last(sink)["tool"] == "drop_tables"
    assert executor.metrics.count("<unknown>", "unknown_tool") == 1


async def test_a_tool_outside_the_intents_list_is_not_allowed(setup: Any) -> None:
    executor, tool, sink, _ = setup
    result = await _call(executor, allowed_tools=["get_shipment"])
    assert result.status is ToolStatus.NOT_ALLOWED and result.fallback
    assert tool.calls == []
    assert _last(sink)["status"] == "not_allowed"
    assert executor.metrics.count("get_order", "not_allowed") == 1


@pytest.mark.parametrize("utterance_intent", ["oos"])
@pytest.mark.parametrize(
    "call",
    [
        {"name": "get_order", "arguments": ORDER},
        {"name": "kb_search", "arguments": {"query": "这个东西好吃吗"}},
        "not even a call",
    ],
)
async def test_out_of_scope_turns_call_no_tool(
    setup: Any, utterance_intent: str, call: Any
) -> None:
    # "这个东西好吃吗" is small talk: the pack's gate gives its intent no tool at all.
    executor, tool, _, _ = setup
    gate = IntentGate.from_file(PACK / "intents.yaml")
    assert gate.is_out_of_scope(utterance_intent)
    allowed = gate.allowed(utterance_intent)
    assert allowed == frozenset()
    result = await _call(executor, call, allowed_tools=allowed)
    assert result.status is ToolStatus.NOT_ALLOWED and result.fallback
    assert tool.calls == []
    assert gate.allowed(None) == frozenset() and gate.allowed("no_such_intent") == frozenset()
    assert gate.allowed("order_status") == {"get_order", "get_shipment"}


async def test_breaker_opens_on_three_slow_calls_and_answers_at_once(setup: Any) -> None:
    executor, tool, sink, timer = setup
    timer.step = 3.2  # each answer takes 3.2 s by this timer: slower than slow_call_s = 3 s
    for _ in range(3):
        slow = await _call(executor)
        assert slow.status is ToolStatus.OK  # it answered, but it counts as a timeout
    timer.step = 0.0
    fourth = await _call(executor)
    assert fourth.status is ToolStatus.BREAKER_OPEN
    assert fourth.fallback == "订单系统繁忙，请稍后再试。"
    assert len(tool.calls) == 3
    breaker_events = sink.events(name="tool.breaker")
    assert [(e.data["from"], e.data["to"]) for e in breaker_events] == [("closed", "open")]
    assert executor.metrics.count("get_order", "breaker_open") == 1
    states = await executor.breaker_states()
    assert states["get_order"]["state"] == "open"
    assert states["get_order"]["retry_in_s"] == 600
    assert states["get_shipment"]["state"] == "closed"


async def test_cool_down_probes_first_then_closes_or_reopens(
    setup: Any, fake_clock: FakeClock
) -> None:
    executor, tool, sink, _ = setup
    tool.answers = [BackendError("HTTP 500")] * 5
    for _ in range(5):
        assert (await _call(executor)).status is ToolStatus.ERROR
    assert (await _call(executor)).status is ToolStatus.BREAKER_OPEN
    fake_clock.advance(600)
    tool.healthy = False
    failed = await _call(executor)
    assert failed.status is ToolStatus.BREAKER_OPEN and failed.error == "health probe failed"
    assert tool.probes == 1 and len(tool.calls) == 5  # probed, no real call
    assert _last(sink)["probe_healthy"] is False
    fake_clock.advance(599)
    assert (await _call(executor)).status is ToolStatus.BREAKER_OPEN
    assert tool.probes == 1  # re-opened for a full cool-down: no probe yet
    fake_clock.advance(1)
    tool.healthy = True
    healed = await _call(executor)
    assert healed.status is ToolStatus.OK and tool.probes == 2 and len(tool.calls) == 6
    transitions = [(e.data["from"], e.data["to"]) for e in sink.events(name="tool.breaker")]
    assert transitions == [
        ("closed", "open"), ("open", "probing"), ("probing", "open"),
        ("open", "probing"), ("probing", "closed"),
    ]  # fmt: skip
    text = executor.metrics.render().decode()
    assert 'hermes_tool_breaker_state{tool="get_order"} 0.0' in text
    assert 'hermes_tool_breaker_transitions_total{state="open",tool="get_order"} 2.0' in text


async def test_events_never_carry_sensitive_values(fake_clock: FakeClock) -> None:
    registry = ToolRegistry()
    spec = ToolSpec(
        name="update_password",
        description="set a password",
        parameters={
            "type": "object",
            "properties": {"phone": {"type": "string"}, "secret_word": {"type": "string"}},
        },
        binding=BindingSpec(kind="python"),
        sensitive=("secret_word",),
    )

    async def update(phone: str, secret_word: str) -> dict[str, bool]:
        return {"updated": True}

    registry.add(spec, PythonBinding(update))
    sink = MemorySink()
    executor = ToolExecutor(registry, events=sink, clock=fake_clock)
    args = {"phone": "13800138000", "secret_word": "hunter2!"}
    result = await executor.execute(
        {"name": "update_password", "arguments": args}, request_id="ses_x", allowed_tools=None
    )
    assert result.ok
    raw = repr(sink.events()[0].to_dict())
    assert "13800138000" not in raw and "hunter2!" not in raw


async def test_probe_reports_without_moving_the_breaker(setup: Any) -> None:
    executor, tool, _, _ = setup
    tool.healthy = False
    report = await executor.probe("get_order")
    assert report["healthy"] is False and report["breaker"]["state"] == "closed"
    with pytest.raises(KeyError):
        await executor.probe("nope")


def _answers_registry(scripted: Scripted, **over: Any) -> ToolRegistry:
    registry = ToolRegistry()
    registry.add(_spec(not_found=(404,), refusals=(409,), **over), scripted)
    return registry


async def test_declared_business_answers_are_answers_and_count_as_successes(
    fake_clock: FakeClock,
) -> None:
    tool = Scripted()
    executor = ToolExecutor(_answers_registry(tool), clock=fake_clock)
    refusal = {"error": "at most 120.0 can still be refunded", "code": "over_refundable",
               "refundable": 120.0, "detail": {"nested": "dropped"}}  # fmt: skip
    tool.answers = [BackendError("HTTP 500")] * 4 + [
        BackendError("HTTP 404", status_code=404, answer={"error": "order not found"}),
        BackendError("HTTP 409", status_code=409, answer=refusal),
        BackendError("HTTP 409", status_code=409, answer={"error": {"code": "c", "message": "m"}}),
        BackendError("HTTP 409", status_code=409, answer="not json"),
    ]
    for _ in range(4):
        assert not (await _call(executor)).answered
    assert (await executor.store.get("get_order")).failures == 4
    missing = await _call(executor)
    assert missing.status is ToolStatus.NOT_FOUND and missing.answered and not missing.ok
    assert missing.result is None and missing.error == "no such record"
    # The backend answered: the four failures before it are forgiven, as after any success.
    assert (await executor.store.get("get_order")).failures == 0
    refused = await _call(executor)
    assert refused.status is ToolStatus.REFUSED and refused.answered
    assert refused.result == {"code": "over_refundable", "refundable": 120.0,
                              "message": "at most 120.0 can still be refunded"}  # fmt: skip
    assert refused.error == "refused: over_refundable"
    nested = await _call(executor)
    assert nested.result == {"code": "c", "message": "m"}
    bare = await _call(executor)
    assert bare.result == {"code": "refused", "message": None}
    assert (await executor.store.get("get_order")).failures == 0


async def test_client_side_mistakes_never_count_against_the_breaker(fake_clock: FakeClock) -> None:
    from hermes_desk.errors import ValidationError

    tool = Scripted()
    executor = ToolExecutor(_answers_registry(tool), clock=fake_clock)
    tool.answers = [BackendError("HTTP 500")] * 2
    for _ in range(2):
        await _call(executor)
    tool.answers = [BackendError("HTTP 400", status_code=400)] * 6 + [
        ValidationError("path parameter order_id missing")
    ]
    for _ in range(6):
        wrong = await _call(executor)
        assert wrong.status is ToolStatus.ERROR and not wrong.answered
    unusable = await _call(executor)
    assert unusable.status is ToolStatus.INVALID_ARGS
    for _ in range(5):  # refused before the binding: the breaker is not even asked
        assert (await _call(executor, {"name": "get_order", "arguments": {}})).status == (
            ToolStatus.INVALID_ARGS
        )
    record = await executor.store.get("get_order")
    assert record.state.value == "closed" and record.failures == 2  # neither reset nor grown


OWNED = {
    "response_format": {
        "type": "object",
        "required": ["status"],
        "properties": {"status": {"type": "string"}, "user_id": {"type": ["string", "null"]}},
    },
    "owner_field": "user_id",
}


async def test_ownership_hides_another_customers_record(fake_clock: FakeClock) -> None:
    tool = Scripted()
    sink = MemorySink()
    executor = ToolExecutor(_answers_registry(tool, **OWNED), events=sink, clock=fake_clock)
    mine = CallContext("ses_o", customer="u1")
    tool.answers = [
        {"status": "shipped", "user_id": "u1"},
        {"status": "shipped", "user_id": "u2", "address": "某某路 1 号"},
        {"status": "shipped"},
        {"status": "shipped", "user_id": None},
    ]
    ok = await _call(executor, request_id="ses_o", context=mine)
    assert ok.ok and ok.result["user_id"] == "u1"
    for _ in range(3):  # another customer's, no owner, a null owner
        hidden = await _call(executor, request_id="ses_o", context=mine)
        assert hidden.status is ToolStatus.NOT_FOUND and hidden.result is None
        assert hidden.error == "no such record", "the same as a record that is not there"
    mismatches = sink.events(name="tool.ownership_mismatch")
    assert [(e.request_id, e.data) for e in mismatches] == [("ses_o", {"tool": "get_order"})] * 3
    assert "某某路" not in repr([e.to_dict() for e in sink.events()])
    assert (await executor.store.get("get_order")).failures == 0

    calls = len(tool.calls)
    nobody = await _call(executor, request_id="ses_o", context=CallContext("ses_o"))
    assert nobody.status is ToolStatus.NOT_ALLOWED and nobody.error == "no customer named"
    assert len(tool.calls) == calls  # refused before any call
    assert (await _call(executor, request_id="ses_o")).status is ToolStatus.NOT_ALLOWED


def test_the_spec_map_follows_the_registry_and_cannot_be_changed_from_outside() -> None:
    registry = ToolRegistry()
    registry.add(_spec(), Scripted())
    first = registry.spec_map()
    assert list(first) == ["get_order"] and registry.spec_map() is first
    registry.add(_spec("get_shipment"), Scripted())
    assert sorted(registry.spec_map()) == ["get_order", "get_shipment"]
    with pytest.raises(TypeError):
        registry.spec_map()["x"] = first["get_order"]  # type: ignore[index]
