"""An action service over one in-process write tool, for the action tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from hermes_desk.actions import ActionService, MemoryProposalStore
from hermes_desk.clock import Clock, SystemClock
from hermes_desk.config import ActionSettings
from hermes_desk.events import MemorySink
from hermes_desk.tools.binding import PythonBinding
from hermes_desk.tools.executor import ToolExecutor
from hermes_desk.tools.registry import ToolRegistry
from hermes_desk.tools.spec import BindingSpec, ToolSpec


def one_tool_service(
    name: str,
    write: Callable[..., Awaitable[dict[str, Any]]],
    *,
    properties: dict[str, Any],
    explain: dict[str, str],
    clock: Clock | None = None,
    **settings: Any,
) -> ActionService:
    """The service whose one tool, ``name``, is the write ``write`` with those ``properties``
    (all required), on the in-process proposal store."""
    spec = ToolSpec(
        name=name,
        description=name.replace("_", " "),
        parameters={"type": "object", "properties": properties, "required": list(properties)},
        binding=BindingSpec(kind="python"),
        effect="write",
        explain=explain,
    )
    registry = ToolRegistry()
    registry.add(spec, PythonBinding(write))
    return ActionService(
        store=MemoryProposalStore(),
        tools=ToolExecutor(registry, events=MemorySink(maxlen=100)),
        workflows=None,
        settings=ActionSettings(**settings),
        clock=clock or SystemClock(),
        events=MemorySink(maxlen=100),
    )
