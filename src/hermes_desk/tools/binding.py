"""Where a tool runs: the :class:`ToolBinding` boundary and the in-process Python binding.

A binding does the I/O and nothing else. It receives arguments that already passed their schema,
returns a JSON-like value, and raises from :mod:`hermes_desk.errors` when the far side fails
(``BackendError``, ``BackendTimeoutError``, ``BackendUnavailableError``). Validation, gating,
the circuit breaker, the time limit, events and metrics wrap it in the executor, so every
binding (Python, HTTP, MCP) gets them the same way.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import anyio.to_thread

__all__ = ["CallContext", "PythonBinding", "ToolBinding"]


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a binding may know about the call besides its arguments.

    Attributes:
        request_id: the session id (or workflow id) the call belongs to.
        idempotency_key: a key the far side can use to de-duplicate retries of a write; the
            workflow engine passes one per step. HTTP bindings send it with ``POST``/``PUT``.
        extra: anything else a binding may need; never logged raw.
        customer: the session's customer; records a tool returns are checked against it (X3).
        tenant: the customer's tenant.
    """

    request_id: str
    idempotency_key: str | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    customer: str | None = None
    tenant: str | None = None


@runtime_checkable
class ToolBinding(Protocol):
    """A live tool implementation."""

    async def call(
        self, arguments: Mapping[str, Any], *, timeout_s: float, context: CallContext
    ) -> Any:
        """Run the tool once; ``timeout_s`` is a transport hint, the executor enforces it."""
        ...

    async def health(self, *, timeout_s: float) -> bool:
        """Probe the backend. ``True`` when it can take calls; never raises for a sick backend."""
        ...


ToolFunction = Callable[..., Any]
HealthFunction = Callable[[], Awaitable[bool] | bool]


class PythonBinding:
    """Calls an in-process function with the arguments as keyword arguments.

    Coroutine functions are awaited; plain functions run in a worker thread so they cannot block
    the event loop. If the function accepts a ``context`` keyword, the :class:`CallContext` is
    passed in it.
    """

    def __init__(self, fn: ToolFunction, *, health: HealthFunction | None = None) -> None:
        self._fn = fn
        self._health = health
        self._is_async = inspect.iscoroutinefunction(fn)
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):  # builtins without a signature
            params = MappingProxyType({})
        self._wants_context = "context" in params

    @property
    def function(self) -> ToolFunction:
        return self._fn

    async def call(
        self, arguments: Mapping[str, Any], *, timeout_s: float, context: CallContext
    ) -> Any:
        kwargs = dict(arguments)
        if self._wants_context:
            kwargs["context"] = context
        if self._is_async:
            return await self._fn(**kwargs)
        return await anyio.to_thread.run_sync(lambda: self._fn(**kwargs))

    async def health(self, *, timeout_s: float) -> bool:
        if self._health is None:
            return True
        try:
            outcome = self._health()
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except Exception:
            return False
        return bool(outcome)
