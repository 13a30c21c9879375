"""Helpers for the workflow tests: recording in-process tools and service builders."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from hermes_desk.config import WorkflowSettings
from hermes_desk.errors import BackendError
from hermes_desk.events import MemorySink
from hermes_desk.workflows import (
    CallableStepExecutor,
    WorkflowDefinition,
    WorkflowService,
)


class Tools:
    """In-process tools that record every execution, per idempotency key."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], str]] = []
        self.executed: dict[str, int] = {}
        self.behaviour: dict[str, Callable[[int], Any]] = {}

    def tool(self, name: str, output: dict[str, Any] | None = None) -> Callable[..., Any]:
        async def run(arguments: dict[str, Any], key: str) -> dict[str, Any]:
            self.calls.append((name, arguments, key))
            attempt = sum(1 for c in self.calls if c[0] == name)
            behave = self.behaviour.get(name)
            if behave is not None:
                result = behave(attempt)
                if isinstance(result, BaseException):
                    raise result
                if isinstance(result, float):
                    await anyio.sleep(result)
                elif isinstance(result, dict):
                    self.executed[key] = self.executed.get(key, 0) + 1
                    return result
            self.executed[key] = self.executed.get(key, 0) + 1
            return dict(output or {"ok": True, "tool": name})

        return run

    def fail(self, name: str, times: int, *, retryable: bool = True) -> None:
        def behave(attempt: int) -> Any:
            if attempt <= times:
                err = BackendError("boom")
                err.retryable = retryable
                return err
            return None

        self.behaviour[name] = behave

    def count(self, name: str) -> int:
        return sum(1 for c in self.calls if c[0] == name)


def build(
    definitions: dict[str, WorkflowDefinition] | WorkflowDefinition,
    tools: Tools,
    store: Any,
    settings: WorkflowSettings,
    *,
    clock: Any = None,
    events: MemorySink | None = None,
) -> WorkflowService:
    if isinstance(definitions, WorkflowDefinition):
        definitions = {definitions.name: definitions}
    names = {s.tool for d in definitions.values() for _, s in d.all_steps() if s.tool}
    executor = CallableStepExecutor({name: tools.tool(name) for name in names})
    return WorkflowService(
        definitions=definitions,
        executor=executor,
        store=store,
        settings=settings,
        clock=clock,
        events=events or MemorySink(),
        watchdog=False,
    )


def workflow(*phases: dict[str, Any], **extra: Any) -> WorkflowDefinition:
    return WorkflowDefinition.model_validate({"name": "wf", "phases": list(phases), **extra})
