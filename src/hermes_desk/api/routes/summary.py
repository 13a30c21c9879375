"""Summaries: the after-contact summary and disposition the agent confirms, and the transfer
summary that hands a live conversation to another agent.

``GET /v1/sessions/{id}/summary?user_id=…[&kind=transfer]`` answers the summary: for a live
session written now, for a closed one the summary stored when it ended (or the agent's confirmed
one). ``PUT`` confirms it with the agent's text and a disposition from the pack's list. Another
tenant's or customer's session is "not found" (404); an unknown disposition or an empty text is
a 422 that changes nothing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from hermes_desk.api.deps import RuntimeDep, SessionUserDep, TenantDep
from hermes_desk.api.errors import error_responses
from hermes_desk.api.schemas import TEXT_PATTERN, USER_ID_PATTERN
from hermes_desk.assist import check_text
from hermes_desk.summary import MAX_SUMMARY_CHARS

__all__ = ["DispositionOut", "SummaryConfirm", "SummaryOut", "router"]

router = APIRouter(tags=["summaries"])

Kind = Literal["after_contact", "transfer"]


class DispositionOut(BaseModel):
    proposed: str = Field(description="the disposition the service proposes")
    chosen: str = Field(description="the one chosen: the proposed one until the agent confirms")
    choices: list[str] = Field(description="the pack's dispositions, in order")
    labels: dict[str, str] = Field(description="disposition → label in the summary's language")


class SummaryOut(BaseModel):
    """A session's summary and disposition."""

    session_id: str
    kind: Kind
    language: str = Field(description="the conversation's language (zh / en)")
    text: str = Field(description="the summary; personal numbers masked")
    source: str = Field(description="offline | model:<link> | agent (edited by the agent)")
    disposition: DispositionOut
    confirmed: bool
    confirmed_by: str | None
    confirmed_at: float | None
    facts: dict[str, Any] = Field(description="what the summary was written from (masked)")


class SummaryConfirm(BaseModel):
    """The agent's summary (edited or as proposed) and disposition."""

    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(pattern=USER_ID_PATTERN, description="the session's customer")
    agent_id: str = Field(pattern=USER_ID_PATTERN, description="the agent confirming")
    text: str = Field(
        min_length=1,
        max_length=MAX_SUMMARY_CHARS,
        description="the summary as the agent confirms it: not blank, no control characters",
        json_schema_extra={"pattern": TEXT_PATTERN},
    )
    disposition: str = Field(
        min_length=1, max_length=40, description="one of the pack's dispositions (see choices)"
    )
    kind: Kind = "after_contact"


@router.get(
    "/v1/sessions/{session_id}/summary",
    response_model=SummaryOut,
    responses=error_responses(404),
)
async def get_summary(
    session_id: str,
    user_id: SessionUserDep,
    runtime: RuntimeDep,
    tenant: TenantDep,
    kind: Annotated[Kind, Query(description="after_contact (default) or transfer")] = (
        "after_contact"
    ),
) -> dict[str, Any]:
    """The session's summary with the proposed disposition (written now for a live session)."""
    summary = await runtime.summaries.get(tenant, user_id, session_id, kind)
    return summary.to_dict()


@router.put(
    "/v1/sessions/{session_id}/summary",
    response_model=SummaryOut,
    responses=error_responses(404),
)
async def confirm_summary(
    session_id: str, body: SummaryConfirm, runtime: RuntimeDep, tenant: TenantDep
) -> dict[str, Any]:
    """Confirm the summary (the agent's text) and the disposition; kept with the archive."""
    text = check_text(body.text, MAX_SUMMARY_CHARS)
    summary = await runtime.summaries.confirm(
        tenant,
        body.user_id,
        session_id,
        agent_id=body.agent_id,
        text=text,
        disposition=body.disposition,
        kind=body.kind,
    )
    return summary.to_dict()
