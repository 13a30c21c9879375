"""The tool executor: every call goes through the same guards and ends as a value.

Order of the guards (each one can end the call with its status and the tool's fallback reply):

1. **gating** — an intent that may call no tool (out of scope) refuses at once (``not_allowed``);
2. **strict parsing** — not exactly a tool call → ``parse_error`` (event ``tool_parse_error``);
3. unknown tool → ``unknown_tool``; a tool outside the intent's list → ``not_allowed``;
4. **argument validation** against ``parameters`` → ``invalid_args`` (nothing is sent);
5. **circuit breaker** — open → ``breaker_open`` at once; after the cool-down the health probe
   runs first, and a failing probe re-opens it (``breaker_open``);
6. the **binding**, under the tool's time limit → ``timeout`` or ``error``; an HTTP status the
   tool declares as a business answer is one: ``not_found`` (no such record) or ``refused`` (a
   business refusal, its reason in ``result``);
7. **result validation** against ``response_format`` → ``invalid_result`` (a failure);
8. **ownership** (X3): a tool that declares its record's owner field (``owner_field``) needs a
   customer in the :class:`CallContext` (none → ``not_allowed`` before any call); a record whose
   owner is another customer, or names none, reads as ``not_found`` with no data (event
   ``tool.ownership_mismatch``, naming only the tool);
9. one structured event (``tool.call``) and the metrics.

Breaker accounting (X5): a business answer (ok, ``not_found``, ``refused``, another customer's
record) is a success — the backend answered. Transport errors, timeouts, 5xx, a tool's own
exception and invalid results are failures. An undeclared 4xx (``error``) or arguments the
binding could not use (``invalid_args``) are the caller's mistake: they change nothing, unless
the answer was slow (a slow call is a timeout, whatever it says). Calls refused before the
binding (gating, parsing, argument validation, no customer) never reach the breaker.

Nothing raises for a tool that misbehaves: :meth:`ToolExecutor.execute` returns a
:class:`ToolResult`. Only cancellation propagates.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from hermes_desk.clock import Clock, SystemClock
from hermes_desk.config import ToolSettings
from hermes_desk.errors import BackendTimeoutError, FailureError, HermesError, MisuseError
from hermes_desk.events import Event, EventSink, MemorySink, mask_fields, mask_value
from hermes_desk.ids import digest
from hermes_desk.tools.binding import CallContext
from hermes_desk.tools.breaker import (
    BreakerOutcome,
    BreakerPolicy,
    BreakerRecord,
    BreakerState,
    Decision,
)
from hermes_desk.tools.breaker_store import BreakerStateStore, MemoryBreakerStore
from hermes_desk.tools.metrics import ToolMetrics
from hermes_desk.tools.parsing import ParseFailure, ToolCall, parse_tool_call
from hermes_desk.tools.registry import RegisteredTool, ToolRegistry
from hermes_desk.tools.spec import DEFAULT_FALLBACK

__all__ = ["ToolExecutor", "ToolResult", "ToolStatus"]

T = TypeVar("T")

_UNKNOWN = "<unknown>"
#: What a tool answers for a record that is not there — and for one of another customer, which
#: must read the same on every surface (SPEC §8 X3); only the ``tool.ownership_mismatch`` event
#: tells them apart, for the audit.
_NO_SUCH_RECORD = "no such record"


class ToolStatus(enum.StrEnum):
    OK = "ok"
    TIMEOUT = "timeout"
    ERROR = "error"
    INVALID_ARGS = "invalid_args"
    INVALID_RESULT = "invalid_result"
    BREAKER_OPEN = "breaker_open"
    NOT_ALLOWED = "not_allowed"
    PARSE_ERROR = "parse_error"
    UNKNOWN_TOOL = "unknown_tool"
    NOT_FOUND = "not_found"
    REFUSED = "refused"


#: Statuses where the tool answered (the business said yes, "no such record", or no).
_ANSWERED = frozenset({ToolStatus.OK, ToolStatus.NOT_FOUND, ToolStatus.REFUSED})


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a call came to.

    ``result`` is the tool's answer when ``ok``, the refusal (``{"code", "message", …}``) when
    ``refused``, else ``None``. :attr:`answered` tells a business answer (ok, ``not_found``,
    ``refused``) from a failure; ``fallback`` (set whenever ``status`` is not ok) is the reply
    to use when the tool did not answer.
    """

    status: ToolStatus
    tool: str | None
    result: Any = None
    fallback: str | None = None
    latency_ms: float = 0.0
    error: str | None = None
    call_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is ToolStatus.OK

    @property
    def answered(self) -> bool:
        """The tool answered: ok, or a declared business answer (not found, refused)."""
        return self.status in _ANSWERED

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "tool": self.tool,
            "result": self.result,
            "fallback": self.fallback,
            "latency_ms": round(self.latency_ms, 3),
            "error": self.error,
            "call_id": self.call_id,
        }


class ToolExecutor:
    """Runs tool calls through gating, parsing, validation, the breaker, events and metrics.

    Args:
        registry: the tools.
        settings: time limit default and breaker thresholds.
        store: breaker state (in-process by default; Redis to share it between workers).
        events: where the one event per call goes.
        metrics: Prometheus counters and histograms (a fresh registry by default).
        clock: breaker times and event times (``FakeClock`` in tests).
        timer: measures latency and slow calls (``time.perf_counter`` by default).
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        settings: ToolSettings | None = None,
        store: BreakerStateStore | None = None,
        events: EventSink | None = None,
        metrics: ToolMetrics | None = None,
        clock: Clock | None = None,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.registry = registry
        self.settings = settings or ToolSettings()
        self.policy = BreakerPolicy.from_settings(self.settings.breaker)
        self.store: BreakerStateStore = store if store is not None else MemoryBreakerStore()
        self.events: EventSink = events if events is not None else MemorySink()
        self.metrics = metrics if metrics is not None else ToolMetrics()
        self.clock: Clock = clock or SystemClock()
        self._timer = timer

    async def aclose(self) -> None:
        await self.store.aclose()

    # -- the call ---------------------------------------------------------------------------

    async def execute(
        self,
        call: ToolCall | Mapping[str, Any] | str | bytes | object,
        *,
        request_id: str,
        allowed_tools: Collection[str] | None,
        context: CallContext | None = None,
    ) -> ToolResult:
        """Run one call. ``allowed_tools`` is the intent's list (``None``: ungated, for admin
        paths such as the CLI); an empty collection means the turn may call no tool."""
        started = self._timer()
        call_ctx = context or CallContext(request_id=request_id)
        run = _Run(self, started, request_id)

        if allowed_tools is not None and not allowed_tools:
            name = _guess_name(call)
            entry = self.registry.get(name) if name else None
            return run.finish(
                ToolStatus.NOT_ALLOWED, entry, error="this intent may call no tool", name=name
            )

        parsed = parse_tool_call(call)
        if isinstance(parsed, ParseFailure):
            entry = self.registry.get(parsed.name) if parsed.name else None
            return run.finish(ToolStatus.PARSE_ERROR, entry, error=parsed.reason)
        entry = self.registry.get(parsed.name)
        if entry is None:
            return run.finish(
                ToolStatus.UNKNOWN_TOOL,
                None,
                error="unknown tool",
                name=parsed.name,
                call_id=parsed.id,
            )
        run.arguments = parsed.arguments
        if allowed_tools is not None and parsed.name not in allowed_tools:
            return run.finish(
                ToolStatus.NOT_ALLOWED,
                entry,
                error="not allowed for this intent",
                call_id=parsed.id,
            )
        problems = entry.arguments.problems(parsed.arguments)
        if problems:
            return run.finish(
                ToolStatus.INVALID_ARGS, entry, error="; ".join(problems), call_id=parsed.id
            )
        if entry.spec.owner_field is not None and not call_ctx.customer:
            # A record that belongs to someone is shown only to a named customer (X3).
            return run.finish(
                ToolStatus.NOT_ALLOWED, entry, error="no customer named", call_id=parsed.id
            )

        decision = await self._breaker(
            entry, lambda r: self.policy.before_call(r, self.clock.now()), run
        )
        if decision is Decision.REJECT:
            return run.finish(
                ToolStatus.BREAKER_OPEN, entry, error="circuit breaker open", call_id=parsed.id
            )
        if decision is Decision.PROBE:
            healthy = await self._health(entry)
            run.probe = healthy
            await self._breaker(
                entry,
                lambda r: (self.policy.after_probe(r, healthy, self.clock.now()), None),
                run,
            )
            if not healthy:
                return run.finish(
                    ToolStatus.BREAKER_OPEN, entry, error="health probe failed", call_id=parsed.id
                )

        spec = entry.spec
        timeout_s = spec.effective_timeout_s(self.settings.default_timeout_s)
        call_started = self._timer()
        status, result, error = ToolStatus.OK, None, None
        client_side = False  # the request was wrong, the backend is fine: no breaker change
        try:
            async with asyncio.timeout(timeout_s):
                result = await entry.binding.call(
                    parsed.arguments, timeout_s=timeout_s, context=call_ctx
                )
        except (TimeoutError, BackendTimeoutError):
            status, error = ToolStatus.TIMEOUT, f"no answer within {timeout_s:g}s"
        except MisuseError as exc:  # arguments the binding could not use: nothing was sent
            status, error, client_side = ToolStatus.INVALID_ARGS, exc.message, True
        except HermesError as exc:
            status, error = ToolStatus.ERROR, exc.message
            code = exc.details.get("status_code")
            if isinstance(code, int) and code in spec.not_found:
                status, error = ToolStatus.NOT_FOUND, _NO_SUCH_RECORD
            elif isinstance(code, int) and code in spec.refusals:
                status, result = ToolStatus.REFUSED, _refusal(exc.details.get("answer"))
                error = f"refused: {result['code']}"
            else:
                client_side = isinstance(code, int) and 400 <= code < 500
        except Exception as exc:  # a tool's own bug is a failure of that tool, not ours
            status, error = ToolStatus.ERROR, f"{type(exc).__name__} raised"
        duration_s = self._timer() - call_started
        if status is ToolStatus.OK and entry.result is not None:
            problems = entry.result.problems(result)
            if problems:
                status, result, error = ToolStatus.INVALID_RESULT, None, "; ".join(problems)
        if status is ToolStatus.OK and spec.owner_field is not None:
            owner = result.get(spec.owner_field) if isinstance(result, Mapping) else None
            if owner is None or owner != call_ctx.customer:
                # Another customer's record reads as "no such record"; nothing of it leaks,
                # not even to the event (only that it happened, and on which tool).
                status, result, error = ToolStatus.NOT_FOUND, None, _NO_SUCH_RECORD
                self.events.emit(
                    Event(
                        "tool.ownership_mismatch",
                        request_id,
                        self.clock.now(),
                        {"tool": spec.name},
                    )
                )

        outcome = self.policy.classify(
            succeeded=status in _ANSWERED or client_side,
            timed_out=status is ToolStatus.TIMEOUT,
            duration_s=duration_s,
        )
        if not (client_side and outcome is BreakerOutcome.OK):
            await self._breaker(
                entry,
                lambda r: (self.policy.after_call(r, outcome, self.clock.now()), None),
                run,
            )
        return run.finish(status, entry, result=result, error=error, call_id=parsed.id)

    # -- breaker and health -----------------------------------------------------------------

    async def _breaker(
        self,
        entry: RegisteredTool,
        step: Callable[[BreakerRecord], tuple[BreakerRecord, T]],
        run: _Run,
    ) -> T | Decision:
        name = entry.spec.name

        def change(record: BreakerRecord) -> tuple[BreakerRecord, tuple[BreakerRecord, Any]]:
            new, out = step(record)
            return new, (record, (new, out))

        try:
            old, (new, out) = await self.store.update(name, change)
        except FailureError:
            # The shared store is down: fail open rather than refuse every call.
            run.breaker = "unavailable"
            return Decision.ALLOW
        run.breaker = new.state.value
        if new.state is not old.state:
            self.metrics.breaker_changed(name, new.state.value)
            self.events.emit(
                Event(
                    name="tool.breaker",
                    request_id=run.request_id,
                    at=self.clock.now(),
                    data={
                        "tool": name,
                        "from": old.state.value,
                        "to": new.state.value,
                        "reason": new.reason,
                    },
                )
            )
        return out  # type: ignore[no-any-return]

    async def _health(self, entry: RegisteredTool) -> bool:
        spec = entry.spec
        timeout_s = spec.health.timeout_s or spec.effective_timeout_s(
            self.settings.default_timeout_s
        )
        try:
            async with asyncio.timeout(timeout_s):
                return await entry.binding.health(timeout_s=timeout_s)
        except Exception:
            return False

    async def probe(self, name: str) -> dict[str, Any]:
        """Run a tool's health probe on demand (``GET /v1/tools/{name}/health``).

        It reports; it does not move the breaker (only the probe owed after a cool-down does).
        """
        entry = self.registry.get(name)
        if entry is None:
            raise KeyError(name)
        started = self._timer()
        healthy = await self._health(entry)
        return {
            "tool": name,
            "healthy": healthy,
            "latency_ms": round((self._timer() - started) * 1000, 3),
            "breaker": self._state_dict(await self.store.get(name)),
        }

    async def breaker_states(self) -> dict[str, dict[str, Any]]:
        """Every registered tool's breaker, closed ones included."""
        records = await self.store.all()
        return {
            name: self._state_dict(records.get(name, BreakerRecord()))
            for name in self.registry.names()
        }

    def _state_dict(self, record: BreakerRecord) -> dict[str, Any]:
        out = record.to_dict()
        out["retry_at"] = self.policy.retry_at(record)
        if record.state is BreakerState.OPEN and out["retry_at"] is not None:
            out["retry_in_s"] = max(0.0, out["retry_at"] - self.clock.now())
        return out


class _Run:
    """The bookkeeping of one call: builds the result, the event and the metrics."""

    __slots__ = ("arguments", "breaker", "executor", "probe", "request_id", "started")

    def __init__(self, executor: ToolExecutor, started: float, request_id: str) -> None:
        self.executor = executor
        self.started = started
        self.request_id = request_id
        self.arguments: Mapping[str, Any] | None = None
        self.breaker: str | None = None
        self.probe: bool | None = None

    def finish(
        self,
        status: ToolStatus,
        entry: RegisteredTool | None,
        *,
        result: Any = None,
        error: str | None = None,
        name: str | None = None,
        call_id: str | None = None,
    ) -> ToolResult:
        ex = self.executor
        tool = entry.spec.name if entry is not None else name
        fallback = None
        if status is not ToolStatus.OK:
            fallback = entry.spec.fallback if entry is not None else DEFAULT_FALLBACK
        latency_s = ex._timer() - self.started
        data: dict[str, Any] = {
            "tool": tool,
            "status": status.value,
            "latency_ms": round(latency_s * 1000, 3),
            "args_digest": digest(self.arguments) if self.arguments is not None else None,
        }
        if self.arguments is not None:
            data["arguments"] = _masked(self.arguments, entry)
        if error is not None:
            data["error"] = error
        if self.breaker is not None:
            data["breaker"] = self.breaker
        if self.probe is not None:
            data["probe_healthy"] = self.probe
        if call_id is not None:
            data["call_id"] = call_id
        event_name = "tool_parse_error" if status is ToolStatus.PARSE_ERROR else "tool.call"
        ex.events.emit(Event(event_name, self.request_id, ex.clock.now(), data))
        ex.metrics.observe(
            entry.spec.name if entry is not None else _UNKNOWN, status.value, latency_s
        )
        return ToolResult(
            status=status,
            tool=tool,
            result=result,
            fallback=fallback,
            latency_ms=latency_s * 1000,
            error=error,
            call_id=call_id,
        )


def _masked(arguments: Mapping[str, Any], entry: RegisteredTool | None) -> dict[str, Any]:
    out = mask_fields(arguments)
    if entry is not None:
        for key in entry.spec.sensitive:
            if key in out:
                out[key] = mask_value(out[key])
    return out


def _guess_name(call: object) -> str | None:
    if isinstance(call, ToolCall):
        return call.name
    if isinstance(call, Mapping):
        name = call.get("name")
        if name is None and isinstance(call.get("function"), Mapping):
            name = call["function"].get("name")
        return name if isinstance(name, str) else None
    return None


def _refusal(answer: Any) -> dict[str, Any]:
    """A business refusal as the result, so the reply can say why: the backend's ``code`` and
    ``message`` (from ``{"error": "…", "code": "…", …}`` or ``{"error": {"code", "message"}}``)
    and its other plain fields (``refundable: 120.0``…)."""
    out: dict[str, Any] = {"code": "refused", "message": None}
    if not isinstance(answer, Mapping):
        return out
    inner = answer.get("error")
    if isinstance(inner, Mapping):
        answer = {**answer, **inner}
    elif isinstance(inner, str):
        out["message"] = inner
    for key, value in answer.items():
        if key != "error" and isinstance(key, str) and _plain_value(value):
            out[key] = value
    if not isinstance(out.get("code"), str) or not out["code"]:
        out["code"] = "refused"
    return out


def _plain_value(value: Any) -> bool:
    if isinstance(value, list):
        return all(isinstance(v, str | int | float | bool) or v is None for v in value)
    return isinstance(value, str | int | float | bool) or value is None
