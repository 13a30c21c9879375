"""Turns: one utterance in, the assist out (intent, slots, tool calls, suggestion, notes)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from hermes_desk.api.deps import RuntimeDep, TenantDep
from hermes_desk.api.schemas import TurnCreate

__all__ = ["router"]

router = APIRouter(prefix="/v1/sessions", tags=["turns"])


@router.post("/{session_id}/turns")
async def post_turn(
    session_id: str, body: TurnCreate, runtime: RuntimeDep, tenant: TenantDep
) -> dict[str, Any]:
    """Handle a customer (or agent) utterance in the session."""
    outcome = await runtime.assistant.turn(
        tenant, body.user_id, session_id, body.text, speaker=body.speaker
    )
    return outcome.to_dict()
