"""``hermes-desk bench <area>``: the measurements behind docs/benchmarks.md.

Each command prints progress to stderr-like lines and the figures as one JSON object at the end
(``--out FILE`` also writes them). Speed is measured here, never asserted in tests.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)

OutOption = Annotated[Path | None, typer.Option("--out", help="also write the figures here")]


def _machine() -> str:
    memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{os.cpu_count()} cores, {memory_gib:.0f} GiB, {platform.machine()}, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.1f} at start"
    )


def _emit(area: str, figures: dict[str, Any], out: Path | None, machine: str) -> None:
    document = {
        "area": area,
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine,
        "figures": figures,
    }
    text = json.dumps(document, ensure_ascii=False, indent=1, default=str)
    if out is not None:
        out.write_text(text + "\n", encoding="utf-8")
    typer.echo(text)


@app.command()
def sessions(
    redis_url: Annotated[
        str | None, typer.Option(help="Redis for the Redis figures ('' to skip)")
    ] = "redis://127.0.0.1:6379/15",
    out: OutOption = None,
) -> None:
    """Session get and turn-append latency per store, memory of 10,000 sessions, trim time."""
    from hermes_desk.bench.sessions import run_sessions_bench

    machine = _machine()
    _emit("sessions", run_sessions_bench(redis_url=redis_url or None), out, machine)


@app.command()
def tools(
    calls: Annotated[int, typer.Option(help="in-process calls for the overhead")] = 10_000,
    articles: Annotated[int, typer.Option(help="knowledge-base size")] = 10_000,
    out: OutOption = None,
) -> None:
    """Executor overhead per in-process call and knowledge-base search latency."""
    from hermes_desk.bench.tools import run_tools_bench

    machine = _machine()
    _emit("tools", run_tools_bench(calls=calls, articles=articles), out, machine)


@app.command()
def actions(
    proposals: Annotated[int, typer.Option(help="proposals approved per store")] = 2_000,
    redis_url: Annotated[
        str | None, typer.Option(help="Redis for the Redis figures ('' to skip)")
    ] = "redis://127.0.0.1:6379/15",
    out: OutOption = None,
) -> None:
    """Proposal → approval → executed overhead (no think time), per proposal store."""
    from hermes_desk.bench.actions import run_actions_bench

    machine = _machine()
    _emit("actions", run_actions_bench(proposals, redis_url or None), out, machine)


@app.command()
def privacy(
    rounds: Annotated[int, typer.Option(help="timed operations per figure")] = 2_000,
    out: OutOption = None,
) -> None:
    """Masking an utterance, a turn record and an event; the offline after-contact summary."""
    from hermes_desk.bench.privacy import run_privacy_bench

    machine = _machine()
    _emit("privacy", run_privacy_bench(rounds), out, machine)


@app.command()
def workflows(
    runs: Annotated[int, typer.Option(help="password resets per variant")] = 40,
    out: OutOption = None,
) -> None:
    """Engine overhead per step, password reset serial vs orchestrated (demo backend latencies)."""
    from hermes_desk.bench.workflows import run

    machine = _machine()
    _emit("workflows", run(runs), out, machine)


@app.command()
def memory(
    backend: Annotated[str, typer.Option(help="sqlite or postgres")] = "sqlite",
    facts: Annotated[int, typer.Option(help="facts to load")] = 1_000_000,
    users: Annotated[int, typer.Option(help="users they belong to")] = 100_000,
    dsn: Annotated[str, typer.Option(help="PostgreSQL DSN")] = "postgresql://127.0.0.1:5432/test",
    out: OutOption = None,
) -> None:
    """Notes look-up latency and write throughput at scale (SQLite WAL vs rollback, PostgreSQL)."""
    from hermes_desk.bench.memory import run_memory_bench

    if backend not in ("sqlite", "postgres"):
        raise typer.BadParameter("backend must be sqlite or postgres", param_hint="--backend")
    machine = _machine()
    _emit(
        "memory", run_memory_bench(backend=backend, facts=facts, users=users, dsn=dsn), out, machine
    )


@app.command()
def keyfacts(out: OutOption = None) -> None:
    """Precision and recall of the key-fact filter on the pack's labelled set."""
    from hermes_desk.bench.memory import evaluate_keyfacts

    machine = _machine()
    _emit("keyfacts", evaluate_keyfacts(), out, machine)


@app.command()
def llm(
    turns: Annotated[int, typer.Option(help="turns per measurement")] = 2_000,
    out: OutOption = None,
) -> None:
    """The LLM layer's own overhead per turn around an instant scripted model."""
    from hermes_desk.bench.llm import run_llm_bench

    machine = _machine()
    _emit("llm", run_llm_bench(turns=turns), out, machine)


@app.command()
def nlu(
    kind: Annotated[
        list[str] | None, typer.Option("--kind", help="classifier kinds (repeat); default: all")
    ] = None,
    data_dir: Annotated[
        Path, typer.Option(help="folder with clinc150/ and banking77/ JSONL")
    ] = Path("../shared/data"),
    public: Annotated[bool, typer.Option(help="include CLINC150 and BANKING77")] = True,
    min_in_scope: Annotated[
        float, typer.Option(help="threshold rule: validation in-scope accuracy to keep")
    ] = 0.91,
    out: OutOption = None,
) -> None:
    """Intent accuracy (CLINC150, BANKING77, the pack), conversations, latency."""
    from hermes_desk.bench.nlu import run

    if public and not (data_dir / "clinc150").is_dir():
        raise typer.BadParameter(f"no clinc150/ under {data_dir}", param_hint="--data-dir")
    kinds = tuple(kind) if kind else ("ensemble", "linear", "crf")
    machine = _machine()
    figures = run(kinds, data_dir, include_public=public, min_in_scope=min_in_scope)
    _emit("nlu", figures, out, machine)
