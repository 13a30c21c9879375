"""``hermes-desk bench <area>``: the measurements behind docs/benchmarks.md.

Each command prints progress to stderr-like lines and the figures as one JSON object at the end
(``--out FILE`` also writes them). Speed is measured here, never asserted in tests.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)

OutOption = Annotated[Path | None, typer.Option("--out", help="also write the figures here")]


def _emit(area: str, figures: dict[str, Any], out: Path | None) -> None:
    document = {
        "area": area,
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
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
    """Session get latency (in-process, Redis), memory of 10,000 sessions, trim time."""
    from hermes_desk.bench.sessions import run_sessions_bench

    _emit("sessions", run_sessions_bench(redis_url=redis_url or None), out)


@app.command()
def tools(
    calls: Annotated[int, typer.Option(help="in-process calls for the overhead")] = 10_000,
    articles: Annotated[int, typer.Option(help="knowledge-base size")] = 10_000,
    out: OutOption = None,
) -> None:
    """Executor overhead per in-process call and knowledge-base search latency."""
    from hermes_desk.bench.tools import run_tools_bench

    _emit("tools", run_tools_bench(calls=calls, articles=articles), out)


@app.command()
def workflows(
    runs: Annotated[int, typer.Option(help="password resets per variant")] = 40,
    out: OutOption = None,
) -> None:
    """Engine overhead per step, password reset serial vs orchestrated (demo backend latencies)."""
    from hermes_desk.bench.workflows import run

    _emit("workflows", run(runs), out)


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
    _emit("memory", run_memory_bench(backend=backend, facts=facts, users=users, dsn=dsn), out)


@app.command()
def keyfacts(out: OutOption = None) -> None:
    """Precision and recall of the key-fact filter on the pack's labelled set."""
    from hermes_desk.bench.memory import evaluate_keyfacts

    _emit("keyfacts", evaluate_keyfacts(), out)
