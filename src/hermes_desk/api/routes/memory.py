"""``/v1/users/{user_id}/…``: a customer's notes, memories (review, delete) and long-term tags.

Every call is scoped by (tenant, user): another
user's fact id answers 404, exactly like an unknown one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from hermes_desk.api.deps import RuntimeDep, TenantDep, UserPath
from hermes_desk.api.errors import error_responses
from hermes_desk.api.schemas import NoteOut
from hermes_desk.memory import FactStatus, MemoryService

__all__ = ["router"]

router = APIRouter(prefix="/v1/users", tags=["memory"])


class NotesOut(BaseModel):
    user_id: str
    notes: list[NoteOut]


class HistoryOut(BaseModel):
    value: Any
    confidence: float
    at: float
    reason: str
    source_session: str | None


class FactOut(BaseModel):
    id: str
    key: str
    value: Any
    confidence: float
    current_confidence: float
    status: str
    origin: str
    valid_until: float
    created_at: float
    updated_at: float
    last_confirmed_at: float
    confirmations: int
    source_session: str | None
    conflicts_with: str | None
    history: list[HistoryOut]


class FactsOut(BaseModel):
    user_id: str
    facts: list[FactOut]


class TagOut(BaseModel):
    tag: str
    value: Any
    status: str
    source_fact_id: str | None
    created_at: float
    reviewed_at: float | None


class TagsOut(BaseModel):
    user_id: str
    tags: list[TagOut]


class _Decide(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["approve", "reject"]


class _Edit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["edit"]
    value: Any = Field(description="the new value (any JSON value, null included)")


Review = Annotated[_Decide | _Edit, Field(discriminator="action")]


def _fact_out(service: MemoryService, data: dict[str, Any]) -> FactOut:
    now = service.clock.now()
    current = service.policy.decayed(data["confidence"], data["last_confirmed_at"], now)
    if data["status"] != FactStatus.ACTIVE.value:
        current = 0.0
    return FactOut(current_confidence=round(current, 4), **_public(data))


def _public(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in ("tenant", "user_id")}


@router.get("/{user_id}/notes", response_model=NotesOut)
async def get_notes(
    user_id: UserPath,
    runtime: RuntimeDep,
    tenant: TenantDep,
    limit: Annotated[int | None, Query(ge=1, le=100)] = None,
) -> NotesOut:
    """Active facts above the confidence floor, highest first, with age and source."""
    notes = await runtime.memory.notes(tenant, user_id, limit=limit)
    return NotesOut(user_id=user_id, notes=[NoteOut(**n.to_dict()) for n in notes])


@router.get("/{user_id}/memories", response_model=FactsOut)
async def list_memories(
    user_id: UserPath,
    runtime: RuntimeDep,
    tenant: TenantDep,
    status: Annotated[list[FactStatus] | None, Query(description="filter; repeatable")] = None,
) -> FactsOut:
    """Every fact of the user (all statuses unless filtered), with history."""
    service = runtime.memory
    facts = await service.facts(tenant, user_id, status)
    return FactsOut(user_id=user_id, facts=[_fact_out(service, f.to_dict()) for f in facts])


@router.post(
    "/{user_id}/memories/{fact_id}/review", response_model=FactOut, responses=error_responses(404)
)
async def review_memory(
    user_id: UserPath,
    fact_id: Annotated[str, Path(max_length=200)],
    body: Review,
    runtime: RuntimeDep,
    tenant: TenantDep,
) -> FactOut:
    """Approve (pending/conflict → active), reject, or edit (set the value; becomes active)."""
    service = runtime.memory
    if isinstance(body, _Edit):
        outcome = await service.edit(tenant, user_id, fact_id, body.value)
    elif body.action == "approve":
        outcome = await service.approve(tenant, user_id, fact_id)
    else:
        outcome = await service.reject(tenant, user_id, fact_id)
    assert outcome.fact is not None
    return _fact_out(service, outcome.fact.to_dict())


@router.delete("/{user_id}/memories/{fact_id}", status_code=204, responses=error_responses(404))
async def delete_memory(
    user_id: UserPath,
    fact_id: Annotated[str, Path(max_length=200)],
    runtime: RuntimeDep,
    tenant: TenantDep,
) -> Response:
    """Delete a fact and its history."""
    await runtime.memory.delete(tenant, user_id, fact_id)
    return Response(status_code=204)


@router.get("/{user_id}/tags", response_model=TagsOut)
async def list_tags(user_id: UserPath, runtime: RuntimeDep, tenant: TenantDep) -> TagsOut:
    """Long-term preference tags: approved ones and candidates waiting for review."""
    tags = await runtime.memory.tags(tenant, user_id)
    return TagsOut(user_id=user_id, tags=[TagOut(**_public(t.to_dict())) for t in tags])


@router.post("/{user_id}/tags/{tag}/approve", response_model=TagOut, responses=error_responses(404))
async def approve_tag(
    user_id: UserPath,
    tag: Annotated[str, Path(max_length=200)],
    runtime: RuntimeDep,
    tenant: TenantDep,
) -> TagOut:
    """Write a candidate into long-term memory (the human review step)."""
    done = await runtime.memory.approve_tag(tenant, user_id, tag)
    return TagOut(**_public(done.to_dict()))


@router.delete("/{user_id}/tags/{tag}", status_code=204, responses=error_responses(404))
async def delete_tag(
    user_id: UserPath,
    tag: Annotated[str, Path(max_length=200)],
    runtime: RuntimeDep,
    tenant: TenantDep,
) -> Response:
    """Reject a candidate or remove an approved tag."""
    await runtime.memory.delete_tag(tenant, user_id, tag)
    return Response(status_code=204)
