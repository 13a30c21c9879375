"""What the edges can store (spec D2): JSON no deeper than a limit, text without lone surrogates.

``json.loads`` accepts ``"\\ud800"`` (a lone surrogate) and recurses until Python's stack limit
on deep nesting; neither can be stored (UTF-8 has no encoding for a lone surrogate, and a
1,000-level document breaks every later reader). Both REST and the WebSocket parse through
:func:`parse_json`, so both refuse the same inputs with the same problems.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import orjson

__all__ = [
    "MAX_DEPTH",
    "PayloadError",
    "check_json",
    "check_storable",
    "json_depth",
    "parse_json",
]

#: deepest nesting of objects and arrays accepted in a request (workflow inputs included)
MAX_DEPTH = 32


class PayloadError(ValueError):
    """The payload cannot be stored; ``problems`` name where (``loc``) and why (``msg``)."""

    def __init__(self, code: str, message: str, problems: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.problems = problems


def json_depth(raw: bytes | str) -> int:
    """Deepest ``{``/``[`` nesting of a JSON text, counted without parsing (brackets in strings
    are skipped), so over-deep input is refused before the recursive parser sees it."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _strings(
    value: Any, path: tuple[str | int, ...]
) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield path, str(key)
            yield from _strings(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_storable(
    value: Any, *, max_depth: int = MAX_DEPTH, loc: tuple[str, ...] = ("body",)
) -> None:
    """Raise :class:`PayloadError` when ``value`` (already parsed) nests deeper than
    ``max_depth`` or holds a string (key or value) with a lone surrogate."""
    problems = [
        {"loc": [*loc, *path], "msg": "text contains a lone surrogate (not valid Unicode)"}
        for path, text in _strings(value, ())
        if _has_lone_surrogate(text)
    ]
    if problems:
        raise PayloadError(
            "invalid_text", "text contains a lone surrogate and cannot be stored", problems
        )
    depth = _value_depth(value, max_depth + 1)
    if depth > max_depth:
        raise PayloadError(
            "too_deep",
            f"JSON nested deeper than {max_depth} levels",
            [{"loc": list(loc), "msg": f"nesting deeper than {max_depth} levels"}],
        )


def _value_depth(value: Any, stop: int) -> int:
    if stop <= 0 or not isinstance(value, dict | list):
        return 0
    items = value.values() if isinstance(value, dict) else value
    return 1 + max((_value_depth(item, stop - 1) for item in items), default=0)


def parse_json(raw: bytes | str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse a JSON text the edges can store, or raise :class:`PayloadError`
    (``invalid_json``, ``too_deep`` or ``invalid_text``)."""
    if json_depth(raw) > max_depth:
        raise PayloadError(
            "too_deep",
            f"JSON nested deeper than {max_depth} levels",
            [{"loc": ["body"], "msg": f"nesting deeper than {max_depth} levels"}],
        )
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise PayloadError(
            "invalid_json", "the body is not valid JSON", [{"loc": ["body"], "msg": str(exc)}]
        ) from exc
    check_storable(value, max_depth=max_depth)
    return value


def check_json(raw: bytes, *, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`PayloadError` exactly when :func:`parse_json` would, without keeping the
    value (the request guard's check of every body).

    orjson (in C) is stricter than ``json.loads``: what it accepts, ``json.loads`` accepts as the
    same document, and its strings never hold a lone surrogate, so only the depth is left to
    check. Anything orjson refuses goes to :func:`parse_json` for the verdict and its message
    (``json.loads`` also takes ``NaN``, UTF-16, integers past 64 bits)."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        parse_json(raw, max_depth=max_depth)
        return
    if _value_depth(value, max_depth + 1) > max_depth:
        parse_json(raw, max_depth=max_depth)  # raises too_deep, with its message
