"""Tools: schema-first specs, strict parsing, validation, gating, circuit breakers, events.

YAML, OpenAPI, ``@tool`` and MCP are loaders that produce one :class:`ToolSpec`; the
:class:`ToolExecutor` runs a call through gating → parsing → argument validation → breaker →
binding (with a time limit) → result validation → event and metrics, and returns a
:class:`ToolResult` whose ``status`` says what happened. Outcomes are values, not exceptions.
"""

from hermes_desk.tools.binding import CallContext, PythonBinding, ToolBinding
from hermes_desk.tools.spec import BindingSpec, HealthProbe, HttpTarget, ToolSpec

__all__ = [
    "BindingSpec",
    "CallContext",
    "HealthProbe",
    "HttpTarget",
    "PythonBinding",
    "ToolBinding",
    "ToolSpec",
]
