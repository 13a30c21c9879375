"""Request bodies of the HTTP API. Responses are plain JSON documented in docs/api.md."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["USER_ID_PATTERN", "SessionCreate", "TurnCreate"]

USER_ID_PATTERN = r"^[A-Za-z0-9_.:@-]{1,128}$"


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SessionCreate(_Body):
    user_id: str = Field(pattern=USER_ID_PATTERN, description="the customer")
    resume: bool = Field(True, description="return the user's open session if there is one")


class TurnCreate(_Body):
    user_id: str = Field(pattern=USER_ID_PATTERN)
    text: str = Field(description="what was said (a final transcript segment or chat text)")
    speaker: Literal["customer", "agent"] = "customer"
