"""``/v1/workflows``: look at a workflow; start one and feed it input (operations, kill test).

The service is ``request.app.state.runtime.workflows``; the tenant is ``request.state.tenant``
when the security layer set it (a workflow of another tenant looks like "not found").
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from hermes_desk.workflows import WorkflowService, WorkflowView

__all__ = ["router"]

router = APIRouter(prefix="/v1/workflows", tags=["workflows"])

_DEFAULT_TENANT = "default"


class StartWorkflow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$")
    inputs: dict[str, Any] = Field(default_factory=dict)
    session_id: str | None = Field(None, max_length=200)
    user: str = Field("operator", min_length=1, max_length=200)
    wait_s: float | None = Field(None, ge=0, le=25)


class ProvideInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    slots: dict[str, Any] = Field(min_length=1)
    wait_s: float | None = Field(None, ge=0, le=25)


def _service(request: Request) -> WorkflowService:
    service: WorkflowService = request.app.state.runtime.workflows
    return service


def _tenant(request: Request) -> str | None:
    tenant = getattr(request.state, "tenant", None)
    return tenant if isinstance(tenant, str) else None


@router.get("/{workflow_id}", response_model=WorkflowView)
async def get_workflow(workflow_id: str, request: Request) -> WorkflowView:
    """State, steps (status, attempts, timings), phases and snapshot history."""
    return await _service(request).get(workflow_id, tenant=_tenant(request))


@router.post("", response_model=WorkflowView, status_code=201)
async def start_workflow(body: StartWorkflow, request: Request) -> WorkflowView:
    """Start a workflow; answers once it waits for input or ends (or ``wait_s`` passes)."""
    return await _service(request).start(
        body.name,
        body.inputs,
        tenant=_tenant(request) or _DEFAULT_TENANT,
        user=body.user,
        session_id=body.session_id,
        wait_s=body.wait_s,
    )


@router.post("/{workflow_id}/input", response_model=WorkflowView)
async def provide_input(workflow_id: str, body: ProvideInput, request: Request) -> WorkflowView:
    """Give a waiting workflow the slot it waits for (e.g. ``{"sms_code": "123456"}``)."""
    return await _service(request).provide_input(
        workflow_id, body.slots, tenant=_tenant(request), wait_s=body.wait_s
    )
