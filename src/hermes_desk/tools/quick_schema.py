"""A quick yes for the JSON Schemas tools declare, before ``jsonschema`` is asked.

``jsonschema`` walks a schema anew on every value, building a validator per step: an order
lookup's answer (a dozen fields, a list of items) took 130 µs to check, its arguments 12 µs —
per tool call, on the worker's one core. Tool schemas mostly use a handful of keywords (type,
required, properties, items, bounds, lengths, pattern, string enums, format), so each schema is
compiled once into plain Python checks of those keywords, with ``jsonschema``'s own meaning for
each (Draft 2020-12: its type rules, ``re.search`` for patterns, its format checker).
The compiling validator on PyPI (``fastjsonschema``) stops at Draft 7, and its verdicts would
have to match jsonschema's anyway: hence this small compiler of the keywords packs use.

A quick check only ever says "valid" or "ask jsonschema": a value it does not pass, and every
schema with a keyword it does not know, go to :class:`~hermes_desk.validation.SchemaValidator`,
whose verdict and messages therefore stay the only ones anyone sees.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Mapping, Sized
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from hermes_desk.validation import SchemaValidator

__all__ = ["QuickSchemaValidator", "quick_check"]

Check = Callable[[Any], bool]

_FORMATS = FormatChecker()  # all formats, as hermes_desk.validation asserts them
#: keywords that assert or apply something in Draft 2020-12; any other key is an annotation
#: (title, description, examples, x-…) that jsonschema ignores, and so do we
_ASSERTING = frozenset(Draft202012Validator.VALIDATORS)
_HANDLED = frozenset(
    {
        "type",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "pattern",
        "enum",
        "const",
        "format",
    }
)


class _Unsupported(Exception):
    """The schema needs jsonschema itself."""


def _is_number(value: Any) -> bool:
    if type(value) in _PLAIN_NUMBERS:  # the JSON case, without the slower ABC check
        return True
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


_PLAIN_NUMBERS = frozenset({int, float})


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


#: jsonschema's Draft 2020-12 type checker, type by type
_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def quick_check(schema: Mapping[str, Any] | bool) -> Check | None:
    """A function that is true only for values valid under ``schema``; ``None`` when the schema
    uses a keyword this module does not check (jsonschema must decide everything then)."""
    try:
        return _compile(schema)
    except _Unsupported:
        return None


def _compile(schema: Mapping[str, Any] | bool) -> Check:
    if schema is True:
        return lambda value: True
    if schema is False or not isinstance(schema, Mapping):
        raise _Unsupported
    unknown = (_ASSERTING & schema.keys()) - _HANDLED
    if unknown:
        raise _Unsupported
    checks: list[Check] = []
    if "type" in schema:
        checks.append(_type_check(schema["type"]))
    checks.extend(_object_checks(schema))
    if "items" in schema:
        item = _compile(schema["items"])
        checks.append(_every_item(item))
    checks.extend(_bound_checks(schema))
    checks.extend(_string_checks(schema))
    if "enum" in schema or "const" in schema:
        choices = schema["enum"] if "enum" in schema else [schema["const"]]
        if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
            raise _Unsupported  # jsonschema's equality (1 == 1.0, True != 1) is its own
        allowed = frozenset(choices)
        checks.append(lambda v: isinstance(v, str) and v in allowed)
    if "format" in schema:
        fmt = schema["format"]
        checks.append(lambda v: _FORMATS.conforms(v, fmt))
    if not checks:
        return lambda value: True
    return _all_of(checks)


# Plain loops below rather than all(generator): these run for every field of every answer.


def _all_of(checks: list[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]
    every = tuple(checks)

    def all_hold(value: Any) -> bool:
        for check in every:  # noqa: SIM110 (a loop: faster than all() on a generator)
            if not check(value):
                return False
        return True

    return all_hold


def _every_item(item: Check) -> Check:
    def items_hold(value: Any) -> bool:
        if isinstance(value, list):
            for element in value:
                if not item(element):
                    return False
        return True

    return items_hold


def _type_check(declared: Any) -> Check:
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list) or not all(n in _TYPES for n in names):
        raise _Unsupported
    tests = [_TYPES[n] for n in names]
    if len(tests) == 1:
        return tests[0]
    return lambda v: any(test(v) for test in tests)


def _object_checks(schema: Mapping[str, Any]) -> list[Check]:
    checks: list[Check] = []
    required = schema.get("required")
    if required is not None:
        if not isinstance(required, list):
            raise _Unsupported
        names = tuple(required)

        def required_present(value: Any) -> bool:
            if isinstance(value, dict):
                for name in names:
                    if name not in value:
                        return False
            return True

        checks.append(required_present)
    props = schema.get("properties", {})
    if not isinstance(props, Mapping):
        raise _Unsupported
    compiled = tuple((name, _compile(sub)) for name, sub in props.items())
    if compiled:

        def properties_hold(value: Any) -> bool:
            if isinstance(value, dict):
                for name, check in compiled:
                    if name in value and not check(value[name]):
                        return False
            return True

        checks.append(properties_hold)
    if "additionalProperties" in schema:
        extra = (
            _compile(schema["additionalProperties"])
            if schema["additionalProperties"] is not False
            else None
        )
        known = frozenset(props)

        def extras_ok(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            others = [k for k in v if k not in known]
            return not others if extra is None else all(extra(v[k]) for k in others)

        checks.append(extras_ok)
    return checks


_BOUNDS: dict[str, Callable[[Any, Any], bool]] = {
    "minimum": lambda v, b: not v < b,
    "maximum": lambda v, b: not v > b,
    "exclusiveMinimum": lambda v, b: v > b,
    "exclusiveMaximum": lambda v, b: v < b,
}
#: size keyword → (the type it sizes, whether it is an upper limit)
_SIZES: dict[str, tuple[type[Sized], bool]] = {
    "minItems": (list, False),
    "maxItems": (list, True),
    "minLength": (str, False),
    "maxLength": (str, True),
}


def _bound_checks(schema: Mapping[str, Any]) -> list[Check]:
    checks: list[Check] = []
    for keyword, holds in _BOUNDS.items():
        if keyword in schema:
            if not _is_number(schema[keyword]):
                raise _Unsupported
            checks.append(_bound(holds, schema[keyword]))
    for keyword, (sized, upper) in _SIZES.items():
        if keyword in schema:
            if not _is_integer(schema[keyword]):
                raise _Unsupported
            checks.append(_size(sized, schema[keyword], upper=upper))
    return checks


def _bound(holds: Callable[[Any, Any], bool], bound: Any) -> Check:
    return lambda v: not _is_number(v) or holds(v, bound)


def _size(sized: type[Sized], limit: int, *, upper: bool) -> Check:
    if upper:
        return lambda v: not isinstance(v, sized) or len(v) <= limit
    return lambda v: not isinstance(v, sized) or len(v) >= limit


def _string_checks(schema: Mapping[str, Any]) -> list[Check]:
    if "pattern" not in schema:
        return []
    pattern = schema["pattern"]
    if not isinstance(pattern, str):
        raise _Unsupported
    try:
        search = re.compile(pattern).search
    except re.error as exc:
        raise _Unsupported from exc
    return [lambda v: not isinstance(v, str) or search(v) is not None]


class QuickSchemaValidator(SchemaValidator):
    """A :class:`SchemaValidator` that answers at once for values its quick check passes."""

    __slots__ = ("_quick",)

    def __init__(self, schema: Mapping[str, Any]) -> None:
        super().__init__(schema)
        self._quick = quick_check(schema)

    def is_valid(self, value: Any) -> bool:
        return (self._quick is not None and self._quick(value)) or super().is_valid(value)

    def failed_keyword(self, value: Any) -> str | None:
        if self._quick is not None and self._quick(value):
            return None
        return super().failed_keyword(value)

    def problems(self, value: Any, *, limit: int = 5) -> list[str]:
        if self._quick is not None and self._quick(value):
            return []
        return super().problems(value, limit=limit)
