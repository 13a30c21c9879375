"""``hermes-desk memory``: show a customer's notes and facts, review facts and long-term tags.

Works on the configured store (SQLite at ``--db`` or the settings' data directory, or
PostgreSQL when ``memory.store`` is ``postgres``). Every command is scoped by (tenant, user).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio
import typer

from hermes_desk.cli.settings_option import load_settings
from hermes_desk.errors import HermesError

if TYPE_CHECKING:
    from hermes_desk.memory import MemoryService

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)

T = TypeVar("T")

Tenant = Annotated[str, typer.Option(help="tenant of the user")]
Db = Annotated[Path | None, typer.Option(help="SQLite file (default: the data directory's)")]
Config = Annotated[Path | None, typer.Option(help="YAML settings file")]
User = Annotated[str, typer.Option("--user", help="the customer the fact belongs to")]
AsJson = Annotated[bool, typer.Option("--json", help="print JSON")]


@asynccontextmanager
async def _service(config: Path | None, db: Path | None) -> AsyncIterator[MemoryService]:
    from hermes_desk.clock import SystemClock
    from hermes_desk.memory import KeyFactFilter, MemoryService, build_memory_store

    settings = load_settings(config)
    memory_settings = settings.memory
    if db is not None:  # an explicit SQLite file wins over the configured store
        memory_settings = memory_settings.model_copy(update={"store": "sqlite"})
    store = build_memory_store(memory_settings, database=db or settings.database_path, pool_size=2)
    service = MemoryService(
        store, settings.memory, clock=SystemClock(), keyfacts=KeyFactFilter.bundled()
    )
    try:
        yield service
    finally:
        await service.close()


def _run(config: Path | None, db: Path | None, job: Callable[[MemoryService], Awaitable[T]]) -> T:
    async def main() -> T:
        async with _service(config, db) as service:
            return await job(service)

    try:
        return anyio.run(main)
    except HermesError as exc:
        typer.echo(f"error: {exc.message}", err=True)
        raise typer.Exit(1 if exc.code == "not_found" else 2) from exc


def _print(data: Any, as_json: bool, text: str) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2) if as_json else text)


@app.command()
def show(
    user: Annotated[str, typer.Argument(help="the customer")],
    tenant: Tenant = "default",
    all_facts: Annotated[bool, typer.Option("--all", help="every fact, any status")] = False,
    as_json: AsJson = False,
    db: Db = None,
    config: Config = None,
) -> None:
    """The notes an agent sees (or, with --all, every fact with its status and history)."""

    async def job(service: MemoryService) -> tuple[list[dict[str, Any]], list[str]]:
        if all_facts:
            facts = await service.facts(tenant, user)
            lines = [
                f"{f.id}  {f.status.value:<9} {f.key} = {json.dumps(f.value, ensure_ascii=False)}"
                f"  (confidence {f.confidence:.2f}, {len(f.history)} earlier)"
                for f in facts
            ]
            return [f.to_dict() for f in facts], lines
        notes = await service.notes(tenant, user)
        lines = [
            f"{n.fact_id}  {n.confidence:.2f}  {n.text}  ({n.age_s / 3600:.1f} h ago,"
            f" session {n.source_session or '-'})"
            for n in notes
        ]
        return [n.to_dict() for n in notes], lines

    data, lines = _run(config, db, job)
    _print(data, as_json, "\n".join(lines) if lines else "(nothing remembered)")


def _review(
    action: str, fact_id: str, user: str, tenant: str, db: Path | None, config: Path | None,
    as_json: bool, value: Any = None,
) -> None:  # fmt: skip
    async def job(service: MemoryService) -> dict[str, Any]:
        if action == "approve":
            outcome = await service.approve(tenant, user, fact_id)
        elif action == "reject":
            outcome = await service.reject(tenant, user, fact_id)
        elif action == "edit":
            outcome = await service.edit(tenant, user, fact_id, value)
        else:
            outcome = await service.delete(tenant, user, fact_id)
        assert outcome.fact is not None
        return outcome.fact.to_dict()

    fact = _run(config, db, job)
    _print(fact, as_json, f"{action}: {fact_id} ({fact['key']}) → {fact['status']}"
           if action != "delete" else f"deleted: {fact_id} ({fact['key']})")  # fmt: skip


@app.command()
def approve(
    fact_id: str, user: User, tenant: Tenant = "default", as_json: AsJson = False,
    db: Db = None, config: Config = None,
) -> None:  # fmt: skip
    """Sign a pending or conflicting fact: it becomes the active value of its key."""
    _review("approve", fact_id, user, tenant, db, config, as_json)


@app.command()
def reject(
    fact_id: str, user: User, tenant: Tenant = "default", as_json: AsJson = False,
    db: Db = None, config: Config = None,
) -> None:  # fmt: skip
    """Refuse a fact: it leaves the notes and stays in the record as rejected."""
    _review("reject", fact_id, user, tenant, db, config, as_json)


@app.command()
def edit(
    fact_id: str,
    value: Annotated[str, typer.Argument(help="the new value as JSON (plain text is a string)")],
    user: User, tenant: Tenant = "default", as_json: AsJson = False,
    db: Db = None, config: Config = None,
) -> None:  # fmt: skip
    """Set a fact's value (trusted: confidence 1); the old value goes to its history."""
    try:
        parsed: Any = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    _review("edit", fact_id, user, tenant, db, config, as_json, parsed)


@app.command()
def delete(
    fact_id: str, user: User, tenant: Tenant = "default", as_json: AsJson = False,
    db: Db = None, config: Config = None,
) -> None:  # fmt: skip
    """Delete a fact and its history."""
    _review("delete", fact_id, user, tenant, db, config, as_json)


@app.command()
def tags(
    user: Annotated[str, typer.Argument(help="the customer")],
    approve_tag: Annotated[
        str | None, typer.Option("--approve", help="write this candidate to long-term memory")
    ] = None,
    delete_tag: Annotated[str | None, typer.Option("--delete", help="remove this tag")] = None,
    tenant: Tenant = "default",
    as_json: AsJson = False,
    db: Db = None,
    config: Config = None,
) -> None:
    """List long-term tags (approved and candidates); approve or delete one."""

    async def job(service: MemoryService) -> list[dict[str, Any]]:
        if approve_tag:
            await service.approve_tag(tenant, user, approve_tag)
        if delete_tag:
            await service.delete_tag(tenant, user, delete_tag)
        return [t.to_dict() for t in await service.tags(tenant, user)]

    data = _run(config, db, job)
    lines = [f"{t['tag']} = {json.dumps(t['value'], ensure_ascii=False)}  ({t['status']})"
             for t in data]  # fmt: skip
    _print(data, as_json, "\n".join(lines) if lines else "(no tags)")


@app.command()
def sweep(db: Db = None, config: Config = None) -> None:
    """Archive every fact whose confidence decayed below the threshold (normally a job)."""

    async def job(service: MemoryService) -> int:
        return len(await service.sweep_decay())

    typer.echo(f"archived: {_run(config, db, job)}")
