"""Labelled utterances (``{text, intent, slots?}`` JSONL) and scripted conversations.

``slots`` is either an object (``{"order_id": "123456789012"}``) or a list of spans, the
CAIS / SMP2019 / xSID style once converted to JSONL::

    "slots": [{"start": 3, "end": 5, "label": "date"}, {"slot": "city", "value": "上海"}]

A span names its slot with ``slot``, ``label``, ``type``, ``name`` or ``entity``; its value is
``value`` when given, else ``text[start:end]`` (character offsets, end exclusive). A slot named
twice keeps every value, as a list. Both forms load into the same ``{name: value}`` mapping.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_desk.errors import NotFoundError, ValidationError

__all__ = ["Conversation", "Example", "load_conversations", "load_examples"]


@dataclass(frozen=True, slots=True)
class Example:
    text: str
    intent: str
    slots: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    turns: tuple[Example, ...]


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    out: list[tuple[int, dict[str, Any]]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise NotFoundError(f"{path}: no such file", file=str(path)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(
            f"{path}: not a readable UTF-8 text file ({exc})", file=str(path)
        ) from exc
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"{path}:{n}: not JSON ({exc.msg})", file=str(path)) from exc
        if not isinstance(obj, dict):
            raise ValidationError(f"{path}:{n}: expected a JSON object", file=str(path))
        out.append((n, obj))
    return out


_SPAN_NAMES = ("slot", "label", "type", "name", "entity")


def _span_slots(where: str, text: str, spans: list[Any]) -> dict[str, Any]:
    """``{name: value}`` from a list of spans (see the module docstring)."""
    slots: dict[str, Any] = {}
    for i, span in enumerate(spans):
        at = f"{where}: slots[{i}]"
        if not isinstance(span, dict):
            raise ValidationError(f"{at} must be an object with a slot name", field="slots")
        name = next((span[k] for k in _SPAN_NAMES if isinstance(span.get(k), str)), None)
        if not name:
            raise ValidationError(
                f"{at} names no slot (give one of {', '.join(_SPAN_NAMES)})", field="slots"
            )
        value = span.get("value")
        if value is None:
            start, end = span.get("start"), span.get("end")
            if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end):
                raise ValidationError(
                    f"{at} needs a 'value' or integer offsets 0 <= start < end", field="slots"
                )
            if end > len(text):
                raise ValidationError(
                    f"{at} ends at {end}, past the text's {len(text)} characters", field="slots"
                )
            value = text[start:end]
        if name in slots:
            held = slots[name]
            slots[name] = [*held, value] if isinstance(held, list) else [held, value]
        else:
            slots[name] = value
    return slots


def _example(path: Path, n: int, obj: dict[str, Any]) -> Example:
    text, intent, slots = obj.get("text"), obj.get("intent"), obj.get("slots") or {}
    if "turns" in obj and text is None:
        raise ValidationError(
            f"{path}:{n}: this is a conversation, not a labelled utterance: expected "
            '{"text", "intent", "slots"?} (conversations go to nlu conversations)',
            field="text",
        )
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"{path}:{n}: 'text' must be a non-empty string", field="text")
    if not isinstance(intent, str) or not intent:
        raise ValidationError(f"{path}:{n}: 'intent' must be a non-empty string", field="intent")
    if isinstance(slots, list):
        slots = _span_slots(f"{path}:{n}", text, slots)
    if not isinstance(slots, dict):
        raise ValidationError(
            f"{path}:{n}: 'slots' must be an object or a list of spans", field="slots"
        )
    return Example(text, intent, slots)


def load_examples(path: str | Path) -> list[Example]:
    """Read a JSONL file of ``{"text", "intent", "slots"?}``; bad lines raise ValidationError."""
    p = Path(path)
    examples = [_example(p, n, obj) for n, obj in _lines(p)]
    if not examples:
        raise ValidationError(f"{p}: no labelled utterances in the file", file=str(p))
    return examples


def load_conversations(path: str | Path) -> list[Conversation]:
    """Read a JSONL file of ``{"id", "turns": [{"text", "intent"}, ...]}``."""
    p = Path(path)
    out: list[Conversation] = []
    for n, obj in _lines(p):
        turns = obj.get("turns")
        if turns is None and "intent" in obj:
            raise ValidationError(
                f"{p}:{n}: this is a labelled utterance, not a conversation: expected "
                '{"id", "turns": [{"text", "intent"}, ...]} (utterances go to nlu evaluate)',
                field="turns",
            )
        if not isinstance(turns, list) or not turns:
            raise ValidationError(f"{p}:{n}: 'turns' must be a non-empty list", field="turns")
        parsed = tuple(_example(p, n, t) for t in turns if isinstance(t, dict))
        out.append(Conversation(str(obj.get("id", n)), parsed))
    return out
