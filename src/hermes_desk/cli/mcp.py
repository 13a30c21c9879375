"""``hermes-desk mcp serve``: publish the pack's tools over the Model Context Protocol."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from hermes_desk.cli.settings_option import load_settings
from hermes_desk.config import Settings

if TYPE_CHECKING:
    from hermes_desk.tools.executor import ToolExecutor
    from hermes_desk.tools.mcp_server import NotesLookup, ProposeWrite

__all__ = ["app", "build_server"]

app = typer.Typer(no_args_is_help=True)


def _notes_lookup(settings: Settings, pack_dir: Path) -> NotesLookup:
    """The customers' notes from the service's memory store (opened on first use, in the MCP
    server's own event loop)."""
    from hermes_desk.clock import SystemClock
    from hermes_desk.memory import KeyFactFilter, MemoryService, build_memory_store

    keyfacts = KeyFactFilter.from_pack(pack_dir) if (pack_dir / "keyfacts.yaml").exists() else None
    services: list[MemoryService] = []

    async def notes(tenant: str, user_id: str) -> list[Any]:
        if not services:
            store = build_memory_store(settings.memory, database=settings.database_path)
            services.append(
                MemoryService(store, settings.memory, clock=SystemClock(), keyfacts=keyfacts)
            )
        return list(await services[0].notes(tenant, user_id))

    return notes


def _proposals(settings: Settings, executor: ToolExecutor, language: str) -> ProposeWrite:
    """What a published write tool's call does: records a proposal in the service's proposal
    store (the data folder's SQLite, or Redis), where an agent approves or rejects it
    (``POST /v1/proposals/{id}/approve``); the write itself never runs here."""
    from hermes_desk.actions import ActionService, build_proposal_store
    from hermes_desk.clock import SystemClock
    from hermes_desk.events import LoggingSink
    from hermes_desk.masking import Masking

    services: list[ActionService] = []

    async def propose(tenant: str, user_id: str, tool: str, arguments: dict[str, Any]) -> Any:
        if not services:  # opened on first use, in the MCP server's own event loop
            store = build_proposal_store(settings.actions, data_dir=settings.service.data_dir)
            services.append(
                ActionService(
                    store=store,
                    tools=executor,
                    workflows=None,
                    settings=settings.actions,
                    clock=SystemClock(),
                    events=LoggingSink(),
                    masking=Masking(settings.privacy),
                )
            )
        proposal = await services[0].propose(
            tenant=tenant,
            user=user_id,
            session_id=None,
            tool=tool,
            arguments=arguments,
            why={"rule": "an MCP client called a write tool"},
            language=language,
        )
        return {
            "proposal_id": proposal.id,
            "status": "pending",
            "explanation": proposal.explanation,
            "expires_at": proposal.expires_at,
            "message": "waiting for a human agent's approval; nothing has been done yet",
        }

    return propose


def build_server(settings: Settings, pack: str | None = None) -> Any:
    """The MCP server of ``serve``: the pack's tools through an executor, the notes look-up,
    writes published when ``settings.mcp.publish_writes`` and proposed to an agent."""
    import httpx
    import yaml

    from hermes_desk.packs.loader import bundled_pack_path
    from hermes_desk.tools.assembly import load_pack_tools
    from hermes_desk.tools.breaker_store import build_breaker_store
    from hermes_desk.tools.executor import ToolExecutor
    from hermes_desk.tools.mcp_server import build_mcp_server

    chosen = pack or settings.service.pack
    pack_dir = Path(chosen) if Path(chosen).is_dir() else bundled_pack_path(chosen)
    client = httpx.AsyncClient(timeout=settings.tools.default_timeout_s)
    registry, _kb = load_pack_tools(
        pack_dir, variables={"backend_url": settings.service.backend_url}, client=client
    )
    # The service's breaker store: with Redis, the MCP server and the service share breakers.
    executor = ToolExecutor(
        registry, settings=settings.tools, store=build_breaker_store(settings.tools.breaker)
    )
    manifest = yaml.safe_load((pack_dir / "pack.yaml").read_text(encoding="utf-8")) or {}
    language = str((manifest.get("languages") or ["zh"])[0])
    return build_mcp_server(
        executor,
        notes=_notes_lookup(settings, pack_dir),
        publish_writes=settings.mcp.publish_writes,
        propose=_proposals(settings, executor, language),
    )


@app.command()
def serve(
    transport: Annotated[
        str, typer.Option("--transport", "-t", help="stdio (for a launching client) or http")
    ] = "stdio",
    port: Annotated[int, typer.Option(help="HTTP port (http transport)")] = 8765,
    host: Annotated[str, typer.Option(help="HTTP host (http transport)")] = "127.0.0.1",
    pack: Annotated[str | None, typer.Option(help="pack name or folder")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="settings YAML")] = None,
) -> None:
    """Serve the pack's tools (through the executor: validation, breaker, events) and the
    ``customer_notes`` look-up over MCP.

    Every tool names its customer (``user_id``, ``tenant``). Write tools are published only
    with ``mcp.publish_writes``, and a call of one proposes it to an agent, never runs it.
    With http the endpoint is ``http://HOST:PORT/mcp`` (streamable HTTP).
    """
    if transport not in ("stdio", "http"):
        typer.echo("error: --transport is stdio or http", err=True)
        raise typer.Exit(2)
    settings = load_settings(config)
    server = build_server(settings, pack)
    mode: Literal["stdio", "streamable-http"] = (
        "stdio" if transport == "stdio" else ("streamable-http")
    )
    if mode == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)
