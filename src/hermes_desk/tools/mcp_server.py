"""Model Context Protocol server: the pack's tools and the notes look-up, for any MCP client.

Every registered tool is published with its own JSON Schema (``inputSchema``) and runs through
the :class:`~hermes_desk.tools.executor.ToolExecutor` (strict validation, breaker, events), so
an MCP client gets exactly the guarantees the turn pipeline gets. A failed call answers
``isError`` with the tool's fallback reply. ``customer_notes`` returns a customer's memory
notes when a look-up is wired in. Built on the official SDK's ``MCPServer``; ``mcp`` is
imported only when a server is built.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from hermes_desk.errors import MissingExtraError
from hermes_desk.tools.executor import ToolExecutor

__all__ = ["NOTES_TOOL", "NotesLookup", "build_mcp_server"]

NOTES_TOOL = "customer_notes"

#: ``(tenant, user_id) -> notes`` — e.g. ``MemoryService.notes``; items are ``str`` or have
#: ``to_dict()``.
NotesLookup = Callable[[str, str], Awaitable[Sequence[Any]]]

_NOTES_SCHEMA = {
    "type": "object",
    "properties": {
        "user_id": {"type": "string", "minLength": 1, "maxLength": 128},
        "tenant": {"type": "string", "minLength": 1, "maxLength": 64, "default": "default"},
    },
    "required": ["user_id"],
    "additionalProperties": False,
}


def build_mcp_server(
    executor: ToolExecutor,
    *,
    notes: NotesLookup | None = None,
    tools: Sequence[str] | None = None,
    name: str = "hermes-desk",
) -> Any:
    """An ``mcp.server.MCPServer`` publishing ``executor``'s tools (all, or only ``tools``).

    Run it with ``server.run("stdio")`` or ``server.run("streamable-http", host=..., port=...)``,
    or mount ``server.streamable_http_app()``.
    """
    try:
        from mcp.server import MCPServer
        from mcp.server.mcpserver.tools.base import Tool
        from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
        from mcp_types import CallToolResult, TextContent
        from pydantic import ConfigDict
    except ImportError as exc:
        raise MissingExtraError("the Model Context Protocol server", "mcp") from exc

    class _PassThrough(ArgModelBase):
        # The JSON Schema is the tool's own; the executor validates it strictly, so the SDK's
        # signature model only carries the arguments through untouched.
        model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

        def model_dump_one_level(self) -> dict[str, Any]:
            return dict(self.__pydantic_extra__ or {})

    calls = itertools.count(1)

    def text(value: Any) -> list[Any]:
        body = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return [TextContent(type="text", text=body)]

    def make_tool(tool_name: str) -> Callable[..., Awaitable[Any]]:
        async def run(**arguments: Any) -> Any:
            outcome = await executor.execute(
                {"name": tool_name, "arguments": arguments},
                request_id=f"mcp-{next(calls)}",
                allowed_tools=None,
            )
            if not outcome.ok:
                return CallToolResult(content=text(outcome.fallback or ""), is_error=True)
            structured = outcome.result if isinstance(outcome.result, dict) else None
            return CallToolResult(content=text(outcome.result), structured_content=structured)

        return run

    published: list[Any] = []
    wanted = None if tools is None else set(tools)
    for spec in executor.registry.specs():
        if wanted is not None and spec.name not in wanted:
            continue
        published.append(
            Tool(
                fn=make_tool(spec.name),
                name=spec.name,
                description=spec.description,
                parameters=spec.model_schema()["function"]["parameters"],
                fn_metadata=FuncMetadata(arg_model=_PassThrough),
                is_async=True,
            )
        )

    if notes is not None:
        lookup = notes

        async def customer_notes(**arguments: Any) -> Any:
            user_id = arguments.get("user_id")
            tenant = arguments.get("tenant", "default")
            if not isinstance(user_id, str) or not user_id or not isinstance(tenant, str):
                return CallToolResult(content=text("user_id must be a string"), is_error=True)
            items = await lookup(tenant, user_id)
            data = [n if isinstance(n, str) else n.to_dict() for n in items]
            return CallToolResult(content=text(data), structured_content={"notes": data})

        published.append(
            Tool(
                fn=customer_notes,
                name=NOTES_TOOL,
                description="客户备注 / a customer's notes: key facts from memory",
                parameters=_NOTES_SCHEMA,
                fn_metadata=FuncMetadata(arg_model=_PassThrough),
                is_async=True,
            )
        )
    return MCPServer(name, instructions="Hermes Desk customer-service tools.", tools=published)
