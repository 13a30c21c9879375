"""Labelled utterances (``{text, intent, slots?}`` JSONL) and scripted conversations."""

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


def _example(path: Path, n: int, obj: dict[str, Any]) -> Example:
    text, intent, slots = obj.get("text"), obj.get("intent"), obj.get("slots") or {}
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"{path}:{n}: 'text' must be a non-empty string", field="text")
    if not isinstance(intent, str) or not intent:
        raise ValidationError(f"{path}:{n}: 'intent' must be a non-empty string", field="intent")
    if not isinstance(slots, dict):
        raise ValidationError(f"{path}:{n}: 'slots' must be an object", field="slots")
    return Example(text, intent, slots)


def load_examples(path: str | Path) -> list[Example]:
    """Read a JSONL file of ``{"text", "intent", "slots"?}``; bad lines raise ValidationError."""
    p = Path(path)
    return [_example(p, n, obj) for n, obj in _lines(p)]


def load_conversations(path: str | Path) -> list[Conversation]:
    """Read a JSONL file of ``{"id", "turns": [{"text", "intent"}, ...]}``."""
    p = Path(path)
    out: list[Conversation] = []
    for n, obj in _lines(p):
        turns = obj.get("turns")
        if not isinstance(turns, list) or not turns:
            raise ValidationError(f"{p}:{n}: 'turns' must be a non-empty list", field="turns")
        parsed = tuple(_example(p, n, t) for t in turns if isinstance(t, dict))
        out.append(Conversation(str(obj.get("id", n)), parsed))
    return out
