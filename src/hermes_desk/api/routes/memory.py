"""``/v1/users/{user_id}/…``: a customer's notes, memories (review, delete) and long-term tags.

The service is ``request.app.state.runtime.memory``; the tenant is ``request.state.tenant`` (set
by the security layer; ``default`` without one). Every call is scoped by (tenant, user): another
user's fact id answers 404, exactly like an unknown one.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from hermes_desk.api.errors import error_responses
from hermes_desk.api.schemas import NoteOut
from hermes_desk.memory import FactStatus, MemoryService

__all__ = ["router"]

router = APIRouter(prefix="/v1/users", tags=["memory"])

_DEFAULT_TENANT = "default"
_USER_PATTERN = r"^[A-Za-z0-9_.:@-]{1,200}$"
UserId = Annotated[str, Path(pattern=_USER_PATTERN, description="the customer's id")]


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


def _service(request: Request) -> MemoryService:
    service: MemoryService = request.app.state.runtime.memory
    return service


def _tenant(request: Request) -> str:
    tenant = getattr(request.state, "tenant", None)
    return tenant if isinstance(tenant, str) and tenant else _DEFAULT_TENANT


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
    user_id: UserId,
    request: Request,
    limit: Annotated[int | None, Query(ge=1, le=100)] = None,
) -> NotesOut:
    """Active facts above the confidence floor, highest first, with age and source."""
    notes = await _service(request).notes(_tenant(request), user_id, limit=limit)
    return NotesOut(user_id=user_id, notes=[NoteOut(**n.to_dict()) for n in notes])


@router.get("/{user_id}/memories", response_model=FactsOut)
async def list_memories(
    user_id: UserId,
    request: Request,
    status: Annotated[list[FactStatus] | None, Query(description="filter; repeatable")] = None,
) -> FactsOut:
    """Every fact of the user (all statuses unless filtered), with history."""
    service = _service(request)
    facts = await service.facts(_tenant(request), user_id, status)
    return FactsOut(user_id=user_id, facts=[_fact_out(service, f.to_dict()) for f in facts])


@router.post(
    "/{user_id}/memories/{fact_id}/review", response_model=FactOut, responses=error_responses(404)
)
async def review_memory(
    user_id: UserId, fact_id: Annotated[str, Path(max_length=200)], body: Review, request: Request
) -> FactOut:
    """Approve (pending/conflict → active), reject, or edit (set the value; becomes active)."""
    service = _service(request)
    tenant = _tenant(request)
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
    user_id: UserId, fact_id: Annotated[str, Path(max_length=200)], request: Request
) -> Response:
    """Delete a fact and its history."""
    await _service(request).delete(_tenant(request), user_id, fact_id)
    return Response(status_code=204)


@router.get("/{user_id}/tags", response_model=TagsOut)
async def list_tags(user_id: UserId, request: Request) -> TagsOut:
    """Long-term preference tags: approved ones and candidates waiting for review."""
    tags = await _service(request).tags(_tenant(request), user_id)
    return TagsOut(user_id=user_id, tags=[TagOut(**_public(t.to_dict())) for t in tags])


@router.post("/{user_id}/tags/{tag}/approve", response_model=TagOut, responses=error_responses(404))
async def approve_tag(
    user_id: UserId, tag: Annotated[str, Path(max_length=200)], request: Request
) -> TagOut:
    """Write a candidate into long-term memory (the human review step)."""
    done = await _service(request).approve_tag(_tenant(request), user_id, tag)
    return TagOut(**_public(done.to_dict()))


@router.delete("/{user_id}/tags/{tag}", status_code=204, responses=error_responses(404))
async def delete_tag(
    user_id: UserId, tag: Annotated[str, Path(max_length=200)], request: Request
) -> Response:
    """Reject a candidate or remove an approved tag."""
    await _service(request).delete_tag(_tenant(request), user_id, tag)
    return Response(status_code=204)
