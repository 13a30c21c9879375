"""Strict tool-call parsing: a model's output is a tool call only in an exact shape.

Accepted: ``{"name": str, "arguments": {...}}`` (exactly those keys, optionally ``id``), the
same as JSON text with nothing around it, the OpenAI native form
``{"type": "function", "id": ..., "function": {"name": ..., "arguments": "<JSON object>"}}``,
the Anthropic native form ``{"type": "tool_use", "id": ..., "name": ..., "input": {...}}``, or
a :class:`ToolCall`. Anything else — prose around the JSON, code fences, arguments that are not
an object, extra keys — is a :class:`ParseFailure`; the executor then answers with the tool's
fallback and a ``tool_parse_error`` event. Nothing is "repaired".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ParseFailure", "ToolCall", "parse_tool_call"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ParseFailure:
    """Why the input is not a tool call; ``name`` is a best guess, only to pick a fallback."""

    reason: str
    name: str | None = None


_PLAIN_KEYS = {"name", "arguments"}


def parse_tool_call(raw: object) -> ToolCall | ParseFailure:
    if isinstance(raw, ToolCall):
        if not isinstance(raw.arguments, Mapping):
            return ParseFailure("arguments must be an object", raw.name)
        return raw
    if isinstance(raw, str | bytes):
        try:
            raw = json.loads(raw)
        except ValueError:
            return ParseFailure("not a JSON document")
    if not isinstance(raw, Mapping):
        return ParseFailure(f"a tool call is an object, not {type(raw).__name__}")
    guess = raw.get("name") if isinstance(raw.get("name"), str) else None
    kind = raw.get("type")
    if kind == "function" and "function" in raw:
        return _openai(raw)
    if kind == "tool_use":
        return _anthropic(raw)
    keys = set(raw)
    if keys - {"id"} != _PLAIN_KEYS:
        extra = sorted(keys - _PLAIN_KEYS - {"id"})
        missing = sorted(_PLAIN_KEYS - keys)
        what = f"missing {missing}" if missing else f"unexpected keys {extra}"
        return ParseFailure(f"expected exactly name and arguments: {what}", guess)
    return _checked(raw.get("name"), raw.get("arguments"), raw.get("id"))


def _checked(name: object, arguments: object, call_id: object) -> ToolCall | ParseFailure:
    guess = name if isinstance(name, str) else None
    if not isinstance(name, str) or not name:
        return ParseFailure("name must be a non-empty string")
    if not isinstance(arguments, Mapping):
        return ParseFailure("arguments must be an object", guess)
    if call_id is not None and not isinstance(call_id, str):
        return ParseFailure("id must be a string", guess)
    return ToolCall(name=name, arguments=dict(arguments), id=call_id)


def _openai(raw: Mapping[str, Any]) -> ToolCall | ParseFailure:
    if set(raw) - {"id", "type", "function", "index"}:
        return ParseFailure("unexpected keys in a function tool call")
    fn = raw["function"]
    if not isinstance(fn, Mapping) or set(fn) != {"name", "arguments"}:
        return ParseFailure("function must hold exactly name and arguments")
    args = fn["arguments"]
    guess = fn["name"] if isinstance(fn["name"], str) else None
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return ParseFailure("function arguments are not JSON", guess)
    return _checked(fn["name"], args, raw.get("id"))


def _anthropic(raw: Mapping[str, Any]) -> ToolCall | ParseFailure:
    if set(raw) - {"id", "type", "name", "input"}:
        return ParseFailure("unexpected keys in a tool_use block")
    return _checked(raw.get("name"), raw.get("input"), raw.get("id"))
