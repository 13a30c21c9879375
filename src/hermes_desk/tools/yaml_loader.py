"""Tool specs from a pack's ``tools.yaml`` — the format non-developers edit.

::

    variables:                       # defaults; the service fills them from settings
      backend_url: http://127.0.0.1:8100
    defaults:                        # applied to every tool that does not say otherwise
      timeout_s: 3
      health: {url: "{backend_url}/health"}
    tools:
      - name: get_order
        description: 按订单号查询订单
        parameters:                  # JSON Schema or OpenAPI 3.0 schema (nullable, format…);
          order_id: {type: string, pattern: "^[0-9]{12}$"}   # a bare property map is fine too
        required: [order_id]
        response_format: {type: object, required: [order_id, status]}
        fallback: 抱歉，订单系统繁忙，请稍后再试。
        owner: user_id               # the result field naming the record's owner (X3)
        not_found: [404]             # "no such order" is an answer, not a fault (X5)
        http: {method: GET, url: "{backend_url}/orders/{order_id}"}   # GET: effect read
      - name: get_shipment
        ...
        due: {date: eta, while: [in_transit]}   # a promised date; once past, told as past
      - name: create_return
        ...
        effect: write                # any method but GET must say read or write (X1)
        refusals: [409]              # business refusals, their reason in the result
        explain:                     # what it will do, per language; {parameter}, {x_tail}
          zh: 为订单 {order_id} 创建退货单
          en: open a return for order {order_id}
        http: {method: POST, url: "{backend_url}/returns"}
      - name: kb_search
        description: 搜索知识库
        builtin: kb_search           # built-ins read

Everything is checked at load: unknown keys, types, schemas (Draft 2020-12 after the OpenAPI
conversion), ``required`` names, URL placeholders, effects (a non-GET tool without ``effect``
does not load; ``approval_exempt`` only on a write, with its reason), ``explain`` placeholders,
``owner`` and ``due`` against ``response_format``. A problem raises
:class:`~hermes_desk.errors.PackError` naming the file, the tool and the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic import ValidationError as PydanticValidationError

from hermes_desk.errors import PackError
from hermes_desk.tools.kb import KB_SEARCH_PARAMETERS, KB_SEARCH_RESULT
from hermes_desk.tools.openapi import to_json_schema
from hermes_desk.tools.spec import (
    DEFAULT_FALLBACK,
    TOOL_NAME_PATTERN,
    BindingSpec,
    DueDate,
    Effect,
    HealthProbe,
    HttpTarget,
    ToolSpec,
)
from hermes_desk.validation import schema_problem

__all__ = ["load_tool_specs", "parse_tool_specs"]

M = TypeVar("M", bound=BaseModel)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_BUILTINS: dict[str, tuple[Mapping[str, Any], Mapping[str, Any]]] = {
    "kb_search": (KB_SEARCH_PARAMETERS, KB_SEARCH_RESULT)
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Http(_Strict):
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
    url: str = Field(min_length=1)
    query: list[str] | None = None
    body: list[str] | None = None
    body_encoding: Literal["json", "form"] = "json"
    idempotency_field: str | None = "idempotency_key"
    headers: dict[str, str] = Field(default_factory=dict)


class _Health(_Strict):
    url: str | None = None
    timeout_s: float | None = Field(None, gt=0)


_HttpStatus = Annotated[int, Field(ge=400, le=599)]


class _Due(_Strict):
    date: str = Field(min_length=1, max_length=64)
    status: str = Field("status", min_length=1, max_length=64)
    while_: list[str] = Field(alias="while", min_length=1)


class _Tool(_Strict):
    name: str = Field(pattern=TOOL_NAME_PATTERN.pattern)
    description: str = Field(min_length=1, max_length=1024)
    parameters: dict[str, Any] | None = None
    required: list[str] = Field(default_factory=list)
    response_format: dict[str, Any] | None = None
    timeout_s: float | None = Field(None, gt=0, le=600)
    fallback: str | None = Field(None, min_length=1)
    health: _Health | None = None
    http: _Http | None = None
    builtin: Literal["kb_search"] | None = None
    sensitive: list[str] = Field(default_factory=list)
    effect: Literal["read", "write"] | None = None
    approval_exempt: str | None = None
    explain: dict[str, str] = Field(default_factory=dict)
    owner: str | None = Field(None, min_length=1, max_length=64)
    not_found: list[_HttpStatus] = Field(default_factory=list)
    refusals: list[_HttpStatus] = Field(default_factory=list)
    due: _Due | None = None

    @model_validator(mode="after")
    def _one_binding(self) -> _Tool:
        if (self.http is None) == (self.builtin is None):
            raise ValueError("give exactly one binding: http or builtin")
        return self

    def declared_effect(self, file: str) -> Effect:
        """GET and built-ins read unless they say otherwise; any other method must say (X1)."""
        if self.effect is not None:
            return self.effect
        if self.builtin is not None or (self.http is not None and self.http.method == "GET"):
            return "read"
        method = self.http.method if self.http is not None else "non-GET"
        raise PackError(
            f"an HTTP {method} tool must declare 'effect: read' or 'effect: write'",
            file=file,
            item=self.name,
            field="effect",
        )


class _Defaults(_Strict):
    timeout_s: float | None = Field(None, gt=0, le=600)
    fallback: str | None = Field(None, min_length=1)
    health: _Health | None = None


class _File(_Strict):
    version: int = 1
    variables: dict[str, str] = Field(default_factory=dict)
    defaults: _Defaults = Field(default_factory=_Defaults)
    tools: list[dict[str, Any]]


def load_tool_specs(path: str | Path, variables: Mapping[str, str] | None = None) -> list[ToolSpec]:
    """Read and check a ``tools.yaml``. ``variables`` override the file's own defaults."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise PackError(f"cannot read: {exc.strerror}", file=file) from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PackError(f"not valid YAML: {exc}", file=file) from exc
    return parse_tool_specs(data, file=file, variables=variables)


def parse_tool_specs(
    data: Any, *, file: str, variables: Mapping[str, str] | None = None
) -> list[ToolSpec]:
    """Check already-parsed YAML data (see :func:`load_tool_specs`)."""
    if not isinstance(data, Mapping):
        raise PackError("must hold a mapping with a 'tools' list", file=file)
    doc = _model(_File, data, file, None)
    values = {**doc.variables, **(variables or {})}
    specs: list[ToolSpec] = []
    seen: set[str] = set()
    for index, raw in enumerate(doc.tools):
        label = str(raw.get("name") or f"tools[{index}]") if isinstance(raw, Mapping) else None
        tool = _model(_Tool, raw, file, label or f"tools[{index}]")
        if tool.name in seen:
            raise PackError("defined twice", file=file, item=tool.name, field="name")
        seen.add(tool.name)
        specs.append(_build(tool, doc.defaults, values, file))
    return specs


def _model(model: type[M], data: Any, file: str, item: str | None) -> M:
    try:
        return model.model_validate(data)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise PackError(err["msg"], file=file, item=item, field=field) from exc


def _build(tool: _Tool, defaults: _Defaults, values: Mapping[str, str], file: str) -> ToolSpec:
    name = tool.name
    builtin = _BUILTINS.get(tool.builtin) if tool.builtin else None
    parameters = _parameters(tool, builtin, file)
    response: Mapping[str, Any] | None = (
        to_json_schema(tool.response_format)
        if tool.response_format is not None
        else (builtin[1] if builtin else None)
    )
    if response is not None:
        problem = schema_problem(response)
        if problem:
            raise PackError(problem, file=file, item=name, field="response_format")
    if tool.owner is not None:
        properties = (response or {}).get("properties")
        if not isinstance(properties, Mapping) or tool.owner not in properties:
            raise PackError(
                f"names {tool.owner!r}, which is not a property of response_format",
                file=file,
                item=name,
                field="owner",
            )
    binding = BindingSpec(kind="builtin", options={"builtin": tool.builtin or ""})
    if tool.http is not None:
        binding = BindingSpec(kind="http", http=_http(tool, tool.http, parameters, values, file))
    health = tool.health or defaults.health
    health_url = health.url if health else None
    if health_url is not None and tool.builtin is None:
        health_url = _fill(health_url, values, file, name, "health.url", allowed=())
    elif tool.builtin is not None:
        health_url = None  # built-in tools run in-process
    return ToolSpec(
        name=name,
        description=tool.description.strip(),
        parameters=parameters,
        binding=binding,
        response_format=response,
        timeout_s=tool.timeout_s if tool.timeout_s is not None else defaults.timeout_s,
        fallback=tool.fallback or defaults.fallback or DEFAULT_FALLBACK,
        health=HealthProbe(url=health_url, timeout_s=health.timeout_s if health else None),
        source=file,
        sensitive=tuple(tool.sensitive),
        effect=tool.declared_effect(file),
        approval_exempt=tool.approval_exempt,
        explain=dict(tool.explain),
        owner_field=tool.owner,
        not_found=tuple(tool.not_found),
        refusals=tuple(tool.refusals),
        due=(
            DueDate(tool.due.date, tuple(tool.due.while_), tool.due.status)
            if tool.due is not None
            else None
        ),
    )


def _parameters(
    tool: _Tool, builtin: tuple[Mapping[str, Any], Mapping[str, Any]] | None, file: str
) -> dict[str, Any]:
    raw = tool.parameters
    if raw is None:
        schema: dict[str, Any] = dict(builtin[0]) if builtin else {"type": "object"}
    elif "type" in raw or "properties" in raw:
        schema = dict(raw)
    else:  # a bare property map, the friendly form
        schema = {"type": "object", "properties": raw}
    schema = to_json_schema(schema)
    if schema.get("type") != "object":
        raise PackError("must be an object schema", file=file, item=tool.name, field="parameters")
    schema.setdefault("properties", {})
    required = list(dict.fromkeys([*schema.get("required", []), *tool.required]))
    missing = [r for r in required if r not in schema["properties"]]
    if missing:
        raise PackError(
            f"names {missing} that are not parameters", file=file, item=tool.name, field="required"
        )
    if required:
        schema["required"] = required
    problem = schema_problem(schema)
    if problem:
        raise PackError(problem, file=file, item=tool.name, field="parameters")
    return schema


def _http(
    tool: _Tool, http: _Http, parameters: Mapping[str, Any], values: Mapping[str, str], file: str
) -> HttpTarget:
    properties = parameters.get("properties", {})
    url = _fill(http.url, values, file, tool.name, "http.url", allowed=tuple(properties))
    if not re.match(r"^https?://", url):
        raise PackError(
            f"must be an absolute http(s) URL, got {url!r}",
            file=file,
            item=tool.name,
            field="http.url",
        )
    required = set(parameters.get("required", []))
    for placeholder in _PLACEHOLDER.findall(url):
        if placeholder not in required:
            raise PackError(
                f"path parameter {{{placeholder}}} must be a required parameter",
                file=file,
                item=tool.name,
                field="http.url",
            )
    for field_name, names in (("http.query", http.query), ("http.body", http.body)):
        unknown = [n for n in names or [] if n not in properties]
        if unknown:
            raise PackError(
                f"names {unknown} that are not parameters",
                file=file,
                item=tool.name,
                field=field_name,
            )
    return HttpTarget(
        method=http.method,
        url=url,
        query=tuple(http.query) if http.query is not None else None,
        body=tuple(http.body) if http.body is not None else None,
        body_encoding=http.body_encoding,
        idempotency_field=http.idempotency_field,
        headers=dict(http.headers),
    )


def _fill(
    template: str,
    values: Mapping[str, str],
    file: str,
    tool: str,
    field: str,
    *,
    allowed: tuple[str, ...],
) -> str:
    """Fill pack variables; leave the tool's own parameters (path placeholders) in place."""

    def sub(match: re.Match[str]) -> str:
        key = match.group(1)
        if key in allowed:
            return match.group(0)
        if key not in values:
            raise PackError(
                f"unknown variable {{{key}}} (neither a pack variable nor a parameter)",
                file=file,
                item=tool,
                field=field,
            )
        return values[key].rstrip("/")

    return _PLACEHOLDER.sub(sub, template)
