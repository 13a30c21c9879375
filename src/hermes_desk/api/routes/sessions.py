"""Sessions: open (or resume), look at, close."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response, status

from hermes_desk.api.deps import RuntimeDep, SessionUserDep, TenantDep
from hermes_desk.api.errors import error_responses
from hermes_desk.api.schemas import SessionClosed, SessionCreate, SessionOut
from hermes_desk.runtime import Runtime
from hermes_desk.sessions import Session

__all__ = ["router"]

router = APIRouter(prefix="/v1/sessions", tags=["sessions"])


async def _view(runtime: Runtime, session: Session, **extra: Any) -> dict[str, Any]:
    notes = await runtime.memory.notes(
        session.tenant,
        session.user,
        lang=session.customer_language,
        open_contacts=session.open_contacts,  # the customer's other open sessions' key facts
    )
    workflows = await runtime.workflows.for_session(session.id)
    earlier = await runtime.actions.earlier(session.id, tenant=session.tenant, user=session.user)
    return {
        "session_id": session.id,
        "user_id": session.user,
        "status": session.status,
        "created_at": session.created_at,
        "last_active": session.last_active,
        "idle_expires_at": session.idle_deadline(runtime.settings.sessions.idle_ttl_s),
        "turns": [t.to_dict() for t in session.turns],
        "slots": session.slots,
        "short_term": session.short_term,
        "notes": [n.to_dict() for n in notes],
        "workflows": [{"id": w.id, "name": w.name, "status": w.status} for w in workflows],
        "earlier": [p.view() for p in reversed(earlier)],
        "model_usage": runtime.usage.get(session.id).to_dict(),
        **extra,
    }


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=SessionOut,
    responses={
        201: {"description": "a new session"},
        200: {"model": SessionOut, "description": "the customer's open session, resumed"},
    },
)
async def open_session(
    body: SessionCreate, runtime: RuntimeDep, tenant: TenantDep, response: Response
) -> dict[str, Any]:
    """Open a session for a customer; their notes come back before they say anything."""
    if body.resume:
        session, resumed = await runtime.sessions.open_or_resume(tenant, body.user_id)
    else:
        session, resumed = await runtime.sessions.create(tenant, body.user_id), False
    if resumed:
        response.status_code = status.HTTP_200_OK
    return await _view(runtime, session, resumed=resumed)


@router.get("/{session_id}", response_model=SessionOut, responses=error_responses(404))
async def get_session(
    session_id: str, user_id: SessionUserDep, runtime: RuntimeDep, tenant: TenantDep
) -> dict[str, Any]:
    """The session with its transcript, slots, notes and workflows (renews it)."""
    session = await runtime.sessions.get(tenant, user_id, session_id)
    return await _view(runtime, session)


@router.delete("/{session_id}", response_model=SessionClosed, responses=error_responses(404))
async def close_session(
    session_id: str, user_id: SessionUserDep, runtime: RuntimeDep, tenant: TenantDep
) -> dict[str, Any]:
    """Close and archive the session; its short-term key facts move to the customer's memory.
    ``turns`` counts the customer's turns (not the agent's, nor tool calls and results)."""
    session = await runtime.sessions.close(tenant, user_id, session_id)
    notes = await runtime.memory.notes(tenant, user_id, lang=session.language)
    return {
        "session_id": session.id,
        "status": "closed",
        "turns": sum(1 for turn in session.turns if turn.role == "user"),
        "notes": [n.to_dict() for n in notes],
    }
