"""The data of a domain pack, validated. The engine knows no business; a pack carries it."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "ComplianceRule",
    "ComplianceRules",
    "Example",
    "IntentSpec",
    "PackManifest",
]

_NAME = r"^[a-z][a-z0-9_]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PackManifest(_Strict):
    name: str = Field(pattern=_NAME)
    version: int = Field(1, ge=1)
    description: str = ""
    languages: list[str] = Field(default_factory=lambda: ["zh"])


class IntentSpec(_Strict):
    """One intent: its gate (tools it may call), slot schemas, workflow and reply key."""

    name: str = Field(pattern=_NAME)
    description: str = ""
    tools: tuple[str, ...] = ()
    calls: tuple[str, ...] = Field(
        (), description="tools the deterministic pipeline calls for this intent (subset of tools)"
    )
    slots: dict[str, dict[str, Any]] = Field(default_factory=dict)
    required_slots: tuple[str, ...] = ()
    workflow: str | None = None
    out_of_scope: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> IntentSpec:
        unknown = [s for s in self.required_slots if s not in self.slots]
        if unknown:
            raise ValueError(f"required_slots {unknown} are not declared under slots")
        outside = [t for t in self.calls if t not in self.tools]
        if outside:
            raise ValueError(f"calls {outside} are not listed under tools (the intent's gate)")
        if self.out_of_scope and (self.tools or self.workflow):
            raise ValueError("an out-of-scope intent may not list tools or a workflow")
        return self

    @property
    def slot_schema(self) -> dict[str, Any]:
        """The JSON Schema of this intent's slots, as sent to a model's JSON channel."""
        return {"type": "object", "properties": dict(self.slots), "additionalProperties": False}


class Example(_Strict):
    text: str = Field(min_length=1, max_length=2_000)
    intent: str
    slots: dict[str, Any] = Field(default_factory=dict)


class Dialogue(_Strict):
    """A labelled conversation (``dialogues*.jsonl``): each customer turn with its intent."""

    id: str = Field(min_length=1, max_length=200)
    turns: list[Example] = Field(min_length=1, max_length=100)


class ComplianceRule(_Strict):
    id: str = Field(pattern=_NAME)
    description: str = ""
    forbidden: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    action: Literal["block", "mask"] = "block"

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                message = f"pattern {pattern!r} is not a valid regular expression: {exc}"
                raise ValueError(message) from exc
        return patterns


class ComplianceRules(_Strict):
    rules: tuple[ComplianceRule, ...] = ()
    fallback_reply: str = Field(min_length=1)
