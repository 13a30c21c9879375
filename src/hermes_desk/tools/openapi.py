"""OpenAPI 3.0: schema objects → JSON Schema, and documents → tools (one per operation).

OpenAPI 3.0's schema object is a dialect of JSON Schema draft 5 that Draft 2020-12 validators
misread: ``nullable: true`` (→ ``type: [T, "null"]``), boolean ``exclusiveMinimum`` /
``exclusiveMaximum`` (→ the numeric form), ``example`` (→ ``examples``), and vendor keys
(``x-…``, ``discriminator``, ``xml``, ``externalDocs``, dropped). :func:`to_json_schema`
converts them; it leaves a Draft 2020-12 schema unchanged, so the YAML loader runs every schema
through it.

:func:`load_openapi` turns each operation into a :class:`ToolSpec` with an HTTP binding: path and
query parameters and the properties of a JSON (or form) request body become the arguments, the
2xx JSON response schema becomes ``response_format``. Local ``$ref``s are inlined (recursive
ones become ``{}``). An operation the binding cannot express (a non-object body, a required
header or cookie) is skipped and listed in :attr:`OpenApiTools.skipped`.

Effects (SPEC §8 X1): a ``GET`` operation reads; any other must carry the extension
``x-effect: read`` or ``x-effect: write``, or the document does not load (a
:class:`~hermes_desk.errors.PackError` naming the file and the ``operationId``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from hermes_desk.errors import PackError
from hermes_desk.tools.spec import (
    DEFAULT_FALLBACK,
    BindingSpec,
    Effect,
    HealthProbe,
    HttpTarget,
    ToolSpec,
)
from hermes_desk.validation import schema_problem

__all__ = ["OpenApiTools", "load_openapi", "to_json_schema", "tool_name"]

_DROP = {"discriminator", "xml", "externalDocs"}
_SUBSCHEMA = {
    "items",
    "not",
    "additionalProperties",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
}
_SUBSCHEMA_LISTS = {"allOf", "anyOf", "oneOf", "prefixItems"}
_SUBSCHEMA_MAPS = {"properties", "patternProperties", "$defs", "dependentSchemas"}
_METHODS = ("get", "post", "put", "patch", "delete")


def to_json_schema(schema: Any) -> Any:
    """Convert an OpenAPI 3.0 schema object (or a JSON Schema) to Draft 2020-12 JSON Schema."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROP or (isinstance(key, str) and key.startswith("x-")) or key == "nullable":
            continue
        if key in _SUBSCHEMA:
            out[key] = to_json_schema(value)
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [to_json_schema(v) for v in value]
        elif key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {k: to_json_schema(v) for k, v in value.items()}
        elif key == "example":
            out.setdefault("examples", [value])
        else:
            out[key] = value
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        flag = out.get(exclusive)
        if isinstance(flag, bool):
            del out[exclusive]
            if flag and bound in out:
                out[exclusive] = out.pop(bound)
    if schema.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
        elif isinstance(kind, list) and "null" not in kind:
            out["type"] = [*kind, "null"]
        elif kind is None:
            out = {"anyOf": [out, {"type": "null"}]}
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out


def tool_name(raw: str) -> str:
    """A provider-safe tool name from an ``operationId`` ("find pet by id" → find_pet_by_id)."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", raw).strip("_")
    return name[:64] or "operation"


@dataclass(frozen=True, slots=True)
class OpenApiTools:
    specs: list[ToolSpec]
    skipped: dict[str, str] = field(default_factory=dict)  # operation → why


def load_openapi(
    source: str | Path | Mapping[str, Any],
    *,
    base_url: str | None = None,
    variables: Mapping[str, str] | None = None,
    operations: Collection[str] | None = None,
    fallback: str | None = None,
    timeout_s: float | None = None,
    health_url: str | None = None,
) -> OpenApiTools:
    """Tools from an OpenAPI 3.0 document (a path to YAML/JSON, or the parsed mapping).

    Args:
        base_url: overrides the document's first server URL (needed when it is relative).
        variables: server variables (``{scheme}``…) overriding their defaults.
        operations: only these tool names (after :func:`tool_name`).
        fallback, timeout_s, health_url: applied to every tool.

    Raises:
        PackError: the document is not OpenAPI 3.0, two operations share a name, or a schema
            is invalid — naming the file, the tool and the field.
    """
    file = str(source) if not isinstance(source, Mapping) else "<openapi>"
    doc = _read(source, file)
    version = str(doc.get("openapi", ""))
    if not version.startswith("3.0"):
        raise PackError(
            f"expected an OpenAPI 3.0 document, got {version!r}", file=file, field="openapi"
        )
    root = base_url or _server_url(doc, variables or {}, file)
    if not re.match(r"^https?://", root):
        raise PackError(
            f"the server URL {root!r} is not absolute; pass base_url", file=file, field="servers"
        )
    specs: list[ToolSpec] = []
    skipped: dict[str, str] = {}
    seen: set[str] = set()
    for path, item in (doc.get("paths") or {}).items():
        item = _resolve(doc, item, file)
        shared = item.get("parameters") or []
        for method in _METHODS:
            op = item.get(method)
            if not isinstance(op, Mapping):
                continue
            name = tool_name(str(op.get("operationId") or f"{method}_{path}"))
            if operations is not None and name not in operations:
                continue
            if name in seen:
                raise PackError(
                    "two operations share this name", file=file, item=name, field="operationId"
                )
            seen.add(name)
            try:
                spec = _operation(doc, file, name, method, root, path, op, shared)
            except _Unsupported as why:
                skipped[name] = str(why)
                continue
            specs.append(
                replace(
                    spec,
                    timeout_s=timeout_s,
                    fallback=fallback or DEFAULT_FALLBACK,
                    health=HealthProbe(url=health_url),
                    effect=_effect(op, method, file, name),
                )
            )
    return OpenApiTools(specs=specs, skipped=skipped)


class _Unsupported(Exception):
    pass


def _effect(op: Mapping[str, Any], method: str, file: str, name: str) -> Effect:
    """``GET`` reads; any other operation must say ``x-effect: read|write`` (SPEC §8 X1)."""
    declared = op.get("x-effect")
    if declared in ("read", "write"):
        effect: Effect = declared
        return effect
    if declared is not None:
        raise PackError(
            f"x-effect must be 'read' or 'write', got {declared!r}",
            file=file,
            item=str(op.get("operationId") or name),
            field="x-effect",
        )
    if method == "get":
        return "read"
    raise PackError(
        f"a {method.upper()} operation must declare 'x-effect: read' or 'x-effect: write'",
        file=file,
        item=str(op.get("operationId") or name),
        field="x-effect",
    )


def _read(source: str | Path | Mapping[str, Any], file: str) -> Mapping[str, Any]:
    if isinstance(source, Mapping):
        return source
    try:
        text = Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise PackError(f"cannot read: {exc.strerror}", file=file) from exc
    try:
        data = json.loads(text) if str(source).endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise PackError(f"not valid YAML/JSON: {exc}", file=file) from exc
    if not isinstance(data, Mapping):
        raise PackError("must hold a mapping", file=file)
    return data


def _server_url(doc: Mapping[str, Any], variables: Mapping[str, str], file: str) -> str:
    servers = doc.get("servers") or []
    if not servers or not isinstance(servers[0], Mapping):
        raise PackError("no servers[0].url; pass base_url", file=file, field="servers")
    server = servers[0]
    url = str(server.get("url", ""))
    for name, var in (server.get("variables") or {}).items():
        url = url.replace("{" + name + "}", str(variables.get(name, var.get("default", ""))))
    return url.rstrip("/")


def _resolve(doc: Mapping[str, Any], node: Any, file: str, stack: tuple[str, ...] = ()) -> Any:
    """Inline local ``$ref``s, deep. A reference back into its own ancestry becomes ``{}``."""
    if isinstance(node, list):
        return [_resolve(doc, v, file, stack) for v in node]
    if not isinstance(node, Mapping):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        if ref in stack:
            return {}
        if not ref.startswith("#/"):
            raise _Unsupported(f"external $ref {ref}")
        target: Any = doc
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                raise PackError(f"unresolvable $ref {ref}", file=file, field="$ref")
            target = target[part]
        return _resolve(doc, target, file, (*stack, ref))
    return {k: _resolve(doc, v, file, stack) for k, v in node.items()}


def _operation(
    doc: Mapping[str, Any],
    file: str,
    name: str,
    method: str,
    root: str,
    path: str,
    op: Mapping[str, Any],
    shared: list[Any],
) -> ToolSpec:
    op = _resolve(doc, op, file)
    params: dict[tuple[str, str], Mapping[str, Any]] = {}
    for raw in [*_resolve(doc, shared, file), *(op.get("parameters") or [])]:
        params[(raw.get("name"), raw.get("in"))] = raw
    properties: dict[str, Any] = {}
    required: list[str] = []
    query: list[str] = []
    for (pname, where), p in params.items():
        if where in {"header", "cookie"}:
            if p.get("required"):
                raise _Unsupported(f"required {where} parameter {pname}")
            continue
        schema = dict(to_json_schema(p.get("schema") or {}))
        if p.get("description") and "description" not in schema:
            schema["description"] = p["description"]
        properties[pname] = schema
        if where == "query":
            query.append(pname)
        if p.get("required") or where == "path":
            required.append(pname)
    body_fields: tuple[str, ...] | None = None
    encoding: str = "json"
    body = op.get("requestBody")
    if isinstance(body, Mapping):
        content = body.get("content") or {}
        media = next(
            (m for m in ("application/json", "application/x-www-form-urlencoded") if m in content),
            None,
        )
        if media is None:
            raise _Unsupported(f"request body media types {sorted(content)}")
        encoding = "json" if media == "application/json" else "form"
        schema = to_json_schema(content[media].get("schema") or {})
        if schema.get("type", "object") != "object" or "properties" not in schema:
            raise _Unsupported("the request body is not an object with properties")
        for prop, sub in schema["properties"].items():
            if prop in properties:
                raise PackError(
                    f"body property {prop} clashes with a parameter",
                    file=file,
                    item=name,
                    field="requestBody",
                )
            properties[prop] = sub
        body_fields = tuple(schema["properties"])
        if body.get("required") or schema.get("required"):
            required.extend(schema.get("required") or [])
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = sorted(set(required), key=required.index)
    response = _response_schema(op)
    for field_name, value in (("parameters", parameters), ("response_format", response)):
        if value is not None:
            problem = schema_problem(value)
            if problem:
                raise PackError(problem, file=file, item=name, field=field_name)
    description = str(op.get("summary") or op.get("description") or name).strip()
    return ToolSpec(
        name=name,
        description=description[:1024],
        parameters=parameters,
        response_format=response,
        binding=BindingSpec(
            kind="http",
            http=HttpTarget(
                method=method.upper(),
                url=root + path,
                query=tuple(query),
                body=body_fields if body_fields is not None else (),
                body_encoding="form" if encoding == "form" else "json",
                idempotency_field=None,
            ),
        ),
        source=file,
    )


def _response_schema(op: Mapping[str, Any]) -> dict[str, Any] | None:
    responses = op.get("responses") or {}
    for code, answer in sorted(responses.items(), key=lambda kv: str(kv[0])):
        if not str(code).startswith("2") or not isinstance(answer, Mapping):
            continue
        content = answer.get("content") or {}
        media = content.get("application/json")
        if isinstance(media, Mapping) and media.get("schema") is not None:
            converted: dict[str, Any] = to_json_schema(media["schema"])
            return converted
        return None
    return None
