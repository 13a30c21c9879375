"""Request bodies of the HTTP API. Responses are plain JSON documented in docs/api.md."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AGENT_ID_PATTERN",
    "USER_ID_PATTERN",
    "ApproveProposal",
    "RejectProposal",
    "SessionCreate",
    "TurnCreate",
]

USER_ID_PATTERN = r"^[A-Za-z0-9_.:@-]{1,128}$"
AGENT_ID_PATTERN = USER_ID_PATTERN


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SessionCreate(_Body):
    user_id: str = Field(pattern=USER_ID_PATTERN, description="the customer")
    resume: bool = Field(True, description="return the user's open session if there is one")


class TurnCreate(_Body):
    user_id: str = Field(pattern=USER_ID_PATTERN)
    text: str = Field(description="what was said (a final transcript segment or chat text)")
    speaker: Literal["customer", "agent"] = "customer"


class ApproveProposal(_Body):
    user_id: str = Field(pattern=USER_ID_PATTERN, description="the proposal's customer")
    agent_id: str = Field(pattern=AGENT_ID_PATTERN, description="who approves (recorded)")
    arguments: dict[str, Any] | None = Field(
        None,
        description="edited arguments, checked against the tool's schema (default: as proposed)",
    )


class RejectProposal(_Body):
    user_id: str = Field(pattern=USER_ID_PATTERN, description="the proposal's customer")
    agent_id: str = Field(pattern=AGENT_ID_PATTERN, description="who rejects (recorded)")
    reason: str = Field(min_length=1, max_length=500, description="why (recorded)")
