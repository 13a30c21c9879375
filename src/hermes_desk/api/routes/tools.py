"""``/v1/tools``: the tool specs with their breaker states, and an on-demand health probe.

The executor is ``request.app.state.runtime.tools`` (a :class:`~hermes_desk.tools.ToolExecutor`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request

from hermes_desk.api.errors import error_responses
from hermes_desk.api.schemas import ToolHealthOut, ToolList
from hermes_desk.errors import NotFoundError
from hermes_desk.tools import ToolExecutor

__all__ = ["router"]

router = APIRouter(prefix="/v1/tools", tags=["tools"])


async def _executor(request: Request) -> ToolExecutor:
    executor: ToolExecutor = request.app.state.runtime.tools
    return executor


Executor = Annotated[ToolExecutor, Depends(_executor)]
ToolName = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


@router.get("", response_model=ToolList)
async def list_tools(executor: Executor) -> dict[str, Any]:
    """Every tool's spec and its circuit breaker (state, counts, when it may be retried)."""
    states = await executor.breaker_states()
    return {
        "tools": [
            {**spec.to_dict(), "breaker": states.get(spec.name)}
            for spec in executor.registry.specs()
        ]
    }


@router.get("/{name}/health", response_model=ToolHealthOut, responses=error_responses(404))
async def tool_health(name: ToolName, executor: Executor) -> dict[str, Any]:
    """Run the tool's health probe now; reports without moving the breaker."""
    if name not in executor.registry:
        raise NotFoundError(f"no tool named {name}", tool=name)
    return await executor.probe(name)
