"""Tools: schema-first specs, strict parsing, validation, gating, circuit breakers, events.

YAML, OpenAPI, ``@tool`` and MCP are loaders that produce one :class:`ToolSpec`; the
:class:`ToolExecutor` runs a call through gating → parsing → argument validation → breaker →
binding (with a time limit) → result validation → event and metrics, and returns a
:class:`ToolResult` whose ``status`` says what happened. Outcomes are values, not exceptions.

Every tool declares its :data:`Effect` (``read`` or ``write``, SPEC §8 X1); a declared business
answer (``not_found``, ``refused``) is an answer, not a fault (X5); a tool naming its record's
owner is checked against the call's customer (X3).
"""

from hermes_desk.tools.assembly import build_registry, load_pack_tools
from hermes_desk.tools.backend_http import BackendHttp
from hermes_desk.tools.binding import CallContext, PythonBinding, ToolBinding
from hermes_desk.tools.breaker import BreakerPolicy, BreakerRecord, BreakerState
from hermes_desk.tools.breaker_store import (
    BreakerStateStore,
    MemoryBreakerStore,
    build_breaker_store,
)
from hermes_desk.tools.decorator import DecoratedTool, tool
from hermes_desk.tools.executor import ToolExecutor, ToolResult, ToolStatus
from hermes_desk.tools.gating import IntentGate
from hermes_desk.tools.http_binding import HttpBinding
from hermes_desk.tools.kb import KbHit, KnowledgeBase
from hermes_desk.tools.metrics import ToolMetrics
from hermes_desk.tools.openapi import OpenApiTools, load_openapi, to_json_schema
from hermes_desk.tools.parsing import ParseFailure, ToolCall, parse_tool_call
from hermes_desk.tools.registry import RegisteredTool, ToolRegistry
from hermes_desk.tools.spec import (
    DEFAULT_FALLBACK,
    BindingSpec,
    Effect,
    HealthProbe,
    HttpTarget,
    ToolSpec,
)
from hermes_desk.tools.yaml_loader import load_tool_specs, parse_tool_specs
from hermes_desk.validation import SchemaValidator

__all__ = [
    "DEFAULT_FALLBACK",
    "BackendHttp",
    "BindingSpec",
    "BreakerPolicy",
    "BreakerRecord",
    "BreakerState",
    "BreakerStateStore",
    "CallContext",
    "DecoratedTool",
    "Effect",
    "HealthProbe",
    "HttpBinding",
    "HttpTarget",
    "IntentGate",
    "KbHit",
    "KnowledgeBase",
    "MemoryBreakerStore",
    "OpenApiTools",
    "ParseFailure",
    "PythonBinding",
    "RegisteredTool",
    "SchemaValidator",
    "ToolBinding",
    "ToolCall",
    "ToolExecutor",
    "ToolMetrics",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "ToolStatus",
    "build_breaker_store",
    "build_registry",
    "load_openapi",
    "load_pack_tools",
    "load_tool_specs",
    "parse_tool_call",
    "parse_tool_specs",
    "to_json_schema",
    "tool",
]
