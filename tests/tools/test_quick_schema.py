"""The quick schema check says "valid" only where jsonschema does, and changes no verdict or
message: every schema of the demo pack and a few of its own, against many valid and broken
values."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from tests.tools.tools_helpers import demo_specs

from hermes_desk.tools.quick_schema import QuickSchemaValidator, quick_check
from hermes_desk.validation import SchemaValidator

#: values put in every place of a sample, to break it in every way a backend or a model might
PALETTE: list[Any] = [
    None, True, False, 0, 1, -1, 1.0, 1.5, -0.5, 10**20, "", "x", " ", "202405201234",
    "2024-05-20", "2024-05-20T10:15:00+08:00", "not a date", "13800138000", "a@b.co", "ü" * 3,
    "9" * 40, [], [1], ["a"], [{}], {}, {"name": "x"}, {"name": "x", "qty": 1},
]  # fmt: skip

#: strings that match the patterns tools declare (order ids, phone numbers, codes)
STRINGS = ["202405201234", "13800138000", "123456", "AB12", "ab"]

OWN_SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "additionalProperties": False, "properties": {"a": {"type": "integer"}}},
    {"type": "object", "additionalProperties": {"type": "string"}, "properties": {"a": {}}},
    {"type": ["string", "null"], "minLength": 2, "maxLength": 4, "pattern": "^[a-z]"},
    {"type": "array", "minItems": 1, "maxItems": 2, "items": {"enum": ["a", "b"]}},
    {"type": "number", "exclusiveMinimum": 0, "maximum": 100},
    {"const": "yes"},
    {"type": "string", "format": "date", "nullable": True, "description": "an annotation"},
    {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"}}},
]


def _pack_schemas() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for spec in demo_specs("http://127.0.0.1:1"):
        out.append(dict(spec.parameters))
        if spec.response_format is not None:
            out.append(dict(spec.response_format))
    return out


def _sample(schema: Any) -> Any:
    """A value meant to be valid, built from the schema's own words."""
    if not isinstance(schema, dict):
        return None
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        return {name: _sample(sub) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [_sample(schema.get("items", {}))]
    if kind in {"integer", "number"}:
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return True
    if kind == "string":
        if "pattern" in schema:
            return next(s for s in STRINGS if re.search(schema["pattern"], s))
        return {"date": "2024-05-20", "date-time": "2024-05-20T10:15:00+08:00"}.get(
            schema.get("format", ""), "ab"
        )
    return None


def _variants(value: Any) -> list[Any]:
    """``value``, then every value of the palette put in each of its places, and each key
    dropped."""
    out = [value, *PALETTE]
    if isinstance(value, dict):
        for key in value:
            out.append({k: v for k, v in value.items() if k != key})
            for inner in _variants(value[key])[:12]:
                out.append({**value, key: inner})
        out.append({**value, "unexpected": 1})
    elif isinstance(value, list) and value:
        out.extend([inner] for inner in _variants(value[0])[:12])
        out.append(value * 3)
    return out


SCHEMAS = _pack_schemas() + OWN_SCHEMAS


@pytest.mark.parametrize("schema", SCHEMAS, ids=[str(i) for i in range(len(SCHEMAS))])
def test_the_quick_check_never_passes_what_jsonschema_refuses(schema: dict[str, Any]) -> None:
    quick, slow = QuickSchemaValidator(schema), SchemaValidator(schema)
    values = _variants(_sample(schema))
    verdicts = set()
    for value in values:
        assert quick.problems(value) == slow.problems(value), value
        assert quick.is_valid(value) == slow.is_valid(value), value
        assert quick.failed_keyword(value) == slow.failed_keyword(value), value
        verdicts.add(slow.is_valid(value))
    assert verdicts == {True, False}  # the values did try both sides


def test_the_demo_packs_schemas_all_take_the_quick_path() -> None:
    assert all(quick_check(schema) is not None for schema in _pack_schemas())


@pytest.mark.parametrize(
    "schema",
    [
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"enum": [1, "1"]},
        {"type": "array", "prefixItems": [{"type": "string"}]},
        {"$ref": "#/$defs/a", "$defs": {"a": {"type": "string"}}},
        {"type": "object", "properties": {"a": False}},
    ],
)
def test_keywords_it_does_not_know_leave_everything_to_jsonschema(schema: dict[str, Any]) -> None:
    assert quick_check(schema) is None
    quick, slow = QuickSchemaValidator(schema), SchemaValidator(schema)
    for value in itertools.islice(PALETTE, 20):
        assert quick.problems(value) == slow.problems(value)
