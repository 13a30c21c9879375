"""The loaded pack's labels and dispositions: human-readable names for its ids, and the ways a
contact may end, for the console."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from hermes_desk.api.deps import RuntimeDep

__all__ = ["DispositionChoiceOut", "LabelOut", "PackDispositionsOut", "PackLabelsOut", "router"]

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


class DispositionChoiceOut(BaseModel):
    id: str
    label: dict[str, str] = Field(description="language (zh, en) → the name shown to the agent")


class PackDispositionsOut(BaseModel):
    pack: str
    default: str = Field(description="proposed when no outcome matches")
    dispositions: list[DispositionChoiceOut] = Field(description="the pack's list, in order")


@router.get("/v1/pack/dispositions", response_model=PackDispositionsOut)
async def pack_dispositions(runtime: RuntimeDep) -> dict[str, Any]:
    """How a contact may end (``dispositions.yaml``): what the agent picks from on close."""
    listed = runtime.pack.dispositions
    return {
        "pack": runtime.pack.name,
        "default": listed.default,
        "dispositions": [{"id": d.id, "label": dict(d.label)} for d in listed.dispositions],
    }
