"""The loaded pack's labels: human-readable names for its ids, for the console."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from hermes_desk.api.deps import RuntimeDep

__all__ = ["LabelOut", "PackLabelsOut", "router"]

router = APIRouter(tags=["pack"])


class LabelOut(BaseModel):
    zh: str
    en: str


class PackLabelsOut(BaseModel):
    pack: str
    languages: list[str]
    labels: dict[str, dict[str, LabelOut]] = Field(
        description="section (intents, workflows, steps, tools, slots, statuses, terms) → id → "
        "names; an id without a label is shown as itself"
    )


@router.get("/v1/pack/labels", response_model=PackLabelsOut)
async def pack_labels(runtime: RuntimeDep) -> dict[str, Any]:
    """Names of the pack's intents, workflows, steps, tools, slots, statuses and terms."""
    return runtime.labels.to_dict()
