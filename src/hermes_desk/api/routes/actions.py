"""Proposals: the writes a turn (or a workflow step) proposed, and the agent's decision on each.

Every path checks the proposal against the caller's tenant and the customer named by
``user_id``: another tenant's or customer's proposal is "not found" (404). Approving or
rejecting one that is already decided (or expired) answers 409 with its status.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from hermes_desk.api.deps import RuntimeDep, SessionUserDep, TenantDep, UserQuery
from hermes_desk.api.errors import error_responses
from hermes_desk.api.schemas import (
    ApproveProposal,
    ProposalList,
    ProposalOut,
    RejectProposal,
)

__all__ = ["router"]

router = APIRouter(tags=["actions"])


@router.get(
    "/v1/sessions/{session_id}/proposals",
    response_model=ProposalList,
    responses=error_responses(404),
)
async def list_proposals(
    session_id: str, user_id: SessionUserDep, runtime: RuntimeDep, tenant: TenantDep
) -> dict[str, Any]:
    """The session's proposals, oldest first (arguments masked where sensitive)."""
    session = await runtime.sessions.get(tenant, user_id, session_id)
    proposals = await runtime.actions.for_session(session.id, tenant=tenant, user=user_id)
    return {"proposals": [p.view() for p in proposals]}


@router.get(
    "/v1/proposals/{proposal_id}", response_model=ProposalOut, responses=error_responses(404)
)
async def get_proposal(
    proposal_id: str, user_id: UserQuery, runtime: RuntimeDep, tenant: TenantDep
) -> dict[str, Any]:
    """One proposal and where it stands."""
    proposal = await runtime.actions.get(proposal_id, tenant=tenant, user=user_id)
    return proposal.view()


@router.post(
    "/v1/proposals/{proposal_id}/approve",
    response_model=ProposalOut,
    responses=error_responses(404, 409),
)
async def approve_proposal(
    proposal_id: str, body: ApproveProposal, runtime: RuntimeDep, tenant: TenantDep
) -> dict[str, Any]:
    """Approve (optionally with edited arguments, checked against the tool's schema) and run
    the write once; answers the proposal with its outcome (``executed`` or ``failed``). With
    ``revision``, refused (409) when the proposal changed since that revision was shown."""
    proposal = await runtime.actions.approve(
        proposal_id,
        tenant=tenant,
        user=body.user_id,
        agent_id=body.agent_id,
        arguments=body.arguments,
        revision=body.revision,
    )
    return proposal.view()


@router.post(
    "/v1/proposals/{proposal_id}/reject",
    response_model=ProposalOut,
    responses=error_responses(404, 409),
)
async def reject_proposal(
    proposal_id: str, body: RejectProposal, runtime: RuntimeDep, tenant: TenantDep
) -> dict[str, Any]:
    """Reject with a reason: nothing runs; a workflow waiting for it follows its failure path."""
    proposal = await runtime.actions.reject(
        proposal_id, tenant=tenant, user=body.user_id, agent_id=body.agent_id, reason=body.reason
    )
    return proposal.view()
