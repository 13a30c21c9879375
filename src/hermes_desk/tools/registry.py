"""The tools a runtime can call: name → spec, live binding and compiled validators."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from hermes_desk.errors import PackError
from hermes_desk.tools.binding import ToolBinding
from hermes_desk.tools.quick_schema import QuickSchemaValidator
from hermes_desk.tools.spec import TOOL_NAME_PATTERN, ToolSpec
from hermes_desk.validation import SchemaValidator, schema_problem

__all__ = ["RegisteredTool", "ToolRegistry"]


@dataclass(frozen=True, slots=True)
class RegisteredTool:
    spec: ToolSpec
    binding: ToolBinding
    arguments: SchemaValidator
    result: SchemaValidator | None


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, RegisteredTool] = {}
        self._spec_map: Mapping[str, ToolSpec] | None = None

    def add(self, spec: ToolSpec, binding: ToolBinding) -> RegisteredTool:
        """Register a tool; refuse a bad name, a bad schema or a duplicate (PackError)."""
        if not TOOL_NAME_PATTERN.match(spec.name):
            raise PackError(
                "a tool name is 1-64 of A-Z a-z 0-9 _ -",
                file=spec.source,
                item=spec.name,
                field="name",
            )
        if spec.name in self._tools:
            raise PackError("defined twice", file=spec.source, item=spec.name, field="name")
        if spec.parameters.get("type") != "object":
            raise PackError(
                "parameters must be an object schema",
                file=spec.source,
                item=spec.name,
                field="parameters",
            )
        for field, schema in (
            ("parameters", spec.parameters),
            ("response_format", spec.response_format),
        ):
            if schema is None:
                continue
            problem = schema_problem(schema)
            if problem:
                raise PackError(problem, file=spec.source, item=spec.name, field=field)
        entry = RegisteredTool(
            spec=spec,
            binding=binding,
            # checked on every call: a quick check first, jsonschema for what it does not pass
            arguments=QuickSchemaValidator(spec.parameters),
            result=QuickSchemaValidator(spec.response_format)
            if spec.response_format is not None
            else None,
        )
        self._tools[spec.name] = entry
        self._spec_map = None
        return entry

    def get(self, name: str) -> RegisteredTool | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[RegisteredTool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [t.spec for t in self._tools.values()]

    def spec_map(self) -> Mapping[str, ToolSpec]:
        """The specs by name, read-only; built once per change (a turn asks for it)."""
        if self._spec_map is None:
            self._spec_map = MappingProxyType({name: t.spec for name, t in self._tools.items()})
        return self._spec_map

    def model_schemas(self, names: Iterable[str] | None = None) -> list[dict[str, object]]:
        """Function definitions for a model, limited to ``names`` (e.g. the intent's tools)."""
        wanted = None if names is None else set(names)
        return [
            t.spec.model_schema()
            for t in self._tools.values()
            if wanted is None or t.spec.name in wanted
        ]
