"""``hermes-desk bench <area>``: the measurements behind docs/benchmarks.md.

Each command prints progress to stderr-like lines and the figures as one JSON object at the end
(``--out FILE`` also writes them). Speed is measured here, never asserted in tests.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import time
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)

OutOption = Annotated[Path | None, typer.Option("--out", help="also write the figures here")]
RedisOption = Annotated[str | None, typer.Option(help="Redis for the Redis figures ('' to skip)")]
# The cluster options of `bench load` and `bench turn-cpu`.
StoresOption = Annotated[
    str, typer.Option(help="embedded (SQLite, one worker) or shared (Redis + PostgreSQL)")
]
SharedRedisOption = Annotated[
    str | None, typer.Option(help="Redis for --stores shared (default: a private one)")
]
SharedPostgresOption = Annotated[
    str | None, typer.Option(help="PostgreSQL for memory with --stores shared")
]
ModelDirOption = Annotated[
    Path | None, typer.Option(help="trained intent models to reuse (HERMES_NLU__MODEL_DIR)")
]


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
    redis_url: RedisOption = "redis://127.0.0.1:6379/15",
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
    redis_url: RedisOption = "redis://127.0.0.1:6379/15",
    out: OutOption = None,
) -> None:
    """Proposal → approval → executed overhead (no think time), per proposal store."""
    from hermes_desk.bench.actions import run_actions_bench

    machine = _machine()
    _emit("actions", run_actions_bench(proposals, redis_url or None), out, machine)


@app.command()
def feedback(
    events: Annotated[int, typer.Option(help="customer turns whose suggestion is counted")] = 5_000,
    redis_url: RedisOption = "redis://127.0.0.1:6379/15",
    out: OutOption = None,
) -> None:
    """Suggestion feedback: the per-turn ``shown`` write and the report query, per store."""
    from hermes_desk.bench.feedback import run_feedback_bench

    machine = _machine()
    _emit("feedback", run_feedback_bench(events, redis_url or None), out, machine)


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
def keyfacts(
    out: OutOption = None,
    pack: Annotated[
        Path | None, typer.Option(help="pack folder (default: the bundled ecommerce pack)")
    ] = None,
) -> None:
    """Precision and recall of the key-fact filter, and of what is remembered, on each of the
    pack's labelled sets, English and Chinese apart."""
    from hermes_desk.bench.memory import evaluate_keyfact_sets

    machine = _machine()
    _emit("keyfacts", evaluate_keyfact_sets(pack), out, machine)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@app.command()
def replies(
    out: OutOption = None,
    data: Annotated[
        Path | None, typer.Option(help="labelled conversations (default: the pack's set)")
    ] = None,
    config: Annotated[Path | None, typer.Option(help="YAML settings file")] = None,
) -> None:
    """Labelled conversations through the whole chain against the demo back office; the
    replies checked: language, no false "done", rejected codes named, closings closed."""
    import asyncio
    import tempfile

    from hermes_desk.bench.replies import run_replies
    from hermes_desk.cli._backend import demo_backend_running
    from hermes_desk.cli.settings_option import load_settings, show_progress, user_model_cache

    show_progress()
    machine = _machine()
    with tempfile.TemporaryDirectory(prefix="hermes-bench-replies-") as tmp:
        # a back office of its own, on a free port: fresh state, no other run's codes
        backend = f"http://127.0.0.1:{_free_port()}"
        settings = load_settings(config, service={"data_dir": Path(tmp), "backend_url": backend})
        if settings.nlu.model_dir is None:
            nlu = settings.nlu.model_copy(update={"model_dir": user_model_cache()})
            settings = settings.model_copy(update={"nlu": nlu})
        with demo_backend_running(settings.service.backend_url, quiet=True, reuse=False):
            figures = asyncio.run(run_replies(settings, data))
    _emit("replies", figures, out, machine)


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
def sentiment(
    data_dir: Annotated[
        Path, typer.Option(help="folder with sentiment_zh/ (train/test JSONL)")
    ] = Path("../shared/data"),
    reviews: Annotated[bool, typer.Option(help="include the sentiment_zh reviews")] = True,
    combined: Annotated[
        bool, typer.Option(help="also train on pack turns + reviews (sentiment.extra_corpus)")
    ] = False,
    rounds: Annotated[int, typer.Option(help="latency rounds over the held-out turns")] = 20,
    out: OutOption = None,
) -> None:
    """Sentiment accuracy (pack turns, sentiment_zh reviews), latency, alert precision/recall."""
    from hermes_desk.bench.sentiment import run

    if reviews and not (data_dir / "sentiment_zh").is_dir():
        raise typer.BadParameter(f"no sentiment_zh/ under {data_dir}", param_hint="--data-dir")
    machine = _machine()
    figures = run(data_dir, reviews=reviews, combined=combined, rounds=rounds)
    _emit("sentiment", figures, out, machine)


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


def _numbers(text: str, name: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise typer.BadParameter(f"{text!r} is not a comma-separated list of numbers") from exc
    if not values or any(v < 0 for v in values):
        raise typer.BadParameter(f"{text!r}: give one or more numbers ≥ 0", param_hint=name)
    return values


def _check_stores(stores: str) -> None:
    if stores not in ("embedded", "shared"):
        raise typer.BadParameter("stores must be embedded or shared", param_hint="--stores")


def _model_dir(given: Path | None) -> Path | None:
    """The trained models to reuse: the option, else HERMES_NLU__MODEL_DIR, else none."""
    env = os.environ.get("HERMES_NLU__MODEL_DIR")
    return given or (Path(env) if env else None)


@app.command("turn-cpu")
def turn_cpu(
    conversations: Annotated[
        int, typer.Option(help="conversations whose turns are measured")
    ] = 600,
    clients: Annotated[int, typer.Option(help="concurrent clients, one conversation each")] = 20,
    stores: StoresOption = "embedded",
    redis_url: SharedRedisOption = None,
    postgres_dsn: SharedPostgresOption = None,
    model_dir: ModelDirOption = None,
    workdir: Annotated[Path | None, typer.Option(help="folder for data and logs")] = None,
    profile: Annotated[
        bool, typer.Option("--profile", help="py-spy the worker while the turns run")
    ] = False,
    runs: Annotated[int, typer.Option(help="measure this many times, each on a fresh worker")] = 1,
    pin: Annotated[
        bool,
        typer.Option(
            "--pin", help="the worker alone on one core, the backend and the clients on the rest"
        ),
    ] = False,
    tree: Annotated[
        Path | None,
        typer.Option(
            help="run the worker from another checkout's hermes_desk (its src/ first on "
            "PYTHONPATH), with this tree's driver and backend"
        ),
    ] = None,
    against_python: Annotated[
        str | None,
        typer.Option(
            help="measure a second worker on this interpreter at the same time, both pinned to "
            "one core, and give the ratio of the two (its environment needs the dependencies)"
        ),
    ] = None,
    against_tree: Annotated[
        Path | None,
        typer.Option(
            help="the same, the second worker running another checkout's hermes_desk (its "
            "src/ first on PYTHONPATH)"
        ),
    ] = None,
    out: OutOption = None,
) -> None:
    """CPU per customer turn on one worker: the sessions opened first, then only turns (the
    article's mix, no think time) from concurrent clients; the worker's CPU over the turns.
    With --runs N, every run's figure, their median and the least. With --against-python or
    --against-tree, two workers side by side on one core and the ratio of their figures (a
    series alternates which starts first, and gives the ratios' geometric mean). With --pin,
    each run also says how fast the worker's core ran (host_speed)."""
    from hermes_desk.bench.turn_cpu import Rival, run_turn_cpu, series_figures, summary_line

    _check_stores(stores)
    if conversations < 1 or clients < 1:
        raise typer.BadParameter("give at least one conversation and one client")
    if runs < 1:
        raise typer.BadParameter("give at least one run", param_hint="--runs")
    if against_python is not None or against_tree is not None:
        if profile:
            # py-spy on one of two workers sharing a core would profile half a measurement.
            raise typer.BadParameter(
                "--profile is for one worker, not a paired run", param_hint="--profile"
            )
        if tree is not None:
            raise typer.BadParameter(
                "--tree runs one worker; a paired run takes --against-tree", param_hint="--tree"
            )
        _turn_cpu_paired(
            against_python, against_tree, stores=stores, conversations=conversations,
            clients=clients, model_dir=model_dir, workdir=workdir, runs=runs, out=out,
        )  # fmt: skip
        return
    try:
        Rival(source=tree).package_root()
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--tree") from exc
    machine = _machine()
    each = []
    for run in range(1, runs + 1):
        if runs > 1:
            typer.echo(f"run {run} of {runs}", err=True)
        figures = run_turn_cpu(
            conversations=conversations,
            clients=clients,
            stores=stores,
            redis_url=redis_url,
            postgres_dsn=postgres_dsn,
            model_dir=_model_dir(model_dir),
            workdir=workdir / f"run-{run}" if workdir is not None and runs > 1 else workdir,
            profile=profile,
            pin=pin,
            tree=tree,
            progress=lambda line: typer.echo(line, err=True),
        )
        typer.echo(summary_line(figures), err=True)
        each.append(figures)
    figures = each[0] if runs == 1 else series_figures(each)
    _emit("turn-cpu", figures, out, machine)
    if figures["turn_errors"]:
        raise typer.Exit(1)


def _turn_cpu_paired(
    python: str | None, tree: Path | None, *, stores: str, conversations: int, clients: int,
    model_dir: Path | None, workdir: Path | None, runs: int, out: Path | None,
) -> None:  # fmt: skip
    from hermes_desk.bench.turn_cpu import Rival, pair_series, run_paired

    if stores != "embedded":
        raise typer.BadParameter("a paired run is on the embedded defaults", param_hint="--stores")
    if python is not None and shutil.which(python) is None:
        raise typer.BadParameter(
            f"{python} is not an interpreter here", param_hint="--against-python"
        )
    rival = Rival(python=shutil.which(python) if python else None, source=tree)
    try:
        rival.package_root()
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--against-tree") from exc
    if len(os.sched_getaffinity(0)) < 2:
        raise typer.BadParameter(
            "a paired run needs two cores (the workers on one, the clients on another)"
        )
    machine = _machine()
    each = []
    for run in range(1, runs + 1):
        typer.echo(f"paired run {run} of {runs}", err=True)
        figures = run_paired(
            rival, conversations=conversations, clients=clients, model_dir=_model_dir(model_dir),
            workdir=workdir / f"run-{run}" if workdir is not None else None,
            rival_first=run % 2 == 0, progress=lambda line: typer.echo(line, err=True),
        )  # fmt: skip
        typer.echo(
            f"this tree {figures['this']['cpu_ms_per_turn']} ms, rival "
            f"{figures['rival_figures']['cpu_ms_per_turn']} ms per turn: "
            f"ratio {figures['rival_to_this']}",
            err=True,
        )
        each.append(figures)
    _emit("turn-cpu-paired", pair_series(each), out, machine)
    if any(f["turn_errors"] for f in each):
        raise typer.Exit(1)


@app.command()
def load(
    users: Annotated[
        str, typer.Option(help="simulated agents; several (50,100,200) run one step each")
    ] = "50",
    duration: Annotated[float, typer.Option(help="seconds per step")] = 60.0,
    workers: Annotated[
        str,
        typer.Option(help="serve workers; several (1,2,3) run one step each behind nginx"),
    ] = "1",
    stores: StoresOption = "embedded",
    think: Annotated[str, typer.Option(help="customer think time 'mean,sd' in seconds")] = "3,1",
    approve: Annotated[str, typer.Option(help="agent's think time before an approval")] = "2,0.5",
    ws_share: Annotated[float, typer.Option(help="share of conversations over WebSocket")] = 0.5,
    conversations: Annotated[
        int, typer.Option(help="at most this many conversations per step (0: no limit)")
    ] = 0,
    customers: Annotated[int, typer.Option(help="customers in the demo backend's data")] = 300,
    redis_url: SharedRedisOption = None,
    postgres_dsn: SharedPostgresOption = None,
    model_dir: ModelDirOption = None,
    workdir: Annotated[Path | None, typer.Option(help="folder for data, logs, ledgers")] = None,
    profile: Annotated[
        bool, typer.Option("--profile", help="py-spy the first worker through each step")
    ] = False,
    window: Annotated[
        float,
        typer.Option(
            help="soak: cut each step into windows of this many seconds (turns, latency, worker "
            "RSS and fds, Redis and PostgreSQL sizes per window; growth per hour); 0: none"
        ),
    ] = 0.0,
    out: OutOption = None,
) -> None:
    """A contact center's load: Locust agents holding whole conversations (the article's mix),
    over HTTP and the session WebSocket, against 1..N workers; lost turns and twice-run writes
    are checked at the end."""
    from hermes_desk.bench.load import LoadStep, run_load, window_table

    _check_stores(stores)
    counts = [int(v) for v in _numbers(users, "--users")]
    pool = [int(v) for v in _numbers(workers, "--workers")]
    if window < 0 or (window and window > duration):
        raise typer.BadParameter(
            "give 0 or a window no longer than --duration", param_hint="--window"
        )
    think_pair = [*_numbers(think, "--think"), 0.0]
    approve_pair = [*_numbers(approve, "--approve"), 0.0]
    if len(pool) > 1:
        steps = [LoadStep(counts[0], duration, n) for n in pool]
    else:
        steps = [LoadStep(n, duration, pool[0]) for n in counts]
    machine = _machine()
    figures = run_load(
        steps=steps,
        stores=stores,
        workers=max(pool),
        think=(think_pair[0], think_pair[1]),
        approve_think=(approve_pair[0], approve_pair[1]),
        ws_share=ws_share,
        conversations=conversations,
        customers=customers,
        redis_url=redis_url,
        postgres_dsn=postgres_dsn,
        balancer=True if len(pool) > 1 or max(pool) > 1 else None,
        model_dir=_model_dir(model_dir),
        workdir=workdir,
        profile=profile,
        window_s=window,
        progress=lambda line: typer.echo(line, err=True),
    )
    _emit("load", figures, out, machine)
    for step in figures["steps"]:
        if step.get("windows"):
            typer.echo(f"\n{step['users']} agents, {step['workers']} worker(s):", err=True)
            typer.echo(window_table(step), err=True)
    if figures["lost_turns"] or figures["writes_executed_twice"]:
        raise typer.Exit(1)
