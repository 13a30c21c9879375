"""Model Context Protocol client: the tools of configured MCP servers become Hermes Desk tools.

Each server (stdio command or streamable-HTTP URL, from ``LlmSettings.mcp_servers``) is listed
once; every remote tool becomes a :class:`~hermes_desk.tools.spec.ToolSpec` (its
``inputSchema`` as ``parameters``, its ``outputSchema`` as ``response_format``, a ``read``
effect only when its annotations say ``readOnlyHint: true``, else ``write``) paired with an
:class:`McpBinding`. Registered in a :class:`~hermes_desk.tools.registry.ToolRegistry`, they run
through the same executor as every other tool: gating, strict parsing, validation before and
after, the circuit breaker, events and metrics.

Each call opens its own MCP session (connect → call → close, all in the calling task), so a
server process that died is simply started (stdio) or reached (HTTP) again on the next call:
its tools come back without any reconnect logic, and no session outlives a cancelled call.
Servers that were down when the tools were first loaded are picked up by
:meth:`McpToolSource.refresh`. ``mcp`` is imported only here, lazily.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio

from hermes_desk.config import McpServerSettings
from hermes_desk.errors import (
    BackendError,
    BackendTimeoutError,
    BackendUnavailableError,
    FailureError,
    MissingExtraError,
)
from hermes_desk.tools.binding import CallContext
from hermes_desk.tools.registry import ToolRegistry
from hermes_desk.tools.spec import DEFAULT_FALLBACK, BindingSpec, Effect, ToolSpec

__all__ = [
    "McpBinding",
    "McpServerConnection",
    "McpToolSource",
    "mcp_tool_specs",
    "remote_effect",
]


def _import_client() -> Any:
    try:
        import mcp.client
    except ImportError as exc:
        raise MissingExtraError("Model Context Protocol servers", "mcp") from exc
    return mcp.client


class McpServerConnection:
    """How to reach one MCP server; every operation opens and closes its own session."""

    def __init__(self, settings: McpServerSettings) -> None:
        self.settings = settings

    @property
    def name(self) -> str:
        return self.settings.name

    def _target(self) -> Any:
        if self.settings.url is not None:
            return self.settings.url
        from mcp.client.stdio import StdioServerParameters

        command = self.settings.command or []
        env = {**os.environ, **self.settings.env} if self.settings.env else None
        return StdioServerParameters(command=command[0], args=list(command[1:]), env=env)

    @asynccontextmanager
    async def session(self, timeout_s: float | None = None) -> AsyncIterator[Any]:
        """An open ``mcp.client.Client`` (entered and left in the calling task)."""
        client_mod = _import_client()
        limit = timeout_s or self.settings.timeout_s
        async with client_mod.Client(self._target(), read_timeout_seconds=limit) as client:
            yield client

    async def _run(self, op: str, timeout_s: float, fn: Any) -> Any:
        """Connect, run ``fn(client)`` and close, all under one time limit."""
        try:
            with anyio.fail_after(timeout_s):
                async with self.session(timeout_s) as client:
                    return await fn(client)
        except TimeoutError as exc:
            raise BackendTimeoutError(
                f"MCP server {self.name}: {op} took over {timeout_s:g}s", server=self.name
            ) from exc
        except Exception as exc:
            raise _translate(exc, self.name) from exc

    async def list_tools(self) -> list[Any]:
        result = await self._run("list_tools", self.settings.timeout_s, lambda c: c.list_tools())
        return list(result.tools)

    async def call_tool(self, name: str, arguments: Mapping[str, Any], timeout_s: float) -> Any:
        result = await self._run(
            f"call {name}", timeout_s, lambda c: c.call_tool(name, dict(arguments))
        )
        return _result_value(result, self.name, name)

    async def ping(self, timeout_s: float) -> bool:
        try:
            # listing tools is the cheapest request every server answers in every protocol era
            await self._run("health", timeout_s, lambda c: c.list_tools())
        except FailureError:
            return False
        return True


def _translate(exc: Exception, server: str) -> FailureError:
    if isinstance(exc, FailureError):
        return exc
    if isinstance(exc, BaseExceptionGroup):  # raised out of the client's task group
        inner = exc.exceptions[0] if exc.exceptions else exc
        if isinstance(inner, Exception) and inner is not exc:
            return _translate(inner, server)
    if isinstance(exc, MissingExtraError):
        raise exc
    gone = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError)
    if isinstance(exc, gone) or type(exc).__name__ in {"ConnectError", "MCPError"}:
        return BackendUnavailableError(
            f"MCP server {server} is unreachable ({type(exc).__name__})", server=server
        )
    return BackendError(f"MCP server {server} failed: {type(exc).__name__}", server=server)


def _result_value(result: Any, server: str, tool: str) -> Any:
    raw = [getattr(c, "text", None) for c in getattr(result, "content", None) or []]
    texts: list[str] = [t for t in raw if isinstance(t, str)]
    if getattr(result, "is_error", False):
        # the server's message may quote arguments; keep it out of the error text
        raise BackendError(f"MCP tool {server}/{tool} reported an error", server=server)
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        return structured
    if len(texts) == 1:
        try:
            return json.loads(texts[0])
        except ValueError:
            return texts[0]
    return texts


@dataclass(frozen=True, slots=True)
class McpBinding:
    """A :class:`~hermes_desk.tools.binding.ToolBinding` for one remote MCP tool."""

    connection: McpServerConnection
    remote_name: str

    async def call(
        self, arguments: Mapping[str, Any], *, timeout_s: float, context: CallContext
    ) -> Any:
        return await self.connection.call_tool(self.remote_name, arguments, timeout_s)

    async def health(self, *, timeout_s: float) -> bool:
        return await self.connection.ping(timeout_s)


def remote_effect(tool: Any) -> Effect:
    """A remote tool reads only when its annotations say ``readOnlyHint: true`` (X1); no
    annotation, or any other value, is a write — the safe side."""
    annotations = getattr(tool, "annotations", None)
    return "read" if getattr(annotations, "read_only_hint", None) is True else "write"


def mcp_tool_specs(
    connection: McpServerConnection, tools: Sequence[Any]
) -> list[tuple[ToolSpec, McpBinding]]:
    """Specs and bindings for listed MCP tools (``mcp_types.Tool`` objects)."""
    settings = connection.settings
    out: list[tuple[ToolSpec, McpBinding]] = []
    for tool in tools:
        remote = str(tool.name)
        parameters = dict(getattr(tool, "input_schema", None) or {"type": "object"})
        parameters.setdefault("type", "object")
        output = getattr(tool, "output_schema", None)
        spec = ToolSpec(
            name=f"{settings.prefix or ''}{remote}",
            description=str(getattr(tool, "description", None) or remote),
            parameters=parameters,
            binding=BindingSpec(kind="mcp", options={"server": settings.name, "tool": remote}),
            response_format=dict(output) if output else None,
            timeout_s=settings.timeout_s,
            fallback=settings.fallback or DEFAULT_FALLBACK,
            source=f"mcp:{settings.name}",
            effect=remote_effect(tool),
        )
        out.append((spec, McpBinding(connection, remote)))
    return out


@dataclass
class McpToolSource:
    """Loads the tools of several MCP servers into a registry, and again when they come back.

    Attributes:
        servers: the configured servers.
        errors: the last load error per server that could not be listed (name → message).
    """

    servers: Sequence[McpServerSettings]
    errors: dict[str, str] = field(default_factory=dict)
    _loaded: set[str] = field(default_factory=set)

    async def refresh(self, registry: ToolRegistry) -> list[str]:
        """List every server not loaded yet and register its tools; returns the names added.

        A server that cannot be reached is recorded in :attr:`errors` and tried again on the
        next refresh; the others are unaffected.
        """
        added: list[str] = []
        for settings in self.servers:
            if settings.name in self._loaded:
                continue
            connection = McpServerConnection(settings)
            try:
                tools = await connection.list_tools()
            except FailureError as exc:
                self.errors[settings.name] = exc.message
                continue
            for spec, binding in mcp_tool_specs(connection, tools):
                if spec.name not in registry:
                    registry.add(spec, binding)
                    added.append(spec.name)
            self._loaded.add(settings.name)
            self.errors.pop(settings.name, None)
        return added
