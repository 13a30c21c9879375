"""Workflow steps that call a write wait for an agent's approval (X2), whatever the pack says.

:func:`require_approvals` marks every such step ``approval: true`` when the service is built,
so no pack can forget it; a pack that puts a write in a parallel phase (where a step cannot
wait) fails to load, naming the workflow and the step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError as PydanticValidationError

from hermes_desk.actions.service import needs_approval
from hermes_desk.errors import PackError
from hermes_desk.tools import ToolRegistry
from hermes_desk.workflows import WorkflowDefinition

__all__ = ["require_approvals"]


def require_approvals(
    definitions: Mapping[str, WorkflowDefinition], registry: ToolRegistry, *, folder: str
) -> dict[str, WorkflowDefinition]:
    """The definitions with ``approval`` set on each step whose tool needs an agent's approval."""
    out: dict[str, WorkflowDefinition] = {}
    for name, definition in definitions.items():
        data = definition.model_dump()
        changed: list[str] = []
        for phases in [data["phases"], *data["branches"].values()]:
            for phase in phases:
                for step in phase["steps"]:
                    if _writes(step, registry) and not step.get("approval"):
                        step["approval"] = True
                        changed.append(step["name"])
        if not changed:
            out[name] = definition
            continue
        try:
            out[name] = WorkflowDefinition.model_validate(data)
        except PydanticValidationError as exc:
            raise PackError(
                f"workflow '{name}': steps {changed} call write tools, which wait for an agent's "
                f"approval: {exc.errors()[0]['msg']}",
                file=f"{folder}/{name}.yaml",
                item=name,
            ) from exc
    return out


def _writes(step: Mapping[str, Any], registry: ToolRegistry) -> bool:
    tool = step.get("tool")
    entry = registry.get(tool) if isinstance(tool, str) else None
    return entry is not None and needs_approval(entry.spec)
