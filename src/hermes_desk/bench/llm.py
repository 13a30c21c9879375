"""LLM-layer benchmarks: what the layer adds to a turn around an instant model.

``run_llm_bench()`` measures, over ``turns`` turns after a warm-up:

- **prompt** — building the prompt (rules, facts, notes, 8 context turns, the intent's tool
  schemas filtered from the registry);
- **text turn** — :class:`ModelResponder` end to end when the model answers with text: prompt,
  chain (time limit, attempt records, event, usage ledger), reply;
- **tool turn** — the same when the model first makes a native tool call: chain, the executor's
  strict parsing, gating, argument validation, an in-process tool, result validation, the
  tool-result message, the second model round;
- **offline turn** — the chain falling through a failing link to the offline responder.

The model answers instantly from a precomputed response, so the figures are the layer's own
cost (target: text and tool turns p50 ≤ 2 ms).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from hermes_desk.errors import BackendUnavailableError
from hermes_desk.events import MemorySink
from hermes_desk.llm.chain import ModelChain
from hermes_desk.llm.messages import Message, ModelResponse, ResponderInput, ToolCallRequest
from hermes_desk.llm.offline import OfflineResponder
from hermes_desk.llm.responder import ModelResponder
from hermes_desk.llm.usage import UsageLedger
from hermes_desk.tools.binding import PythonBinding
from hermes_desk.tools.executor import ToolExecutor
from hermes_desk.tools.registry import ToolRegistry
from hermes_desk.tools.spec import BindingSpec, ToolSpec

__all__ = ["run_llm_bench"]

_REPLIES = {"order_status": {"ok": "订单 {order_id}：{get_order.status}，预计 {get_order.eta}"}}
_FACTS = ResponderInput(
    "order_status",
    slots={"order_id": "202405180001"},
    notes=("物流已延迟 7 天（2 天前）", "偏好电话联系"),
    tool_results={"get_order": {"status": "已发货", "eta": "2024-05-20"}},
)


@dataclass
class _Turn:
    role: str
    text: str


@dataclass
class _Session:
    id: str
    turns: list[_Turn] = field(default_factory=list)


class _InstantModel:
    """Answers at once from a fixed cycle of responses (or raises)."""

    def __init__(self, cycle: Sequence[ModelResponse | Exception], name: str = "bench") -> None:
        self._cycle = list(cycle)
        self._i = 0
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        context: ResponderInput | None = None,
    ) -> ModelResponse:
        step = self._cycle[self._i % len(self._cycle)]
        self._i += 1
        if isinstance(step, Exception):
            raise step
        return step


def _executor() -> ToolExecutor:
    registry = ToolRegistry()

    async def get_order(order_id: str) -> dict[str, Any]:
        return {"order_id": order_id, "status": "已发货", "eta": "2024-05-20"}

    names = ("get_order", "get_shipment", "create_return", "issue_refund", "create_ticket")
    for name in names:
        registry.add(
            ToolSpec(
                name=name,
                description=f"{name} 查询",
                parameters={
                    "type": "object",
                    "properties": {"order_id": {"type": "string", "pattern": "^[0-9]{12}$"}},
                    "required": ["order_id"],
                    "additionalProperties": False,
                },
                binding=BindingSpec(kind="python"),
                response_format={"type": "object", "required": ["status"]},
            ),
            PythonBinding(get_order),
        )
    return ToolExecutor(registry, events=MemorySink(maxlen=1000))


def _responder(model: _InstantModel, executor: ToolExecutor) -> ModelResponder:
    offline = OfflineResponder(_REPLIES)
    chain = ModelChain(
        [model, offline],
        retries=0,
        retry_backoff_s=0,
        events=MemorySink(maxlen=1000),
        usage=UsageLedger(),
    )
    return ModelResponder(
        chain, offline, executor=executor, allowed_tools=lambda i: ("get_order", "get_shipment")
    )


def _stats_ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 4),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 4),
        "p99_ms": round(ordered[int(0.99 * (len(ordered) - 1))], 4),
    }


async def _time(fn: Any, turns: int, warmup: int) -> dict[str, float]:
    for _ in range(warmup):
        await fn()
    samples: list[float] = []
    for _ in range(turns):
        started = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - started) * 1000)
    return _stats_ms(samples)


async def _run(turns: int, warmup: int) -> dict[str, Any]:
    session = _Session(
        "bench-session",
        [_Turn("user" if i % 2 == 0 else "agent", f"第 {i} 句：我的订单还没到") for i in range(8)],
    )
    executor = _executor()
    text = ModelResponse(content="您的订单已发货，预计 5 月 20 日送达。", finish_reason="stop")
    call = ModelResponse(
        content=None,
        tool_calls=(ToolCallRequest("call_1", "get_order", '{"order_id": "202405180001"}'),),
    )
    text_r = _responder(_InstantModel([text]), executor)
    tool_r = _responder(_InstantModel([call, text]), executor)
    down = _responder(_InstantModel([BackendUnavailableError("down")]), executor)

    async def prompt() -> None:
        text_r.prompt(_FACTS, session)

    async def text_turn() -> None:
        await text_r.suggest(_FACTS, session)

    async def tool_turn() -> None:
        result = await tool_r.run(tool_r.prompt(_FACTS, session), request_id=session.id)
        assert result.tool_results[0].ok

    async def offline_turn() -> None:
        _reply, link = await down.suggest(_FACTS, session)
        assert link == "offline"

    out: dict[str, Any] = {}
    for label, fn in (
        ("prompt", prompt),
        ("text_turn", text_turn),
        ("tool_turn", tool_turn),
        ("offline_turn", offline_turn),
    ):
        out[label] = await _time(fn, turns, warmup)
        print(f"llm bench: {label} {out[label]}")
    await executor.aclose()
    return out


def run_llm_bench(turns: int = 2000, warmup: int = 200) -> dict[str, Any]:
    """Figures in milliseconds; see the module docstring."""

    async def main() -> dict[str, Any]:
        figures = await _run(turns, warmup)
        figures["turns"] = turns
        return figures

    return anyio.run(main)
