"""The one record that describes a tool, whatever loaded it (YAML, OpenAPI, ``@tool``, MCP).

A :class:`ToolSpec` is data: the JSON Schema of the arguments, the JSON Schema of the result,
the time limit, the reply used when the tool cannot answer, how to probe its health and where it
is bound. Loaders produce it; the executor enforces it. Nothing here performs I/O.

``parameters`` and ``response_format`` are always JSON Schema (Draft 2020-12) here: OpenAPI 3.0
schema objects (``nullable``, boolean ``exclusiveMinimum``…) are converted by the loaders
(:func:`hermes_desk.tools.openapi.to_json_schema`) before a spec is built.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from hermes_desk.errors import PackError
from hermes_desk.events import mask_fields, mask_value

__all__ = [
    "DEFAULT_FALLBACK",
    "TOOL_NAME_PATTERN",
    "BindingKind",
    "BindingSpec",
    "DueDate",
    "Effect",
    "HealthProbe",
    "HttpTarget",
    "ToolSpec",
]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HAN = re.compile(r"[\u4e00-\u9fff]")

#: What providers accept as a function name (OpenAI, Anthropic, MCP all agree on this subset).
TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

#: The reply used when a tool (or an unknown one) cannot answer and its spec names none.
DEFAULT_FALLBACK = "抱歉，这个问题我暂时无法查询，请稍后再试或转人工客服。"

BindingKind = Literal["python", "http", "builtin", "mcp"]

#: What a tool does to the world: ``read`` looks, ``write`` changes something (SPEC §8 X1).
Effect = Literal["read", "write"]


@dataclass(frozen=True, slots=True)
class HttpTarget:
    """An HTTP endpoint a tool calls.

    Args:
        method: ``GET``, ``POST``, ``PUT``, ``PATCH`` or ``DELETE``.
        url: absolute URL template; ``{name}`` placeholders are filled from the arguments
            (URL-quoted). Pack variables such as ``{backend_url}`` are filled at load.
        query: argument names sent as query parameters. ``None`` means every argument that
            is not in the path, for ``GET``/``DELETE``; none for the others.
        body: argument names sent in the body. ``None`` means every argument that is neither in
            the path nor in the query, for ``POST``/``PUT``/``PATCH``.
        body_encoding: ``json`` or ``form``.
        idempotency_field: for non-``GET`` calls, the body field that carries the call
            context's idempotency key (``None`` to send none). Also sent as the
            ``Idempotency-Key`` header.
        headers: extra request headers.
    """

    method: str
    url: str
    query: tuple[str, ...] | None = None
    body: tuple[str, ...] | None = None
    body_encoding: Literal["json", "form"] = "json"
    idempotency_field: str | None = "idempotency_key"
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def path_params(self) -> tuple[str, ...]:
        return tuple(re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", self.url))


@dataclass(frozen=True, slots=True)
class BindingSpec:
    """Where a tool runs, as data. The registry pairs it with a live :class:`ToolBinding`.

    ``kind`` is ``python`` (an in-process callable, from ``@tool``), ``http`` (``http`` holds the
    endpoint), ``builtin`` (provided by Hermes Desk itself, e.g. ``kb_search``) or ``mcp`` (a
    Model Context Protocol server tool; ``options`` names the server and remote tool).
    """

    kind: BindingKind
    http: HttpTarget | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.http is not None:
            out["method"] = self.http.method
            out["url"] = self.http.url
        if self.options:
            out.update({k: v for k, v in self.options.items() if isinstance(v, str | int)})
        return out


@dataclass(frozen=True, slots=True)
class HealthProbe:
    """How to ask whether a tool's backend is up (run before the first call after a cool-down).

    ``url`` set: an HTTP ``GET`` whose 2xx answer means healthy. ``url`` unset: the binding's own
    probe (a Python tool's ``health`` callable, an MCP server ping), or healthy when it has none.
    """

    url: str | None = None
    timeout_s: float | None = None


@dataclass(frozen=True, slots=True)
class DueDate:
    """The date a read tool's record promises while its status says it is still on its way
    (``eta`` while ``in_transit``): once that date has passed, a reply must not promise it
    again (SPEC §8 R1).

    Attributes:
        field: the result's top-level field holding an ISO date (``2026-12-05``; a timestamp's
            date part counts).
        statuses: the values of ``status_field`` under which the date is still a promise.
        status_field: the result's field holding the record's status.
    """

    field: str
    statuses: tuple[str, ...]
    status_field: str = "status"

    def days_overdue(self, result: Any, today: date) -> int | None:
        """Whole days ``today`` is past the promised date, or None: not past, not promised
        (another status), or no readable date."""
        if not isinstance(result, Mapping) or result.get(self.status_field) not in self.statuses:
            return None
        value = result.get(self.field)
        if not isinstance(value, str):
            return None
        try:
            due = date.fromisoformat(value[:10])
        except ValueError:
            return None
        late = (today - due).days
        return late if late > 0 else None


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool: schema-first data.

    Attributes:
        name: unique, ``[A-Za-z0-9_-]{1,64}``.
        description: what the model and the agent console are told.
        parameters: JSON Schema of the arguments (an ``object`` schema; ``required`` inside).
        response_format: JSON Schema of a valid result, or ``None`` to accept any JSON value.
        timeout_s: per-call time limit; ``None`` takes ``ToolSettings.default_timeout_s`` (3 s).
        fallback: the reply used when the tool cannot answer (breaker open, failure, bad call).
        health: how to probe the backend's health.
        binding: where the tool runs.
        source: the file (or object) it was loaded from, for error messages.
        sensitive: argument names whose values are masked in events (beyond the default list).
        effect: ``read`` or ``write``; a write from a customer turn is only ever proposed to the
            agent. Code-built specs default to ``write``, the safe side.
        approval_exempt: for a write, why it may run without an agent's approval (the pack's
            reason: e.g. it only sends a code to the customer's own registered phone).
        explain: for a write, what a call will do, per language (``{argument}`` and
            ``{argument_tail}`` placeholders; see :meth:`explanation`), shown to the agent and
            the customer when the write is proposed.
        owner_field: the top-level result field naming the record's owner; a call needs a
            customer in its context, and a record of another customer reads as ``not_found``
            (X3).
        not_found: HTTP statuses that mean "no such record": an answer, not a failure (X5).
        refusals: HTTP statuses that are business refusals (409…): an answer, not a failure.
        due: for a read, the date its record promises while still on its way (a parcel's
            ``eta``): a reply tells a date that has passed as passed.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    binding: BindingSpec
    response_format: Mapping[str, Any] | None = None
    timeout_s: float | None = None
    fallback: str = DEFAULT_FALLBACK
    health: HealthProbe = field(default_factory=HealthProbe)
    source: str = "<code>"
    sensitive: tuple[str, ...] = ()
    effect: Effect = "write"
    approval_exempt: str | None = None
    explain: Mapping[str, str] = field(default_factory=dict)
    owner_field: str | None = None
    not_found: tuple[int, ...] = ()
    refusals: tuple[int, ...] = ()
    due: DueDate | None = None

    def __post_init__(self) -> None:
        # Invariants every loader (YAML, OpenAPI, ``@tool``, MCP) gets: refused as a PackError
        # naming the source, the tool and the field.
        def refuse(message: str, field_name: str) -> PackError:
            return PackError(message, file=self.source, item=self.name, field=field_name)

        if self.effect not in ("read", "write"):
            raise refuse(f"must be 'read' or 'write', got {self.effect!r}", "effect")
        if self.approval_exempt is not None:
            if self.effect != "write":
                raise refuse("only a write tool can be exempt from approval", "approval_exempt")
            if not self.approval_exempt.strip():
                raise refuse("give the reason the write needs no approval", "approval_exempt")
        if self.explain:
            if self.effect != "write":
                raise refuse("only a write tool explains what it will do", "explain")
            names = set(self.parameters.get("properties", {}))
            for language, template in self.explain.items():
                if not isinstance(template, str) or not template.strip():
                    raise refuse("must be a non-empty text", f"explain.{language}")
                for placeholder in _PLACEHOLDER.findall(template):
                    if placeholder not in names and _tail_of(placeholder) not in names:
                        raise refuse(
                            f"{{{placeholder}}} is neither a parameter nor <parameter>_tail",
                            f"explain.{language}",
                        )
        for field_name, codes in (("not_found", self.not_found), ("refusals", self.refusals)):
            bad = [c for c in codes if not 400 <= c <= 599]
            if bad:
                raise refuse(f"HTTP statuses 400-599 only, got {bad}", field_name)
        both = set(self.not_found) & set(self.refusals)
        if both:
            raise refuse(f"{sorted(both)} cannot be both not_found and a refusal", "refusals")
        if self.due is not None:
            self._check_due(self.due, refuse)

    def _check_due(self, due: DueDate, refuse: Any) -> None:
        if self.effect != "read":
            raise refuse("only a read tool's record promises a date", "due")
        if not due.statuses:
            raise refuse("name the statuses under which the date is a promise", "due.while")
        properties = (self.response_format or {}).get("properties")
        for name, where in ((due.field, "due.date"), (due.status_field, "due.status")):
            if not isinstance(properties, Mapping) or name not in properties:
                raise refuse(f"names {name!r}, which is not a property of response_format", where)

    def explained_words(self) -> str:
        """The words :attr:`explain` says in every language, lower-cased, without its
        placeholders: what a call does, never what it was called with."""
        return " / ".join(_PLACEHOLDER.sub(" ", text) for text in self.explain.values()).lower()

    def explanation(self, arguments: Mapping[str, Any], language: str) -> str:
        """What a call with ``arguments`` will do, in ``language``.

        Falls back to another language of :attr:`explain`, then to the description. ``{name}``
        is the argument's value — masked (``*******78``) when the name looks sensitive (phone,
        code, password…) or is listed in :attr:`sensitive`; ``{name_tail}`` is the last four
        characters of argument ``name`` (``尾号 {phone_tail}``). A placeholder with no value
        stays as it is; nothing here raises.
        """
        template = self.explain.get(language) or next(iter(self.explain.values()), None)
        if template is None:
            return self.description
        values = dict(arguments)
        shown = mask_fields(values)
        for key in self.sensitive:
            if key in shown:
                shown[key] = mask_value(shown[key])

        def fill(match: re.Match[str]) -> str:
            key = match.group(1)
            value = values.get(key)
            if isinstance(value, float) and value.is_integer() and shown[key] == value:
                return str(int(value))  # an amount of 429.0 reads "429", as people write it
            if value is not None:
                return _in_language(str(shown[key]), language)
            base = _tail_of(key)
            if base is not None and values.get(base) is not None:
                return str(values[base])[-4:]
            return match.group(0)

        return _PLACEHOLDER.sub(fill, template)

    @property
    def deduplicated(self) -> bool:
        """A write the far side de-duplicates: an HTTP call that carries an idempotency key, so
        repeating it with the same key acts once."""
        http = self.binding.http
        return (
            http is not None
            and http.method.upper() in ("POST", "PUT", "PATCH")  # the methods that carry one
            and http.idempotency_field is not None
        )

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.parameters.get("required", ()))

    def effective_timeout_s(self, default_s: float) -> float:
        return self.timeout_s if self.timeout_s is not None else default_s

    def model_schema(self) -> dict[str, Any]:
        """The function definition sent to a model (OpenAI ``tools`` entry shape)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": _plain(self.parameters),
            },
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (API listing, ``tools list --json``)."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": _plain(self.parameters),
            "required": list(self.required),
            "response_format": _plain(self.response_format)
            if self.response_format is not None
            else None,
            "timeout_s": self.timeout_s,
            "fallback": self.fallback,
            "health": {"url": self.health.url, "timeout_s": self.health.timeout_s},
            "binding": self.binding.describe(),
            "source": self.source,
            "effect": self.effect,
            "approval_exempt": self.approval_exempt,
            "explain": dict(self.explain),
            "owner_field": self.owner_field,
            "not_found": list(self.not_found),
            "refusals": list(self.refusals),
            "due": (
                {
                    "date": self.due.field,
                    "status": self.due.status_field,
                    "while": list(self.due.statuses),
                }
                if self.due is not None
                else None
            ),
        }


def _tail_of(placeholder: str) -> str | None:
    """``phone_tail`` → ``phone``; ``None`` when the name is no ``<parameter>_tail``."""
    return placeholder[: -len("_tail")] if placeholder.endswith("_tail") else None


def _plain(value: Any) -> Any:
    """Deep-copy mappings/sequences into plain dicts/lists (specs may hold read-only views)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _in_language(value: str, language: str) -> str:
    """A value written in two languages, "中文 / English" (a workflow's default reason), as its
    part in ``language``; any other value as it is."""
    parts = value.split(" / ")
    if len(parts) != 2 or language not in ("zh", "en"):
        return value
    chinese = [p for p in parts if _HAN.search(p)]
    if len(chinese) != 1:
        return value
    return chinese[0] if language == "zh" else next(p for p in parts if p not in chinese)
