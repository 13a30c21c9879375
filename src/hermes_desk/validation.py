"""JSON Schema checks, one validator for the whole service: tool arguments (before a call) and
results (after it), and slot values a model proposes — with ``jsonschema``.

Draft 2020-12 with a :class:`~jsonschema.FormatChecker`, so ``format: date`` and friends are
asserted, not just annotated (Draft 2020-12 treats ``format`` as an annotation unless a checker
is given). Validators are compiled once per schema; the happy path is one ``is_valid`` call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError

__all__ = ["SchemaValidator", "schema_problem"]

_FORMATS = FormatChecker()


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` is not a valid Draft 2020-12 schema, or ``None`` when it is."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"{where}: {exc.message}"
    return None


class SchemaValidator:
    """A compiled schema. ``problems(value)`` lists what is wrong, empty when valid."""

    __slots__ = ("_validator",)

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._validator = Draft202012Validator(schema, format_checker=_FORMATS)

    def is_valid(self, value: Any) -> bool:
        return bool(self._validator.is_valid(value))

    def failed_keyword(self, value: Any) -> str | None:
        """The first constraint ``value`` fails (e.g. ``pattern``), or ``None`` when valid."""
        if self._validator.is_valid(value):
            return None
        error = next(iter(self._validator.iter_errors(value)))
        return str(error.validator)

    def problems(self, value: Any, *, limit: int = 5) -> list[str]:
        if self._validator.is_valid(value):
            return []
        out: list[str] = []
        for error in sorted(self._validator.iter_errors(value), key=lambda e: list(e.path)):
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            # jsonschema's messages quote the offending value, which may be a phone number or a
            # code: report the constraint that failed instead, never the value.
            if error.validator in {"required", "additionalProperties"}:
                out.append(f"{where}: {_short(error.message)}")
            else:
                out.append(f"{where}: {error.validator} {_short(repr(error.validator_value))}")
            if len(out) >= limit:
                break
        return out


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
