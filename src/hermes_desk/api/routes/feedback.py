"""Suggestion feedback: what the agent did with a suggested reply, and the tenant's report.

An event names the customer turn whose suggestion it is about (``turn_index`` of the turn
response). Another tenant's or customer's session, or a turn without a suggestion, is "not
found" (404); fields that do not fit the event are refused (422) and nothing is recorded.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from hermes_desk.api.deps import RuntimeDep, TenantDep
from hermes_desk.api.errors import error_responses, validation_body
from hermes_desk.api.schemas import AGENT_ID_PATTERN, TEXT_PATTERN, USER_ID_PATTERN
from hermes_desk.errors import ValidationError
from hermes_desk.feedback import MAX_REASON_CHARS

__all__ = [
    "EditFeedback",
    "FeedbackCreate",
    "FeedbackEventOut",
    "FeedbackOut",
    "RatingFeedback",
    "SuggestionCounts",
    "SuggestionReport",
    "UseFeedback",
    "router",
]

router = APIRouter(tags=["suggestions"])


class _FeedbackBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    user_id: str = Field(pattern=USER_ID_PATTERN, description="the session's customer")
    agent_id: str = Field(pattern=AGENT_ID_PATTERN, description="who did it (recorded)")
    text: str | None = Field(
        None,
        description="the agent's version of the reply, at most service.max_text_chars "
        "characters; when it differs from the suggestion an edited event is recorded too",
        json_schema_extra={"minLength": 1, "pattern": TEXT_PATTERN},
    )


class UseFeedback(_FeedbackBody):
    """The agent inserted the suggestion into the reply box or copied it."""

    event: Literal["inserted", "copied"]


class EditFeedback(_FeedbackBody):
    """The agent edited the suggestion in place: the edited text (not the suggestion as is)."""

    event: Literal["edited"]
    text: str = Field(
        description="the edited reply, at most service.max_text_chars characters",
        json_schema_extra={"minLength": 1, "pattern": TEXT_PATTERN},
    )


class RatingFeedback(_FeedbackBody):
    """The agent rated the suggestion, optionally saying why."""

    event: Literal["rated"]
    useful: bool = Field(description="useful (true) or not (false)")
    reason: str | None = Field(
        None,
        max_length=MAX_REASON_CHARS,
        description="why",
        json_schema_extra={"minLength": 1, "pattern": TEXT_PATTERN},
    )


FeedbackCreate = Annotated[
    UseFeedback | EditFeedback | RatingFeedback, Field(discriminator="event")
]


class FeedbackEventOut(BaseModel):
    tenant: str
    session_id: str
    turn_index: int
    event: str
    intent: str
    at: float
    suggestion: str = Field(description="the reply as the console showed it")
    agent_id: str | None
    useful: bool | None
    reason: str | None
    text: str | None = Field(description="the agent's edited text, when it sent one")
    first: bool = Field(False, description="the suggestion's first event of this kind")


class FeedbackOut(BaseModel):
    session_id: str
    turn_index: int
    intent: str
    recorded: list[FeedbackEventOut]


class FeedbackList(BaseModel):
    events: list[FeedbackEventOut]


class RatedCounts(BaseModel):
    total: int
    useful: int
    not_useful: int


class SuggestionCounts(BaseModel):
    shown: int = Field(description="suggestions shown (one per customer turn)")
    inserted: int = Field(description="suggestions inserted into the reply box")
    copied: int
    edited: int = Field(description="suggestions the agent changed before using or rating")
    rated: RatedCounts


class SuggestionReport(SuggestionCounts):
    tenant: str
    by_intent: dict[str, SuggestionCounts]


TurnIndex = Annotated[int, Path(ge=0, le=1_000_000, description="the customer turn's index")]


@router.post(
    "/v1/sessions/{session_id}/suggestions/{turn_index}/feedback",
    response_model=FeedbackOut,
    responses=error_responses(404),
)
async def post_feedback(
    session_id: str,
    turn_index: TurnIndex,
    body: FeedbackCreate,
    runtime: RuntimeDep,
    tenant: TenantDep,
) -> Any:
    """Record what the agent did with the suggestion of a customer turn. The latest event of
    each kind per suggestion wins (a changed rating replaces the earlier one)."""
    try:
        return await runtime.feedback.record(
            tenant,
            body.user_id,
            session_id,
            turn_index,
            event=body.event,
            agent_id=body.agent_id,
            useful=body.useful if isinstance(body, RatingFeedback) else None,
            reason=body.reason if isinstance(body, RatingFeedback) else None,
            text=body.text,
        )
    except ValidationError as exc:
        # Fields that do not fit the event: the same 422 body as a malformed one, per field.
        problems = exc.details.get("problems") or [{"field": "body", "message": exc.message}]
        return JSONResponse(validation_body(problems, message=exc.message), status_code=422)


@router.get(
    "/v1/sessions/{session_id}/suggestions/feedback",
    response_model=FeedbackList,
    responses=error_responses(404),
)
async def list_feedback(
    session_id: str,
    user_id: Annotated[str, Query(pattern=USER_ID_PATTERN, description="the session's customer")],
    runtime: RuntimeDep,
    tenant: TenantDep,
) -> dict[str, Any]:
    """The session's suggestion events (shown, inserted, copied, edited, rated), by turn."""
    return {"events": await runtime.feedback.for_session(tenant, user_id, session_id)}


@router.get("/v1/metrics/suggestions", response_model=SuggestionReport)
async def suggestion_metrics(runtime: RuntimeDep, tenant: TenantDep) -> dict[str, Any]:
    """The caller's tenant: suggestions shown, inserted, copied, edited and rated (useful / not
    useful), in total and by intent."""
    return await runtime.feedback.report(tenant)
