"""Model Context Protocol server: the pack's tools and the notes look-up, for any MCP client.

The duties an MCP client gets are the turn pipeline's (SPEC §8):

* **Declared effects (X1).** Every published tool carries MCP annotations: ``readOnlyHint`` for
  reads; ``idempotentHint`` for reads and for writes the backend de-duplicates by idempotency
  key; ``destructiveHint`` for the other writes.
* **No write on a client's say-so (X2).** Write tools are published only when asked
  (``publish_writes``, the ``mcp.publish_writes`` setting), and calling one never executes it:
  the arguments are checked against the tool's schema and handed to the ``propose`` callback,
  whose answer (a proposal a human agent approves or rejects) is the tool result. Without a
  callback the call is refused (``isError``).
* **Ownership (X3).** Every tool's input schema names the customer: a required ``user_id`` and
  an optional ``tenant`` (default ``"default"``) are added where the tool does not take them,
  stripped from its arguments before the call, and passed as
  :class:`~hermes_desk.tools.binding.CallContext` ``customer``/``tenant`` — so another
  customer's order answers "not found", exactly as in a conversation.

Reads run through the :class:`~hermes_desk.tools.executor.ToolExecutor` (strict validation,
breaker, events). A business answer is not an error (X5): ``not_found`` and ``refused`` come
back as ``{"status": …}`` results; a failure answers ``isError`` with the tool's fallback reply.
``customer_notes`` returns a customer's memory notes when a look-up is wired in. Built on the
official SDK's ``MCPServer``; ``mcp`` is imported only when a server is built.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from hermes_desk.errors import MissingExtraError
from hermes_desk.tools.binding import CallContext
from hermes_desk.tools.executor import ToolExecutor, ToolStatus
from hermes_desk.tools.spec import ToolSpec

__all__ = [
    "CUSTOMER_FIELD",
    "NOTES_TOOL",
    "TENANT_FIELD",
    "NotesLookup",
    "ProposeWrite",
    "build_mcp_server",
    "published_schema",
]

NOTES_TOOL = "customer_notes"
CUSTOMER_FIELD = "user_id"
TENANT_FIELD = "tenant"
DEFAULT_TENANT = "default"

#: ``(tenant, user_id) -> notes`` — e.g. ``MemoryService.notes``; items are ``str`` or have
#: ``to_dict()``.
NotesLookup = Callable[[str, str], Awaitable[Sequence[Any]]]

#: ``(tenant, user_id, tool, arguments) -> proposal`` — records a write for a human agent to
#: approve and answers what the client should be told (e.g. ``{"proposal_id", "status":
#: "pending", "explanation"}``). It must not execute the write.
ProposeWrite = Callable[[str, str, str, dict[str, Any]], Awaitable[Mapping[str, Any]]]

_CUSTOMER_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "maxLength": 128,
    "description": "the customer (user id) the call is for; records of others read as not found",
}
_TENANT_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "maxLength": 64,
    "default": DEFAULT_TENANT,
    "description": "the customer's tenant",
}
_NOTES_SCHEMA = {
    "type": "object",
    "properties": {CUSTOMER_FIELD: _CUSTOMER_SCHEMA, TENANT_FIELD: _TENANT_SCHEMA},
    "required": [CUSTOMER_FIELD],
    "additionalProperties": False,
}
_NEEDS_APPROVAL = (
    "这个操作需要坐席审批后才能执行 / writes need a human agent's approval, and this server has "
    "no proposal service: nothing was done"
)


def published_schema(spec: ToolSpec) -> dict[str, Any]:
    """The tool's argument schema as published over MCP: its own, naming the customer.

    ``user_id`` (required) and ``tenant`` (optional) are added where the tool does not take
    them; a tool that takes ``user_id`` has it required.
    """
    schema: dict[str, Any] = spec.model_schema()["function"]["parameters"]
    properties = dict(schema.get("properties") or {})
    properties.setdefault(CUSTOMER_FIELD, dict(_CUSTOMER_SCHEMA))
    properties.setdefault(TENANT_FIELD, dict(_TENANT_SCHEMA))
    required = list(schema.get("required") or [])
    if CUSTOMER_FIELD not in required:
        required.append(CUSTOMER_FIELD)
    return {**schema, "properties": properties, "required": required}


def build_mcp_server(
    executor: ToolExecutor,
    *,
    notes: NotesLookup | None = None,
    tools: Sequence[str] | None = None,
    name: str = "hermes-desk",
    publish_writes: bool = False,
    propose: ProposeWrite | None = None,
) -> Any:
    """An ``mcp.server.MCPServer`` publishing ``executor``'s tools (all, or only ``tools``).

    Args:
        notes: the ``customer_notes`` look-up (not published without one).
        tools: publish only these tool names.
        publish_writes: publish write tools too (``mcp.publish_writes``); reads always are.
        propose: what a call of a published write does instead of executing it — records a
            proposal for a human agent and answers it. ``None``: such calls are refused.

    Run it with ``server.run("stdio")`` or ``server.run("streamable-http", host=..., port=...)``,
    or mount ``server.streamable_http_app()``.
    """
    try:
        from mcp.server import MCPServer
        from mcp.server.mcpserver.tools.base import Tool
        from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
        from mcp_types import CallToolResult, TextContent, ToolAnnotations
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

    def refuse(message: str) -> Any:
        return CallToolResult(content=text(message), is_error=True)

    def answer(value: Any) -> Any:
        structured = dict(value) if isinstance(value, Mapping) else None
        return CallToolResult(content=text(value), structured_content=structured)

    def customer_of(arguments: Mapping[str, Any]) -> tuple[str, str] | str:
        """``(tenant, user_id)``, or why the call does not name a customer."""
        user_id = arguments.get(CUSTOMER_FIELD)
        tenant = arguments.get(TENANT_FIELD, DEFAULT_TENANT)
        if not isinstance(user_id, str) or not 0 < len(user_id) <= 128:
            return "user_id must name the customer (a string of 1-128 characters)"
        if not isinstance(tenant, str) or not 0 < len(tenant) <= 64:
            return "tenant must be a string of 1-64 characters"
        return tenant, user_id

    def make_tool(spec: ToolSpec) -> Callable[..., Awaitable[Any]]:
        own = set(spec.parameters.get("properties") or {})
        stripped = {CUSTOMER_FIELD, TENANT_FIELD} - own

        async def run(**arguments: Any) -> Any:
            who = customer_of(arguments)
            if isinstance(who, str):
                return refuse(who)
            tenant, user_id = who
            tool_args = {k: v for k, v in arguments.items() if k not in stripped}
            if spec.effect == "write":
                return await proposal(spec, tenant, user_id, tool_args)
            request_id = f"mcp-{next(calls)}"
            outcome = await executor.execute(
                {"name": spec.name, "arguments": tool_args},
                request_id=request_id,
                allowed_tools=None,
                context=CallContext(request_id=request_id, customer=user_id, tenant=tenant),
            )
            if outcome.status is ToolStatus.NOT_FOUND:
                return answer({"status": "not_found", "message": "no such record"})
            if outcome.status is ToolStatus.REFUSED:
                return answer({"status": "refused", **(outcome.result or {})})
            if not outcome.ok:
                return refuse(outcome.fallback or "")
            return answer(outcome.result)

        return run

    async def proposal(spec: ToolSpec, tenant: str, user_id: str, arguments: dict[str, Any]) -> Any:
        entry = executor.registry.get(spec.name)
        problems = entry.arguments.problems(arguments) if entry is not None else ["unknown tool"]
        if problems:
            return refuse(f"invalid arguments: {'; '.join(problems)}")
        if propose is None:
            return refuse(_NEEDS_APPROVAL)
        return answer(await propose(tenant, user_id, spec.name, arguments))

    def annotations(spec: ToolSpec) -> Any:
        read = spec.effect == "read"
        idempotent = read or spec.deduplicated
        return ToolAnnotations(
            read_only_hint=read, destructive_hint=not idempotent, idempotent_hint=idempotent
        )

    published: list[Any] = []
    wanted = None if tools is None else set(tools)
    for spec in executor.registry.specs():
        if wanted is not None and spec.name not in wanted:
            continue
        if spec.effect == "write" and not publish_writes:
            continue
        published.append(
            Tool(
                fn=make_tool(spec),
                name=spec.name,
                description=spec.description,
                parameters=published_schema(spec),
                fn_metadata=FuncMetadata(arg_model=_PassThrough),
                is_async=True,
                annotations=annotations(spec),
            )
        )

    if notes is not None:
        lookup = notes

        async def customer_notes(**arguments: Any) -> Any:
            who = customer_of(arguments)
            if isinstance(who, str):
                return refuse(who)
            tenant, user_id = who
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
                annotations=ToolAnnotations(
                    read_only_hint=True, destructive_hint=False, idempotent_hint=True
                ),
            )
        )
    return MCPServer(name, instructions="Hermes Desk customer-service tools.", tools=published)
