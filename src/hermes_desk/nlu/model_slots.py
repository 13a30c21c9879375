"""The model slot channel: JSON from a model, validated against the intent's slot schema.

Deterministic, format-checked values (:class:`~hermes_desk.nlu.slots.SlotExtractor`) win: a
model value for a slot the extractors already filled is dropped (and reported) unless equal.
Unknown slots, values that fail their schema and non-JSON output are rejected with a reason;
nothing unvalidated passes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RejectedSlot", "merge_model_slots", "slot_properties"]


@dataclass(frozen=True, slots=True)
class RejectedSlot:
    name: str
    value: Any
    reason: str


def slot_properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Slot name → value schema, from either ``intents.yaml``'s ``slots`` mapping or a JSON
    Schema object with ``properties``."""
    if schema.get("type") == "object" and isinstance(schema.get("properties"), Mapping):
        return dict(schema["properties"])
    return dict(schema)


def _parse(model_json: str | Mapping[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    if model_json is None:
        return {}, None
    if isinstance(model_json, Mapping):
        return dict(model_json), None
    text = model_json.strip()
    if text.startswith("```"):
        # Models often fence JSON in markdown; the fence is not part of the value.
        text = text.strip("`")
        text = text[4:] if text.lower().startswith("json") else text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, f"model output is not JSON: {exc.msg}"
    if not isinstance(data, dict):
        return {}, "model output is not a JSON object"
    return data, None


def merge_model_slots(
    deterministic: Mapping[str, Any],
    model_json: str | Mapping[str, Any] | None,
    schema: Mapping[str, Any],
) -> tuple[dict[str, Any], list[RejectedSlot]]:
    """Merge model-proposed slots into the deterministic ones.

    Args:
        deterministic: values from the extractors (always kept).
        model_json: the model's JSON object (text or already parsed), or None.
        schema: the intent's slot schemas (``intents.yaml`` ``slots``).

    Returns:
        The merged slots and the model values that were refused, each with a reason.
    """
    from hermes_desk.validation import SchemaValidator

    merged = dict(deterministic)
    rejected: list[RejectedSlot] = []
    data, error = _parse(model_json)
    if error is not None:
        return merged, [RejectedSlot("*", model_json, error)]
    props = slot_properties(schema)
    for name, value in data.items():
        if value is None:
            continue
        if name not in props:
            rejected.append(RejectedSlot(name, value, "unknown slot"))
            continue
        failed = SchemaValidator(props[name]).failed_keyword(value)
        if failed is not None:
            # The constraint, never the value: reasons end up in events and logs.
            rejected.append(RejectedSlot(name, value, f"fails {failed}"))
            continue
        if name in merged:
            if merged[name] != value:
                rejected.append(RejectedSlot(name, value, "a format-checked value wins"))
            continue
        merged[name] = value
    return merged, rejected
