"""A contact center's load: Locust agents against real workers, with the checks that matter.

``hermes-desk bench load`` (and ``make load``) lays out a cluster on 127.0.0.1
(:mod:`hermes_desk.bench.load_cluster`), runs the agents of :mod:`hermes_desk.bench.locustfile`
in a headless Locust process for each step (a number of agents, or a number of workers behind
the load balancer), and then checks what the agents were told against what was kept:

- every answered turn is in its session's transcript at the index it was answered with — the
  live session, or the archive once it closed (``lost_turns`` must be 0);
- no write ran twice for one idempotency key (the demo backend's request log).

Figures per step: turns answered and per second, turn latency p50/p95/p99 (by conversation
kind and transport), failed requests, CPU seconds of the workers per turn, their memory.
Everything is bounded: each step runs for ``duration_s`` (plus the time agents get to finish
their conversation) and optionally at most ``conversations`` conversations.

A soak is a long step cut into windows (``window_s``, e.g. every 5 minutes): per window the
turns answered and their latency, the workers' memory and open file descriptors and, on the
shared stores, Redis's ``used_memory`` and the PostgreSQL database's size — and from the windows
the growth of each per hour (a least-squares slope).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from hermes_desk.api.security import DEFAULT_TENANT
from hermes_desk.bench.load_cluster import (
    Cluster,
    build_cluster,
    cpu_seconds,
    open_fds,
    postgres_database_size,
    redis_used_memory,
    rss_bytes,
)
from hermes_desk.sessions import SessionArchive, SqliteSessionArchive
from hermes_desk.sessions.postgres_archive import PostgresSessionArchive
from hermes_desk.storage import SqliteDatabase

__all__ = [
    "LoadStep",
    "check_transcripts",
    "ledger_records",
    "locust_totals",
    "per_hour",
    "percentile",
    "profile_top",
    "run_load",
    "run_locust",
    "start_locust",
    "window_figures",
    "window_table",
    "writes_executed",
]

LOCUSTFILE = Path(__file__).with_name("locustfile.py")
WRITES = frozenset(
    {"send_sms", "reset_password", "update_password", "create_return", "issue_refund",
     "create_ticket", "add_ticket_note"}
)  # fmt: skip
#: how long agents get to finish the conversation they are in when a step's time is up
STOP_TIMEOUT_S = 60


@dataclass(frozen=True)
class LoadStep:
    """One Locust run: ``users`` agents, for ``duration_s``, against ``workers`` workers."""

    users: int
    duration_s: float
    workers: int = 1


def profile_top(path: Path, n: int = 15) -> dict[str, list[tuple[str, float]]]:
    """The top of a py-spy ``raw`` (collapsed stacks) profile: share of samples spent in each
    function itself (``self``) and under it (``total``), in per cent."""
    own: collections.Counter[str] = collections.Counter()
    under: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [_frame(f) for f in stack.split(";")]
        frames = [f for f in frames if f]
        if not frames:
            continue
        samples += int(count)
        own[frames[-1]] += int(count)
        for frame in set(frames):
            under[frame] += int(count)

    def top(counter: collections.Counter[str]) -> list[tuple[str, float]]:
        # Frames under which nearly everything runs (the event loop, the CLI) say nothing.
        telling = [(k, c) for k, c in counter.most_common() if c < 0.97 * samples]
        return [(name, round(100 * c / max(samples, 1), 1)) for name, c in telling[:n]]

    return {"samples": [("all", float(samples))], "self": top(own), "total": top(under)}


def _frame(raw: str) -> str:
    """``function (path/to/module.py:12)`` → ``function (module.py)``; thread names dropped."""
    name, _, where = raw.partition(" (")
    if not where:
        return ""
    file = where.rsplit(":", 1)[0].rstrip(")")
    parts = Path(file).parts
    short = "/".join(parts[-2:]) if "site-packages" in parts or "hermes_desk" in parts else file
    return f"{name} ({short})"


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return round(ordered[rank], 1)


def ledger_records(path: Path, *, partial: bool = False) -> list[dict[str, Any]]:
    """The ledger's records. ``partial``: the agents are still writing it, so a last line not
    yet complete is left for the next read."""
    if not path.exists():
        return []
    records = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            if partial and not line.endswith("\n"):
                break
            records.append(json.loads(line))
    return records


def window_figures(
    records: Sequence[Mapping[str, Any]], start: float, end: float
) -> dict[str, Any]:
    """Turns answered in ``[start, end)`` of the ledger, and their latency."""
    turns = [r for r in records if r["kind"] == "turn" and start <= r["at"] < end]
    latencies = [r["ms"] for r in turns]
    return {
        "turns": len(turns),
        "turns_per_s": round(len(turns) / max(end - start, 1e-9), 1),
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "turn_failures": sum(1 for r in records if r["kind"] == "fail" and start <= r["at"] < end),
    }


def per_hour(points: Sequence[tuple[float, float]]) -> float | None:
    """Least-squares slope of ``(seconds, value)`` points, per hour; None under two points."""
    if len(points) < 2:
        return None
    mean_t = statistics.fmean(t for t, _ in points)
    mean_v = statistics.fmean(v for _, v in points)
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    if spread == 0:
        return None
    slope = sum((t - mean_t) * (v - mean_v) for t, v in points) / spread
    return round(slope * 3600, 2)


def window_table(step: Mapping[str, Any]) -> str:
    """The step's windows as a Markdown table, then the growth per hour."""
    windows = step.get("windows") or []
    if not windows:
        return ""
    lines = [
        "| window | turns | turns/s | p50 | p95 | turn failures | worker RSS | open fds "
        "| Redis used_memory | PostgreSQL size | load |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def mib(value: float | None) -> str:
        return "—" if value is None else f"{value:g} MiB"

    def ms(value: float | None) -> str:
        return "—" if value is None else f"{value:g} ms"

    for w in windows:
        lines.append(
            f"| {w['from_s'] / 60:g}–{w['to_s'] / 60:g} min | {w['turns']} | {w['turns_per_s']} "
            f"| {ms(w['p50_ms'])} | {ms(w['p95_ms'])} | {w['turn_failures']} "
            f"| {mib(w['worker_rss_mib'])} | {w['worker_fds']} | {mib(w['redis_used_memory_mib'])} "
            f"| {mib(w['postgres_size_mib'])} | {w['loadavg_1m']} |"
        )
    growth = step.get("growth_per_hour") or {}
    lines.append("")
    lines.append(
        "growth per hour (least squares over the windows after the first): "
        + ", ".join(f"{k} {'—' if v is None else f'{v:+g}'}" for k, v in growth.items())
    )
    return "\n".join(lines)


def writes_executed(log: Iterable[Mapping[str, Any]]) -> collections.Counter[tuple[str, str]]:
    """How many times each write (endpoint, idempotency key) executed, from the backend's log."""
    return collections.Counter(
        (e["endpoint"], e["idempotency_key"])
        for e in log
        if e["outcome"] == "executed" and e["idempotency_key"] and e["endpoint"] in WRITES
    )


def start_locust(
    url: str,
    step: LoadStep,
    workdir: Path,
    *,
    customers_file: Path,
    backend_url: str,
    think: tuple[float, float],
    approve_think: tuple[float, float],
    ws_share: float,
    conversations: int,
    seed: int,
    tag: str,
) -> tuple[subprocess.Popen[bytes], Path, Path]:
    """Start Locust headless for one step: the process, the step's ledger, the CSV prefix."""
    ledger = workdir / f"ledger-{tag}.jsonl"
    ledger.unlink(missing_ok=True)
    prefix = workdir / f"locust-{tag}"
    env = {
        **os.environ,
        "HERMES_LOAD_CUSTOMERS": str(customers_file),
        "HERMES_LOAD_BACKEND": backend_url,
        "HERMES_LOAD_LEDGER": str(ledger),
        "HERMES_LOAD_THINK": f"{think[0]},{think[1]}",
        "HERMES_LOAD_APPROVE": f"{approve_think[0]},{approve_think[1]}",
        "HERMES_LOAD_WS_SHARE": str(ws_share),
        "HERMES_LOAD_CONVERSATIONS": str(conversations),
        "HERMES_LOAD_SEED": str(seed),
    }
    spawn_rate = max(1.0, step.users / 10)  # everyone on within ~10 s
    argv = [
        sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless",
        "-u", str(step.users), "-r", f"{spawn_rate:g}", "-t", f"{max(1, round(step.duration_s))}s",
        "--host", url, "--csv", str(prefix), "--only-summary",
        "--stop-timeout", str(STOP_TIMEOUT_S), "--loglevel", "WARNING", "--exit-code-on-error", "0",
    ]  # fmt: skip
    with (workdir / f"locust-{tag}.log").open("ab") as log:
        proc = subprocess.Popen(argv, env=env, stdout=log, stderr=log, cwd=workdir)
    return proc, ledger, prefix


def run_locust(url: str, step: LoadStep, workdir: Path, **kw: Any) -> tuple[Path, dict[str, Any]]:
    """Run Locust headless for one step (see :func:`start_locust`); the step's ledger and
    Locust's own totals."""
    proc, ledger, prefix = start_locust(url, step, workdir, **kw)
    proc.wait()
    return ledger, locust_totals(prefix)


def locust_totals(prefix: Path) -> dict[str, Any]:
    """Requests and failures per name from Locust's CSV files."""
    stats, failures = Path(f"{prefix}_stats.csv"), Path(f"{prefix}_failures.csv")
    totals: dict[str, Any] = {"requests": 0, "failures": 0, "by_name": {}, "failure_examples": []}
    if stats.exists():
        with stats.open(encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                count, failed = int(row["Request Count"]), int(row["Failure Count"])
                if row["Name"] == "Aggregated":
                    totals["requests"], totals["failures"] = count, failed
                else:
                    totals["by_name"][f"{row['Type']} {row['Name']}"] = {
                        "requests": count, "failures": failed, "p50_ms": _num(row.get("50%")),
                        "p95_ms": _num(row.get("95%")),
                    }  # fmt: skip
    if failures.exists():
        with failures.open(encoding="utf-8") as handle:
            totals["failure_examples"] = [
                f"{r['Method']} {r['Name']}: {r['Error'][:160]} ×{r['Occurrences']}"
                for r in csv.DictReader(handle)
            ][:8]
    return totals


def _num(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "", "N/A") else None
    except ValueError:
        return None


def check_transcripts(
    records: Sequence[Mapping[str, Any]],
    url: str,
    database: Path,
    *,
    archive_dsn: str | None = None,
) -> tuple[int, list[str]]:
    """Every answered turn of the ledger against the transcript kept for it: the open session
    (through the API) or its archive row once closed — in the workers' SQLite ``database``, or
    in PostgreSQL at ``archive_dsn`` (the shared stores). How many turns were checked, and each
    one that is missing or not at its index."""
    acked: dict[str, list[tuple[int, str]]] = collections.defaultdict(list)
    owner: dict[str, str] = {}
    for record in records:
        if record["kind"] == "turn":
            acked[record["session"]].append((record["index"], record["text"]))
            owner[record["session"]] = record["user"]
    archived = archived_transcripts(owner, database, archive_dsn)
    problems: list[str] = []
    with httpx.Client(timeout=30) as client:
        for session_id, turns_acked in acked.items():
            turns = archived.get(session_id)
            if turns is None:
                response = client.get(
                    f"{url}/v1/sessions/{session_id}", params={"user_id": owner[session_id]}
                )
                if response.status_code != 200:
                    problems.append(f"{session_id}: no transcript ({response.status_code})")
                    continue
                turns = response.json()["turns"]
            for index, text in turns_acked:
                at = turns[index] if index < len(turns) else None
                if at is None or at["role"] != "user" or at["text"] != text:
                    problems.append(f"{session_id}: answered turn {index} {text!r} not kept")
    return sum(len(t) for t in acked.values()), problems


def archived_transcripts(
    owners: Mapping[str, str], database: Path, archive_dsn: str | None = None
) -> dict[str, list[dict[str, Any]]]:
    """The archived transcript of each closed session of ``owners`` (id → customer), read
    through the service's own archive: PostgreSQL at ``archive_dsn``, else the SQLite file."""

    if not archive_dsn and not database.exists():
        return {}

    async def read() -> dict[str, list[dict[str, Any]]]:
        archive: SessionArchive = (
            PostgresSessionArchive(archive_dsn)
            if archive_dsn
            else SqliteSessionArchive(SqliteDatabase(database))
        )
        found: dict[str, list[dict[str, Any]]] = {}
        try:
            for session_id, user in owners.items():
                record = await archive.get(DEFAULT_TENANT, user, session_id)
                if record is not None:
                    found[session_id] = record["transcript"]
        finally:
            await archive.aclose()
        return found

    return asyncio.run(read())


def _summarize(records: Sequence[Mapping[str, Any]], window: tuple[float, float]) -> dict[str, Any]:
    turns = [r for r in records if r["kind"] == "turn"]
    in_window = [r for r in turns if window[0] <= r["at"] <= window[1]]
    latencies = [r["ms"] for r in turns]
    by: dict[str, list[float]] = collections.defaultdict(list)
    for r in turns:
        by[r["conv"]].append(r["ms"])
        by[r["transport"]].append(r["ms"])
    closed = [r for r in records if r["kind"] == "closed"]
    resets = [r for r in closed if r["conv"] == "password_reset"]
    moved = [r for r in closed if len(r.get("upstreams") or []) > 1]
    span = max(window[1] - window[0], 1e-9)
    return {
        "turns_answered": len(turns),
        "turns_per_s": round(len(in_window) / span, 1),
        "turn_p50_ms": percentile(latencies, 50),
        "turn_p95_ms": percentile(latencies, 95),
        "turn_p99_ms": percentile(latencies, 99),
        "turn_mean_ms": round(statistics.fmean(latencies), 1) if latencies else None,
        "p95_ms_by": {k: percentile(v, 95) for k, v in sorted(by.items())},
        "p50_ms_by": {k: percentile(v, 50) for k, v in sorted(by.items())},
        "conversations_closed": len(closed),
        "conversations_abandoned": sum(1 for r in records if r["kind"] == "abandoned"),
        "conversations_moved_between_workers": len(moved),
        "password_resets_completed": sum(1 for r in resets if r.get("reset") == "completed"),
        "password_resets": len(resets),
        "turns_stored_answer_lost": sum(1 for r in records if r["kind"] == "unacked"),
        "turn_failures": sum(1 for r in records if r["kind"] == "fail"),
        "lost_in_conversation_check": sum(1 for r in records if r["kind"] == "lost"),
    }


def run_load(
    *,
    steps: Sequence[LoadStep],
    stores: str = "embedded",
    workers: int = 1,
    think: tuple[float, float] = (3.0, 1.0),
    approve_think: tuple[float, float] = (2.0, 0.5),
    ws_share: float = 0.5,
    conversations: int = 0,
    customers: int = 300,
    redis_url: str | None = None,
    postgres_dsn: str | None = None,
    balancer: bool | None = None,
    model_dir: Path | None = None,
    workdir: Path | None = None,
    seed: int = 1,
    profile: bool = False,
    window_s: float = 0.0,
    progress: Any = print,
) -> dict[str, Any]:
    """Start the cluster, run each step, check transcripts and writes, stop everything."""
    work = workdir or Path(tempfile.mkdtemp(prefix="hermes-load-"))
    cluster = build_cluster(
        work, workers=workers, stores=stores, customers=customers, model_dir=model_dir,
        redis_url=redis_url, postgres_dsn=postgres_dsn, balancer=balancer,
    )  # fmt: skip
    customers_file = work / "customers.json"
    customers_file.write_text(json.dumps(cluster.customers), encoding="utf-8")
    results: list[dict[str, Any]] = []
    try:
        progress(f"starting {workers} worker(s), stores {stores}, in {work}")
        cluster.start(active=steps[0].workers)
        _settle(cluster)
        for number, step in enumerate(steps):
            if cluster.balancer is not None:
                cluster.balancer.reconfigure([w.port for w in cluster.workers[: step.workers]])
            progress(f"step {number + 1}/{len(steps)}: {step.users} agents, "
                     f"{step.workers} worker(s), {step.duration_s:g} s")  # fmt: skip
            results.append(
                _run_step(
                    cluster,
                    step,
                    number,
                    work,
                    customers_file,
                    think,
                    approve_think,
                    ws_share,
                    conversations,
                    seed,
                    profile,
                    window_s,
                    progress,
                )
            )
            progress(json.dumps(_brief(results[-1]), ensure_ascii=False))
        log = cluster.backend.log()
    finally:
        cluster.stop()
    twice = {f"{e}:{k}": n for (e, k), n in writes_executed(log).items() if n > 1}
    return {
        "stores": stores,
        "workers": workers,
        "balancer": "nginx" if cluster.balancer is not None else None,
        "think_s": {"mean": think[0], "sd": think[1]},
        "approve_think_s": {"mean": approve_think[0], "sd": approve_think[1]},
        "ws_share": ws_share,
        "steps": results,
        "writes_executed": sum(writes_executed(log).values()),
        "writes_executed_twice": len(twice),
        "writes_executed_twice_examples": sorted(twice)[:5],
        "lost_turns": sum(r["lost_turns"] for r in results),
        "workdir": str(work),
    }


def _run_step(
    cluster: Cluster, step: LoadStep, number: int, work: Path, customers_file: Path,
    think: tuple[float, float], approve_think: tuple[float, float], ws_share: float,
    conversations: int, seed: int, profile: bool, window_s: float = 0.0, progress: Any = print,
) -> dict[str, Any]:  # fmt: skip
    active = cluster.workers[: step.workers]
    cpu_before = {w.index: cpu_seconds(w.pid) for w in active}
    rss_before = {w.index: rss_bytes(w.pid) for w in active}
    load_before = os.getloadavg()
    spy = None
    if profile:
        spy = subprocess.Popen(
            [str(Path(sys.executable).with_name("py-spy")), "record", "--pid",
             str(active[0].pid), "--duration", str(max(1, round(step.duration_s))), "--rate",
             "100", "--format", "raw", "--gil", "--output",
             str(work / f"profile-step{number + 1}.txt")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    started = time.time()
    proc, ledger, prefix = start_locust(
        cluster.url, step, work, customers_file=customers_file, backend_url=cluster.backend.url,
        think=think, approve_think=approve_think, ws_share=ws_share,
        conversations=conversations, seed=seed + number, tag=f"step{number + 1}",
    )  # fmt: skip
    windows: list[dict[str, Any]] = []
    if window_s > 0:
        edge = started
        while proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=max(0.0, edge + window_s - time.time()))
            if proc.returncode is not None and time.time() - edge < window_s / 2:
                break  # the agents' last conversations ending: too short a window to tell
            now = time.time()
            windows.append(_window(cluster, active, ledger, started, edge, now))
            progress(json.dumps({"window": len(windows), **windows[-1]}, ensure_ascii=False))
            edge = now
    proc.wait()
    totals = locust_totals(prefix)
    ended = time.time()
    load_after = os.getloadavg()
    profiled = None
    if spy is not None:
        spy.wait(timeout=60)
        path = work / f"profile-step{number + 1}.txt"
        profiled = profile_top(path) if path.exists() else None
    cpu = sum(cpu_seconds(w.pid) - cpu_before[w.index] for w in active)
    rss_after = {w.index: rss_bytes(w.pid) for w in active}
    records = ledger_records(ledger)
    ramp = min(10.0, step.duration_s / 3)
    summary = _summarize(records, (started + ramp, started + step.duration_s))
    checked, problems = check_transcripts(
        records, cluster.url, work / "data" / "hermes.db", archive_dsn=cluster.archive_dsn
    )
    turns = summary["turns_answered"] + summary["turns_stored_answer_lost"]
    redis_memory = redis_used_memory(cluster.redis_url) if cluster.redis_url else None
    return {
        "users": step.users,
        "workers": step.workers,
        "duration_s": step.duration_s,
        "wall_s": round(ended - started, 1),
        **summary,
        "requests": totals["requests"],
        "request_failures": totals["failures"],
        "failure_examples": totals["failure_examples"],
        "by_request": totals["by_name"],
        "turns_checked": checked,
        "lost_turns": len(problems),
        "lost_examples": problems[:5],
        "worker_cpu_s": round(cpu, 2),
        "cpu_ms_per_turn": round(cpu / turns * 1000, 2) if turns else None,
        # open, close, transcript checks, approvals, workflow looks, WebSocket connects
        "requests_per_turn": round(totals["requests"] / turns, 2) if turns else None,
        "worker_cores_used": round(cpu / max(ended - started, 1e-9), 2),
        "worker_rss_mib": {i: round(v / 2**20, 1) for i, v in rss_after.items()},
        "worker_rss_growth_mib": round(
            sum(rss_after[i] - rss_before[i] for i in rss_after) / 2**20, 1
        ),
        "redis_used_memory_mib": round(redis_memory / 2**20, 1) if redis_memory else None,
        "loadavg_1m": [round(load_before[0], 2), round(load_after[0], 2)],
        "profile": profiled,
        "windows": windows,
        "growth_per_hour": _growth(windows) if windows else None,
    }


def _window(
    cluster: Cluster, active: Sequence[Any], ledger: Path, started: float, start: float, end: float
) -> dict[str, Any]:
    """One soak window: the ledger's turns in it, and the workers' and stores' sizes at its end."""
    figures = window_figures(ledger_records(ledger, partial=True), start, end)
    redis_bytes = postgres_bytes = None
    if cluster.redis_url:
        redis_bytes = redis_used_memory(cluster.redis_url)
    if cluster.postgres_dsn:
        postgres_bytes = postgres_database_size(cluster.postgres_dsn)
    return {
        "from_s": round(start - started),
        "to_s": round(end - started),
        **figures,
        "worker_rss_mib": round(sum(rss_bytes(w.pid) for w in active) / 2**20, 1),
        "worker_fds": sum(open_fds(w.pid) for w in active),
        "redis_used_memory_mib": None if redis_bytes is None else round(redis_bytes / 2**20, 2),
        "postgres_size_mib": None if postgres_bytes is None else round(postgres_bytes / 2**20, 2),
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }


def _growth(windows: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Per hour, from the windows' ends: MiB of worker RSS, Redis and PostgreSQL; open fds.
    With three windows or more the first is left out: it holds the warm-up (caches filled,
    connection pools grown to the load), not the growth a longer run would see."""
    if len(windows) >= 3:
        windows = windows[1:]
    out: dict[str, float | None] = {}
    for key, name in (("worker_rss_mib", "worker_rss_mib"), ("worker_fds", "worker_fds"),
                      ("redis_used_memory_mib", "redis_mib"),
                      ("postgres_size_mib", "postgres_mib")):  # fmt: skip
        points = [(float(w["to_s"]), float(w[key])) for w in windows if w[key] is not None]
        out[name] = per_hour(points)
    return out


def _settle(cluster: Cluster, quiet_cpu_s: float = 0.05, limit_s: float = 30.0) -> None:
    """Wait until the workers are idle (start-up work such as loading jieba's dictionary is
    done), so a step's CPU and profile hold the load's work only."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        before = sum(cpu_seconds(w.pid) for w in cluster.workers)
        time.sleep(1.0)
        if sum(cpu_seconds(w.pid) for w in cluster.workers) - before < quiet_cpu_s * len(
            cluster.workers
        ):
            return


def _brief(step: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("users", "workers", "turns_answered", "turns_per_s", "turn_p50_ms", "turn_p95_ms",
            "request_failures", "lost_turns", "cpu_ms_per_turn", "loadavg_1m")  # fmt: skip
    return {k: step[k] for k in keys}
