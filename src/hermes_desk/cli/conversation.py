"""``hermes-desk demo`` and ``chat``: the whole chain in-process, printed turn by turn."""

from __future__ import annotations

import asyncio
import base64
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from hermes_desk.cli._backend import demo_backend_running
from hermes_desk.cli.settings_option import load_settings, show_progress, user_model_cache
from hermes_desk.config import Settings
from hermes_desk.errors import HermesError

__all__ = ["DEMO_SCRIPT", "chat", "demo", "save_picture"]

TENANT = "default"

#: (contact number, customer utterance); a new contact closes the previous session first.
DEMO_SCRIPT: tuple[tuple[int, str], ...] = (
    (1, "你好，我的订单202405201234到哪了？"),
    (1, "物流已经超过7天了，我很生气"),
    (1, "以后不要给我打电话，有事发短信就行"),
    (2, "这个东西好吃吗"),
    (2, "运费怎么算？"),
)


def _print_outcome(outcome: dict[str, Any]) -> None:
    intent = outcome.get("intent") or {}
    carried = " (carried over)" if intent.get("carried") else ""
    typer.echo(f"  intent     {intent.get('name')}  confidence {intent.get('confidence')}{carried}")
    act = f", dialogue act {outcome['dialogue_act']}" if outcome.get("dialogue_act") else ""
    typer.echo(f"  language   {outcome.get('language')}{act}")
    if outcome.get("slots"):
        typer.echo(f"  slots      {outcome['slots']}")
    if outcome.get("missing_slots"):
        typer.echo(f"  missing    {outcome['missing_slots']}")
    for call in outcome.get("tool_calls", []):
        typer.echo(f"  tool       {call['tool']} → {call['status']} in {call['latency_ms']:.1f} ms")
    if not outcome.get("tool_calls") and intent.get("out_of_scope"):
        typer.echo("  tool       none (out of scope: no tool may run)")
    workflow = outcome.get("workflow")
    if workflow:
        waiting = f", waiting for {workflow['waiting_for']}" if workflow.get("waiting_for") else ""
        typer.echo(f"  workflow   {workflow['name']} {workflow['status']}{waiting}")
        if workflow.get("image"):
            saved = save_picture(workflow["image"], workflow["id"])
            typer.echo(f"  picture    {saved}  (what the customer is shown: open it to answer)")
    for fact in outcome.get("key_facts", []):
        if fact.get("is_key_fact"):
            typer.echo(f"  key fact   {fact['key']} = {fact['value']}  (short-term)")
    suggestion = outcome.get("suggestion") or {}
    typer.echo(f"  suggestion [{suggestion.get('source')}] {suggestion.get('text')}")


def save_picture(data_url: str, name: str, folder: Path | None = None) -> Path:
    """Write a ``data:image/…;base64,…`` URL to a file (a terminal cannot show it) and return
    the file's path: ``<folder>/hermes-desk-<name>.<svg|png|…>``."""
    header, _, payload = data_url.partition(",")
    mime = header.removeprefix("data:").split(";")[0]
    if not mime.startswith("image/") or ";base64" not in header:
        raise ValueError("not a base64 data:image URL")
    suffix = mime.removeprefix("image/").split("+")[0] or "img"
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
    target = (folder or Path(tempfile.gettempdir())) / f"hermes-desk-{safe}.{suffix}"
    target.write_bytes(base64.b64decode(payload, validate=True))
    return target


def _print_notes(notes: list[dict[str, Any]]) -> None:
    if not notes:
        typer.echo("  notes      (none)")
    for note in notes:
        typer.echo(f"  note       {note['text']}  (confidence {note['confidence']:.2f})")


@contextmanager
def _demo_settings(config: Path | None, data_dir: Path | None) -> Iterator[Settings]:
    if data_dir is not None:
        yield load_settings(config, service={"data_dir": data_dir})
        return
    with tempfile.TemporaryDirectory(prefix="hermes-demo-") as tmp:
        settings = load_settings(config, service={"data_dir": Path(tmp)})
        if settings.nlu.model_dir is None:
            nlu = settings.nlu.model_copy(update={"model_dir": user_model_cache()})
            settings = settings.model_copy(update={"nlu": nlu})
        yield settings


async def _run_demo(settings: Settings, user: str) -> None:
    from hermes_desk.runtime import build_runtime

    runtime = build_runtime(settings)
    await runtime.start()
    try:
        contact = 0
        session_id = ""
        for number, text in DEMO_SCRIPT:
            if number != contact:
                if session_id:
                    await runtime.sessions.close(TENANT, user, session_id)
                    typer.echo("\n— the customer hangs up; the session is closed and archived —")
                session = await runtime.sessions.create(TENANT, user)
                session_id, contact = session.id, number
                typer.echo(f"\n=== contact {number}: customer {user}, session {session_id}")
                notes = await runtime.memory.notes(TENANT, user)
                _print_notes([n.to_dict() for n in notes])
            typer.echo(f"\ncustomer> {text}")
            outcome = await runtime.assistant.turn(TENANT, user, session_id, text)
            _print_outcome(outcome.to_dict())
        await runtime.sessions.close(TENANT, user, session_id)
    finally:
        await runtime.stop()


def demo(
    config: Annotated[Path | None, typer.Option(help="YAML settings file")] = None,
    data_dir: Annotated[
        Path | None, typer.Option(help="keep the demo's data here (default: a temporary folder)")
    ] = None,
    user: Annotated[str, typer.Option(help="the demo customer")] = "u1001",
) -> None:
    """Run a scripted Chinese conversation, printed turn by turn."""
    show_progress()
    with _demo_settings(config, data_dir) as settings:
        typer.echo("Hermes Desk demo — offline responder, embedded stores, demo backend")
        with demo_backend_running(settings.service.backend_url, quiet=True):
            asyncio.run(_run_demo(settings, user))


async def _run_chat(settings: Settings, user: str) -> None:
    from hermes_desk.runtime import build_runtime

    runtime = build_runtime(settings)
    await runtime.start()
    try:
        session, resumed = await runtime.sessions.open_or_resume(TENANT, user)
        typer.echo(f"session {session.id} for {user}{' (resumed)' if resumed else ''}")
        _print_notes([n.to_dict() for n in await runtime.memory.notes(TENANT, user)])
        typer.echo("type what the customer says; an empty line or Ctrl-D ends the contact")
        loop = asyncio.get_running_loop()
        while True:
            typer.echo("customer> ", nl=False)
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line.strip():
                break
            try:
                outcome = await runtime.assistant.turn(TENANT, user, session.id, line)
            except HermesError as exc:
                typer.echo(f"  error      {exc}")
                continue
            _print_outcome(outcome.to_dict())
        await runtime.sessions.close(TENANT, user, session.id)
        typer.echo("session closed")
    finally:
        await runtime.stop()


def chat(
    config: Annotated[Path | None, typer.Option(help="YAML settings file")] = None,
    user: Annotated[str, typer.Option(help="the customer you play")] = "u1001",
) -> None:
    """Talk to the assistant as the customer (offline unless a model chain is configured)."""
    settings = load_settings(config)
    show_progress()
    with demo_backend_running(settings.service.backend_url, quiet=True):
        asyncio.run(_run_chat(settings, user))
