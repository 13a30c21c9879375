"""``/v1/workflows``: look at a workflow; start one and feed it input (operations, kill test).

Every path names the customer (``user_id``): a workflow of
another tenant or customer looks like "not found", and a workflow can be attached only to a
session of that same customer. Approvals of write steps are not input: they go through the
proposal (``/v1/proposals/{id}/approve``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from hermes_desk.api.deps import RuntimeDep, TenantDep, UserQuery
from hermes_desk.api.errors import error_responses
from hermes_desk.api.schemas import USER_ID_PATTERN, ProposalOut
from hermes_desk.errors import NotFoundError
from hermes_desk.workflows import WorkflowView

__all__ = ["router"]

router = APIRouter(prefix="/v1/workflows", tags=["workflows"])


class StartWorkflow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$")
    inputs: dict[str, Any] = Field(default_factory=dict)
    session_id: str | None = Field(None, max_length=200)
    user_id: str = Field(pattern=USER_ID_PATTERN, description="the customer it is for")
    wait_s: float | None = Field(None, ge=0, le=25)


class ProvideInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(pattern=USER_ID_PATTERN, description="the workflow's customer")
    slots: dict[str, Any] = Field(
        min_length=1,
        description="the slot the workflow waits for; approvals go through the proposal",
        json_schema_extra={"propertyNames": {"not": {"pattern": "^approval:"}}},
    )
    wait_s: float | None = Field(None, ge=0, le=25)


@router.get("/{workflow_id}", response_model=WorkflowView, responses=error_responses(404))
async def get_workflow(
    workflow_id: str, user_id: UserQuery, runtime: RuntimeDep, tenant: TenantDep
) -> WorkflowView:
    """State, steps (status, attempts, timings), phases and snapshot history."""
    return await runtime.workflows.get(workflow_id, tenant=tenant, user=user_id)


@router.post("", response_model=WorkflowView, status_code=201, responses=error_responses(404, 409))
async def start_workflow(
    body: StartWorkflow, runtime: RuntimeDep, tenant: TenantDep
) -> WorkflowView:
    """Start a workflow; answers once it waits for input or ends (or ``wait_s`` passes)."""
    if body.session_id is not None:
        await runtime.sessions.get(tenant, body.user_id, body.session_id)  # 404 unless theirs
    return await runtime.workflows.start(
        body.name,
        body.inputs,
        tenant=tenant,
        user=body.user_id,
        session_id=body.session_id,
        wait_s=body.wait_s,
    )


@router.post(
    "/{workflow_id}/input", response_model=WorkflowView, responses=error_responses(404, 409)
)
async def provide_input(
    workflow_id: str, body: ProvideInput, runtime: RuntimeDep, tenant: TenantDep
) -> WorkflowView:
    """Give a waiting workflow the slot it waits for (e.g. ``{"sms_code": "123456"}``)."""
    return await runtime.workflows.provide_input(
        workflow_id, body.slots, tenant=tenant, user=body.user_id, wait_s=body.wait_s
    )


@router.get("/{workflow_id}/approval", response_model=ProposalOut, responses=error_responses(404))
async def pending_approval(
    workflow_id: str, user_id: UserQuery, runtime: RuntimeDep, tenant: TenantDep
) -> dict[str, Any]:
    """The proposal the workflow waits on (a write step waiting for the agent), 404 if none.

    Proposed once per wait, whichever request gets there first (a restart in between included).
    """
    view = await runtime.workflows.get(workflow_id, tenant=tenant, user=user_id)
    proposal = await runtime.actions.propose_for_workflow(
        view, language=runtime.pack.manifest.languages[0], why={"rule": "a workflow step writes"}
    )
    if proposal is None:
        raise NotFoundError(f"workflow {workflow_id} waits for no approval")
    return proposal.view()
