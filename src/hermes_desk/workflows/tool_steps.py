"""Steps through the tools module: every step call gets the tools' validation, breaker, events.

:class:`ToolStepExecutor` adapts a :class:`~hermes_desk.tools.ToolExecutor` to the
:class:`~hermes_desk.workflows.executor.StepExecutor` boundary; the step's idempotency key travels
in the call context (HTTP tools send it as a body field and an ``Idempotency-Key`` header).
"""

from __future__ import annotations

from typing import Any

from hermes_desk.tools import CallContext, ToolExecutor, ToolStatus
from hermes_desk.workflows.executor import StepOutcome

__all__ = ["ToolStepExecutor", "found_nothing"]

_NOT_FOUND = f"{ToolStatus.NOT_FOUND}: "


def found_nothing(step_error: str | None) -> bool:
    """Did the step fail because its tool answered "no such record" (for this customer)? That
    is an answer, not a fault: the reply says "not found", not "try again later"."""
    return step_error is not None and step_error.startswith(_NOT_FOUND)


class ToolStepExecutor:
    def __init__(self, tools: ToolExecutor) -> None:
        self._tools = tools

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
        result = await self._tools.execute(
            {"name": tool, "arguments": arguments},
            request_id=request_id,
            allowed_tools=None,  # the workflow definition is the gate: it names its tools
            context=CallContext(
                request_id=request_id,
                idempotency_key=idempotency_key,
                customer=customer,  # records are checked against the workflow's customer
                tenant=tenant,
            ),
        )
        status = str(result.status.value)
        if result.ok:
            output = result.result if isinstance(result.result, dict) else {"result": result.result}
            return StepOutcome(True, output=output, status=status)
        error = result.error or status
        if isinstance(result.result, dict) and result.result.get("message"):
            error = f"{status}: {result.result['message']}"  # a business refusal says why
        elif result.status is ToolStatus.NOT_FOUND:
            error = f"{_NOT_FOUND}{error}"  # an answer, named as one (``found_nothing``)
        return StepOutcome(False, error=error, status=status)
