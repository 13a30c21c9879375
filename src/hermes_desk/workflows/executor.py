"""How a workflow step reaches a tool: the ``StepExecutor`` boundary and its in-process default.

The runner hands the executor a tool name, resolved arguments, an idempotency key (stable across
retries and restarts, for the backend to deduplicate on) and a timeout. The executor answers
with a :class:`StepOutcome` value; it should not raise. The service adapts the tools module's
executor to this interface; :class:`CallableStepExecutor` calls Python callables (tests, demos).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from hermes_desk.errors import FailureError, HermesError

__all__ = ["CallableStepExecutor", "LocalTool", "StepExecutor", "StepOutcome"]

_NOT_RETRYABLE = frozenset(
    {
        "invalid_args",
        "invalid_result",
        "not_allowed",
        "parse_error",
        "breaker_open",
        "unknown_tool",
        "not_found",
        "refused",
    }
)


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """The result of one tool call. ``status`` is ``ok`` or a tool status (``timeout``…)."""

    ok: bool
    output: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    status: str = "ok"
    retryable: bool | None = None

    @property
    def may_retry(self) -> bool:
        if self.retryable is not None:
            return self.retryable
        return self.status not in _NOT_RETRYABLE


class StepExecutor(Protocol):
    async def run_step(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        idempotency_key: str,
        timeout_s: float,
        request_id: str,
        customer: str | None = None,
        tenant: str | None = None,
    ) -> StepOutcome: ...


#: ``async def tool(arguments, idempotency_key) -> dict`` (a plain function works too).
LocalTool = Callable[[dict[str, Any], str], Awaitable[Mapping[str, Any]] | Mapping[str, Any]]


class CallableStepExecutor:
    """Runs steps as Python callables ``tool(arguments, idempotency_key)``.

    A :class:`~hermes_desk.errors.FailureError` becomes an error outcome carrying its
    ``retryable`` flag; any other exception a retryable error; no answer within ``timeout_s``
    a ``timeout``.
    """

    def __init__(self, tools: Mapping[str, LocalTool]) -> None:
        self._tools = dict(tools)

    async def run_step(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        idempotency_key: str,
        timeout_s: float,
        request_id: str,
        customer: str | None = None,
        tenant: str | None = None,
    ) -> StepOutcome:
        fn = self._tools.get(tool)
        if fn is None:
            return StepOutcome(False, error=f"unknown tool '{tool}'", status="unknown_tool")
        try:
            with anyio.fail_after(timeout_s):
                result = fn(arguments, idempotency_key)
                if inspect.isawaitable(result):
                    result = await result
        except TimeoutError:
            return StepOutcome(False, error=f"no answer within {timeout_s:g} s", status="timeout")
        except FailureError as exc:
            return StepOutcome(False, error=exc.message, status="error", retryable=exc.retryable)
        except HermesError as exc:
            return StepOutcome(False, error=exc.message, status="error", retryable=False)
        except Exception as exc:
            return StepOutcome(False, error=f"{type(exc).__name__}: {exc}", status="error")
        return StepOutcome(True, output=dict(result))
