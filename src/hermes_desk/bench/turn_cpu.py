"""CPU per turn: what one customer turn costs a worker, with nothing else in the measurement.

``hermes-desk bench turn-cpu`` starts one worker and the demo backend (with its realistic
latencies, :mod:`hermes_desk.bench.load_cluster`), opens every conversation's session first,
then sends the conversations' customer turns (the article's mix, :mod:`hermes_desk.bench.
conversations`) from ``clients`` concurrent clients, each holding one conversation at a time with
no think time, and closes the sessions afterwards. The worker's CPU seconds (``/proc``) are
counted only while the turns run, so the figure is a turn's and nothing else's — opening,
approving and closing, which a whole conversation adds, are in ``hermes-desk bench load``'s
figure instead. A password reset's SMS code is sent (the pack's one write without an approval)
but never read back here, so the reset waits and its conversation goes on with the follow-ups.
The figures count the backend requests the measured turns made, by route: trees compare only
when their turns ask the backend for the same things.

This is a measurement driver, not a load test: a fixed amount of work at a fixed concurrency;
the load itself (think times, capacity, faults) is Locust's, in :mod:`hermes_desk.bench.load`.

On a shared machine the same tree's figure drifts by a quarter from one run to the next (other
guests on the host's caches and cores), more than most changes move it. :func:`run_paired`
therefore measures two workers at once — this tree's and a rival (another source tree, another
interpreter) — on one core, over the same seconds, and gives the ratio of their figures, which
that drift moves far less.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from hermes_desk.bench.conversations import CODE, pick_kind, script
from hermes_desk.bench.host_probe import HostProbe, host_speed
from hermes_desk.bench.load import percentile, profile_top
from hermes_desk.bench.load_cluster import Worker, build_cluster, cpu_seconds, rss_bytes

__all__ = [
    "Planned",
    "Rival",
    "pair_series",
    "pin_apart",
    "plan_conversations",
    "run_paired",
    "run_turn_cpu",
    "series_figures",
    "summary_line",
]


@dataclass(frozen=True)
class Planned:
    """One conversation to hold: who, about what, and the lines."""

    kind: str
    user: str
    lines: tuple[str, ...]


def plan_conversations(customers: list[dict[str, Any]], count: int, seed: int = 1) -> list[Planned]:
    """``count`` conversations of the article's mix, one customer each (so no two share a
    session), their lines drawn with ``seed``."""
    if count > len(customers):
        raise ValueError(f"{count} conversations need as many customers ({len(customers)})")
    rng = random.Random(seed)
    planned = []
    for customer in customers[:count]:
        kind = pick_kind(rng)
        lines = script(kind, customer, rng.choice(customer["orders"]), rng)
        planned.append(Planned(kind, customer["user"], tuple(t for t in lines if t != CODE)))
    return planned


def run_turn_cpu(
    *,
    conversations: int = 600,
    clients: int = 20,
    stores: str = "embedded",
    redis_url: str | None = None,
    postgres_dsn: str | None = None,
    model_dir: Path | None = None,
    workdir: Path | None = None,
    warmup: int = 20,
    seed: int = 1,
    profile: bool = False,
    pin: bool = False,
    tree: Path | None = None,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Start a worker, hold ``conversations`` conversations' turns from ``clients`` clients,
    and return the worker's CPU per turn with the counts and latencies behind it. ``pin``: the
    worker alone on one core, the backend and the clients on the others (:func:`pin_apart`).
    ``tree``: the worker runs that checkout's ``hermes_desk`` (an older tree measured with this
    driver, in runs alternating with this tree's)."""
    root = Rival(source=tree).package_root()
    work = workdir or Path(tempfile.mkdtemp(prefix="hermes-turn-cpu-"))
    cluster = build_cluster(
        work, workers=1, stores=stores, customers=conversations + warmup, model_dir=model_dir,
        redis_url=redis_url, postgres_dsn=postgres_dsn, balancer=False,
    )  # fmt: skip
    if root is not None:
        _source_first(cluster.workers[0].env, root)
    plan = plan_conversations(cluster.customers, conversations + warmup, seed)
    own_cores = os.sched_getaffinity(0)
    probe: HostProbe | None = None
    try:
        progress(f"starting a worker (stores {stores}) in {work}")
        cluster.start()
        pinned = pin and pin_apart([cluster.workers[0].pid], cluster.backend.pid)
        if pin and not pinned:
            progress("one core only: nothing pinned")
        progress(f"opening {len(plan)} sessions, warming up: {warmup} conversations")
        sessions = _open_and_warm(cluster.url, plan, warmup, clients)
        worker = cluster.workers[0]
        measured = list(zip(plan[warmup:], sessions[warmup:], strict=True))
        progress(f"measuring: {len(measured)} conversations from {clients} clients")
        spy = _spy(worker.pid, work) if profile else None
        # The core's speed over the same seconds, beside the worker (host_probe).
        if pinned:
            probe = HostProbe(worker_core(own_cores))
            probe.start()
        seq_before = cluster.backend.last_seq()
        cpu_before, rss_before = cpu_seconds(worker.pid), rss_bytes(worker.pid)
        started = time.time()
        results = _hold(cluster.url, measured, clients)
        wall = time.time() - started
        cpu = cpu_seconds(worker.pid) - cpu_before
        speed = host_speed(probe.stop()) if probe is not None else None
        rss_after = rss_bytes(worker.pid)
        profiled = _stop_spy(spy, work) if spy is not None else None
        requests = _backend_requests(cluster.backend.log(seq_before), seq_before)
        progress("closing the sessions")
        with httpx.Client(base_url=cluster.url, timeout=60) as client:
            for planned, session_id in zip(plan, sessions, strict=True):
                client.delete(f"/v1/sessions/{session_id}", params={"user_id": planned.user})
    finally:
        if probe is not None:
            # Nothing once stopped. One left by a failure is stopped (killed if it does not
            # answer) without hiding that failure or leaving the cluster running.
            with contextlib.suppress(subprocess.TimeoutExpired):
                probe.stop()
        os.sched_setaffinity(0, own_cores)
        cluster.stop()
    figures = _figures(results, cpu, wall, rss_before, rss_after, stores, clients, profiled, work)
    figures["pinned"] = pinned
    figures["host_speed"] = speed
    figures["backend_requests"] = requests
    return figures


def pin_apart(worker_pids: Sequence[int], backend_pid: int) -> bool:
    """The workers' threads on the last core this process may use; the backend's threads and
    this process (the clients' threads, started later, inherit it) on the others. On a shared
    two-core machine the clients and the backend otherwise run on the worker's core between its
    turns and leave their data in its caches, which the worker's CPU figure then pays for; a
    worker in production has its core to itself. False (nothing changed) with one core."""
    cpus = os.sched_getaffinity(0)
    if len(cpus) < 2:
        return False
    alone = {worker_core(cpus)}
    others = cpus - alone
    placed = [(pid, alone) for pid in worker_pids] + [(backend_pid, others)]
    for pid, cores in placed:
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
                os.sched_setaffinity(int(task.name), cores)
    os.sched_setaffinity(0, others)
    return True


def worker_core(cpus: set[int]) -> int:
    """The core :func:`pin_apart` gives the workers, of the cores ``cpus`` this process may use."""
    return max(cpus)


@dataclass(frozen=True)
class Rival:
    """The second worker of a paired run: another interpreter, another source tree, or both.

    ``python``: the interpreter to run it (its environment must have the dependencies);
    ``source``: a checkout (or its ``src`` folder) whose ``hermes_desk`` goes first on its
    ``PYTHONPATH``."""

    python: str | None = None
    source: Path | None = None

    def package_root(self) -> Path | None:
        """The folder holding the source tree's ``hermes_desk`` package; ValueError if neither
        the folder nor its ``src`` holds one."""
        if self.source is None:
            return None
        for root in (self.source / "src", self.source):
            if (root / "hermes_desk" / "__init__.py").is_file():
                return root
        raise ValueError(f"{self.source} holds no hermes_desk package (nor does its src/)")

    def describe(self) -> str:
        parts = [f"python {self.python}"] if self.python else []
        return ", ".join(parts + ([f"tree {self.source}"] if self.source else [])) or "this tree"


def run_paired(
    rival: Rival,
    *,
    conversations: int = 600,
    clients: int = 20,
    model_dir: Path | None = None,
    workdir: Path | None = None,
    warmup: int = 20,
    seed: int = 1,
    rival_first: bool = False,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:
    """This tree's worker and ``rival``'s side by side on one core (the backend and the
    clients on the others), on the embedded defaults, each with its own data folder and the
    same conversations, ``clients // 2`` clients each, measured over the same seconds.

    Both workers share a core, so each one's figure is higher than a worker's alone; what the
    run gives is their ratio (``rival_to_this``). ``rival_first``: the rival starts, opens its
    sessions and warms up first (a series alternates, so neither place favours either)."""
    root = rival.package_root()
    if len(os.sched_getaffinity(0)) < 2:
        raise ValueError("a paired run needs two cores: the workers on one, the clients on another")
    work = workdir or Path(tempfile.mkdtemp(prefix="hermes-turn-cpu-pair-"))
    cluster = build_cluster(
        work, workers=1, stores="embedded", customers=conversations + warmup,
        model_dir=model_dir, balancer=False,
    )  # fmt: skip
    ours = cluster.workers[0]
    env = {**ours.env, "HERMES_SERVICE__DATA_DIR": str(work / "data-rival")}
    if root is not None:
        _source_first(env, root)
    theirs = Worker(1, work, env, python=rival.python or sys.executable)
    # Cluster.start starts its first worker first; the second's start overlaps nothing.
    cluster.workers = [theirs, ours] if rival_first else [ours, theirs]
    plan = plan_conversations(cluster.customers, conversations + warmup, seed)
    own_cores = os.sched_getaffinity(0)
    try:
        progress(f"starting this tree's worker and the rival's ({rival.describe()}) in {work}")
        cluster.start()
        pin_apart([w.pid for w in cluster.workers], cluster.backend.pid)
        half = max(1, clients // 2)
        sessions: dict[int, list[str]] = {}
        for worker in cluster.workers:
            progress(f"worker {worker.index}: opening {len(plan)} sessions, warming up")
            sessions[worker.index] = _open_and_warm(worker.url, plan, warmup, half)
        progress(f"measuring both: {conversations} conversations and {half} clients each")
        results: dict[int, list[dict[str, Any]]] = {}

        def hold(worker: Worker) -> None:
            measured = list(zip(plan[warmup:], sessions[worker.index][warmup:], strict=True))
            results[worker.index] = _hold(worker.url, measured, half)

        threads = [threading.Thread(target=hold, args=(w,)) for w in cluster.workers]
        before = {w.index: (cpu_seconds(w.pid), rss_bytes(w.pid)) for w in cluster.workers}
        started = time.time()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.time() - started
        cpu = {w.index: cpu_seconds(w.pid) - before[w.index][0] for w in cluster.workers}
        rss = {w.index: rss_bytes(w.pid) for w in cluster.workers}
    finally:
        os.sched_setaffinity(0, own_cores)
        cluster.stop()
    each = {}
    for w in cluster.workers:
        each[w.index] = _figures(
            results[w.index], cpu[w.index], wall, before[w.index][1], rss[w.index], "embedded",
            half, None, work,
        )  # fmt: skip
    this, other = each[ours.index]["cpu_ms_per_turn"], each[theirs.index]["cpu_ms_per_turn"]
    return {
        "rival": rival.describe(),
        "rival_first": rival_first,
        "this": each[ours.index],
        "rival_figures": each[theirs.index],
        "turn_errors": each[ours.index]["turn_errors"] + each[theirs.index]["turn_errors"],
        "rival_to_this": round(other / this, 3) if this and other else None,
    }


def pair_series(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Several paired runs: each run's ratio and their geometric mean (a ratio's average)."""
    ratios = [r["rival_to_this"] for r in runs if r["rival_to_this"]]
    mean = math.exp(statistics.fmean(math.log(r) for r in ratios)) if ratios else None
    return {
        "runs": runs,
        "turn_errors": sum(r["turn_errors"] for r in runs),
        "rival_to_this_each": ratios,
        "rival_to_this_geomean": round(mean, 3) if mean else None,
        "this_cpu_ms_per_turn_each": [r["this"]["cpu_ms_per_turn"] for r in runs],
        "rival_cpu_ms_per_turn_each": [r["rival_figures"]["cpu_ms_per_turn"] for r in runs],
    }


def _source_first(env: dict[str, str], root: Path) -> None:
    """A worker's environment with ``root``'s ``hermes_desk`` first on its path."""
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))


def _backend_requests(entries: list[dict[str, Any]], since: int) -> dict[str, Any]:
    """The backend requests the measured turns made, by route: two trees' CPU per turn compare
    only if their turns ask the backend for the same things. ``complete`` is false when the
    backend's bounded log had already dropped some."""
    by_route = Counter(f"{e['method']} {e['endpoint']}" for e in entries)
    return {
        "total": len(entries),
        "complete": not entries or entries[0]["seq"] == since + 1,
        "by_route": dict(sorted(by_route.items())),
    }


def _open_and_warm(url: str, plan: list[Planned], warmup: int, clients: int) -> list[str]:
    """A session opened for every planned conversation, then the first ``warmup`` of them held
    from ``clients`` clients; the sessions' ids in the plan's order."""
    with httpx.Client(base_url=url, timeout=60) as client:
        sessions = [_open(client, p.user) for p in plan]
    _hold(url, list(zip(plan[:warmup], sessions[:warmup], strict=True)), clients)
    return sessions


def _open(client: httpx.Client, user: str) -> str:
    response = client.post("/v1/sessions", json={"user_id": user, "resume": False})
    response.raise_for_status()
    return str(response.json()["session_id"])


def _hold(url: str, work: list[tuple[Planned, str]], clients: int) -> list[dict[str, Any]]:
    """The conversations' turns from ``clients`` threads, one conversation at a time each."""
    todo: queue.SimpleQueue[tuple[Planned, str]] = queue.SimpleQueue()
    for item in work:
        todo.put(item)
    results: list[dict[str, Any]] = []
    lock = threading.Lock()

    def client_loop() -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            while True:
                try:
                    planned, session_id = todo.get_nowait()
                except queue.Empty:
                    return
                for text in planned.lines:
                    began = time.perf_counter()
                    response = client.post(
                        f"/v1/sessions/{session_id}/turns",
                        json={"user_id": planned.user, "text": text},
                    )
                    record = {
                        "kind": planned.kind,
                        "status": response.status_code,
                        "ms": (time.perf_counter() - began) * 1e3,
                        "error": None if response.status_code == 200 else response.text[:200],
                    }
                    with lock:
                        results.append(record)

    threads = [threading.Thread(target=client_loop) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _spy(pid: int, work: Path) -> subprocess.Popen[bytes]:
    spy = subprocess.Popen(
        [str(Path(sys.executable).with_name("py-spy")), "record", "--pid", str(pid), "--rate",
         "200", "--format", "raw", "--gil", "--nonblocking", "--output",
         str(work / "profile-turns.txt")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    time.sleep(1.0)  # py-spy attaches before the first turn
    return spy


def _stop_spy(spy: subprocess.Popen[bytes], work: Path) -> dict[str, list[tuple[str, float]]]:
    spy.send_signal(2)  # SIGINT: py-spy writes the profile and exits
    spy.wait(timeout=60)
    path = work / "profile-turns.txt"
    return profile_top(path, n=30) if path.exists() else {}


def _figures(
    results: list[dict[str, Any]], cpu: float, wall: float, rss_before: int, rss_after: int,
    stores: str, clients: int, profiled: dict[str, Any] | None, work: Path,
) -> dict[str, Any]:  # fmt: skip
    answered = [r for r in results if r["status"] == 200]
    latencies = sorted(r["ms"] for r in answered)
    return {
        "stores": stores,
        "clients": clients,
        "turns": len(results),
        "turns_answered": len(answered),
        "turn_errors": len(results) - len(answered),
        "error_examples": [r["error"] for r in results if r["error"]][:3],
        "turns_by_kind": dict(Counter(r["kind"] for r in answered)),
        "wall_s": round(wall, 2),
        "turns_per_s": round(len(answered) / wall, 1) if wall else 0.0,
        "worker_cpu_s": round(cpu, 3),
        "cpu_ms_per_turn": round(1000 * cpu / len(answered), 3) if answered else None,
        "worker_cores_used": round(cpu / wall, 2) if wall else 0.0,
        "turn_p50_ms": round(statistics.median(latencies), 1) if latencies else None,
        "turn_p95_ms": percentile(latencies, 95),
        "worker_rss_mib": round(rss_after / 2**20, 1),
        "worker_rss_growth_mib": round((rss_after - rss_before) / 2**20, 1),
        "loadavg_1m": round(os.getloadavg()[0], 2),
        "profile": profiled,
        "workdir": str(work),
    }


def series_figures(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Several runs' figures and their CPU per turn side by side: on a shared machine the same
    tree's figure drifts from run to run (a neighbour's load on the host's caches and cores), so
    the spread is part of the result; the least is the closest to the turn's own cost."""
    each = [r["cpu_ms_per_turn"] for r in runs if r["cpu_ms_per_turn"] is not None]
    return {
        "runs": runs,
        "turn_errors": sum(r["turn_errors"] for r in runs),
        "cpu_ms_per_turn_each": each,
        "cpu_ms_per_turn_median": round(statistics.median(each), 3) if each else None,
        "cpu_ms_per_turn_min": min(each) if each else None,
        # How fast the worker's core ran in each run (host_probe): a figure is read with it.
        "probe_ms_mean_each": [(r.get("host_speed") or {}).get("probe_ms_mean") for r in runs],
    }


def summary_line(figures: dict[str, Any]) -> str:
    """One line for the progress output."""
    keys = ("turns_answered", "turn_errors", "turns_per_s", "cpu_ms_per_turn", "worker_cores_used")
    line = {k: figures[k] for k in keys}
    if figures.get("host_speed"):
        line["probe_ms_mean"] = figures["host_speed"]["probe_ms_mean"]
    return json.dumps(line)
