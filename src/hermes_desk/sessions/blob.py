"""A session's stored form: compact JSON, written and read with orjson.

The whole session is written at every turn (one compare-and-set record, spec D1), so its
encoding is on every turn's path. orjson writes the same text as ``json.dumps(data,
ensure_ascii=False, separators=(",", ":"))``, the form stored before (byte for byte on the 620
sessions of a ``bench turn-cpu`` run), in a quarter of the time (60 → 14 µs for the longer
sessions there), and reads it back in 0.6 of the time. What orjson refuses to write (an integer
beyond 64 bits) or read (``NaN``, which the standard library writes) goes through the
standard library, so every record either wrote stays readable.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["dumps_blob", "loads_blob"]


def dumps_blob(data: Any) -> str:
    """``data`` as compact JSON text, non-ASCII kept as it is."""
    try:
        return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def loads_blob(text: str | bytes) -> Any:
    """What :func:`dumps_blob` (or the standard library) wrote."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
