"""The turn-CPU driver: a few conversations' turns on a real worker, and the plan behind them.
Nothing here looks at a time or a CPU figure's size."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_desk.bench.conversations import CODE, MIX
from hermes_desk.bench.load_cluster import make_customers
from hermes_desk.bench.turn_cpu import (
    Rival,
    _backend_requests,
    _source_first,
    pair_series,
    pin_apart,
    plan_conversations,
    run_paired,
    run_turn_cpu,
    series_figures,
)
from hermes_desk.cli.bench import app

ROOT = Path(__file__).resolve().parents[2]
TWO_CORES = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")


def test_the_plan_gives_each_conversation_its_own_customer_and_the_article_mix() -> None:
    _, customers = make_customers(400)
    plan = plan_conversations(customers, 400, seed=3)
    assert len({p.user for p in plan}) == 400, "no two conversations share a customer"
    kinds = Counter(p.kind for p in plan)
    assert set(kinds) == {kind for kind, _ in MIX}
    assert kinds["order"] > kinds["password_reset"] > kinds["complaint"]
    assert all(2 <= len(p.lines) <= 6 and CODE not in p.lines for p in plan)
    assert plan == plan_conversations(customers, 400, seed=3), "the same seed, the same plan"


def test_more_conversations_than_customers_is_refused() -> None:
    _, customers = make_customers(3)
    with pytest.raises(ValueError, match="need as many customers"):
        plan_conversations(customers, 4)


@pytest.mark.slow
@pytest.mark.parametrize("tree", [None, "this checkout, as another tree"])
def test_every_measured_turn_is_answered_and_counted(
    tmp_path: Path, pack_model_dir: Path, tree: str | None
) -> None:
    figures = run_turn_cpu(
        conversations=12, clients=3, warmup=2, model_dir=pack_model_dir, workdir=tmp_path,
        pin=True, tree=ROOT if tree else None, progress=lambda line: None,
    )  # fmt: skip
    assert figures["turn_errors"] == 0, figures["error_examples"]
    if figures["pinned"]:  # the core's speed was probed beside the worker
        assert figures["host_speed"]["probe_samples"] >= 1
        assert figures["host_speed"]["slowdown"] >= 1.0
    else:
        assert figures["host_speed"] is None
    plan = plan_conversations(make_customers(14)[1], 14)[2:]
    assert figures["turns_answered"] == sum(len(p.lines) for p in plan)
    assert figures["worker_cpu_s"] > 0
    assert figures["cpu_ms_per_turn"] is not None
    assert sum(figures["turns_by_kind"].values()) == figures["turns_answered"]
    asked = figures["backend_requests"]
    assert asked["complete"] and asked["total"] > 0, "the turns looked orders up"
    assert sum(asked["by_route"].values()) == asked["total"]


def test_backend_requests_are_counted_by_route_and_a_dropped_start_is_told() -> None:
    entries = [
        {"seq": 8, "method": "GET", "endpoint": "get_order"},
        {"seq": 9, "method": "GET", "endpoint": "get_shipment"},
        {"seq": 10, "method": "GET", "endpoint": "get_order"},
    ]
    counted = _backend_requests(entries, since=7)
    assert counted == {
        "total": 3,
        "complete": True,
        "by_route": {"GET get_order": 2, "GET get_shipment": 1},
    }
    assert _backend_requests(entries, since=5)["complete"] is False, "seq 6 and 7 were dropped"
    assert _backend_requests([], since=5) == {"total": 0, "complete": True, "by_route": {}}


@pytest.mark.slow
@TWO_CORES
@pytest.mark.parametrize("rival_first", [False, True])
def test_a_paired_run_answers_every_turn_of_both_workers_and_gives_their_ratio(
    tmp_path: Path, pack_model_dir: Path, rival_first: bool
) -> None:
    figures = run_paired(
        Rival(python=sys.executable, source=ROOT), conversations=6, clients=2, warmup=1,
        model_dir=pack_model_dir, workdir=tmp_path, rival_first=rival_first,
        progress=lambda line: None,
    )  # fmt: skip
    assert figures["turn_errors"] == 0, (figures["this"], figures["rival_figures"])
    expected = sum(len(p.lines) for p in plan_conversations(make_customers(7)[1], 7)[1:])
    for side in ("this", "rival_figures"):
        assert figures[side]["turns_answered"] == expected
        assert figures[side]["worker_cpu_s"] > 0
    ratio = figures["rival_figures"]["cpu_ms_per_turn"] / figures["this"]["cpu_ms_per_turn"]
    assert figures["rival_to_this"] == round(ratio, 3)
    # Each worker kept its own data folder: the two never shared a session.
    assert (tmp_path / "data").is_dir() and (tmp_path / "data-rival").is_dir()


def test_a_pair_series_gives_each_ratio_and_their_geometric_mean() -> None:
    def run(this: float, rival: float, errors: int = 0) -> dict[str, object]:
        return {
            "this": {"cpu_ms_per_turn": this},
            "rival_figures": {"cpu_ms_per_turn": rival},
            "rival_to_this": round(rival / this, 3),
            "turn_errors": errors,
        }

    series = pair_series([run(4.0, 2.0), run(2.0, 4.0, errors=2), run(3.0, 3.0)])
    assert series["rival_to_this_each"] == [0.5, 2.0, 1.0]
    assert series["rival_to_this_geomean"] == 1.0, "halved once and doubled once: no change"
    assert series["this_cpu_ms_per_turn_each"] == [4.0, 2.0, 3.0]
    assert series["turn_errors"] == 2


def test_another_tree_goes_first_on_the_workers_path(monkeypatch: pytest.MonkeyPatch) -> None:
    env: dict[str, str] = {"HERMES_SERVICE__DATA_DIR": "/data"}
    monkeypatch.setenv("PYTHONPATH", "/already/there")
    _source_first(env, ROOT / "src")
    assert env["PYTHONPATH"] == os.pathsep.join([str(ROOT / "src"), "/already/there"])
    monkeypatch.delenv("PYTHONPATH")
    _source_first(env, ROOT / "src")
    assert env == {"HERMES_SERVICE__DATA_DIR": "/data", "PYTHONPATH": str(ROOT / "src")}


def test_a_rival_tree_without_the_package_is_named() -> None:
    with pytest.raises(ValueError, match="holds no hermes_desk package"):
        Rival(source=ROOT / "docs").package_root()
    assert Rival(source=ROOT).package_root() == ROOT / "src"
    assert Rival(source=ROOT / "src").package_root() == ROOT / "src"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--stores", "sqlite"], "--stores"),
        (["--conversations", "0"], "one conversation"),
        (["--runs", "0"], "--runs"),
        (["--against-python", "/nonexistent/python3"], "--against-python"),
        (["--against-tree", str(ROOT / "docs")], "--against-tree"),
        (["--against-tree", str(ROOT), "--stores", "shared"], "--stores"),
        (["--against-tree", str(ROOT), "--profile"], "--profile"),
        (["--tree", str(ROOT / "docs")], "--tree"),
        (["--tree", str(ROOT), "--against-tree", str(ROOT)], "--tree"),
    ],
)
def test_the_command_refuses_what_it_cannot_run_before_starting_anything(
    args: list[str], named: str
) -> None:
    result = CliRunner().invoke(app, ["turn-cpu", *args])
    assert result.exit_code == 2
    assert named in result.output


def test_a_series_keeps_every_run_and_names_its_median_and_least() -> None:
    runs = [
        {"cpu_ms_per_turn": 3.4, "turn_errors": 0, "host_speed": {"probe_ms_mean": 1.5}},
        {"cpu_ms_per_turn": 2.9, "turn_errors": 1, "host_speed": None},
        {"cpu_ms_per_turn": 4.1, "turn_errors": 0, "host_speed": {"probe_ms_mean": 2.6}},
    ]
    series = series_figures(runs)
    assert series["probe_ms_mean_each"] == [1.5, None, 2.6], "each run's speed, or none"
    assert series["runs"] == runs
    assert series["cpu_ms_per_turn_each"] == [3.4, 2.9, 4.1]
    assert series["cpu_ms_per_turn_median"] == 3.4
    assert series["cpu_ms_per_turn_min"] == 2.9
    assert series["turn_errors"] == 1, "an error in any run is the series' error"


@TWO_CORES
def test_pinning_puts_the_worker_alone_on_a_core_and_the_rest_elsewhere() -> None:
    # Two real processes with a second thread each, as the worker and the backend have.
    idle = (
        "import threading, time; "
        "threading.Thread(target=time.sleep, args=(60,)).start(); time.sleep(60)"
    )
    worker = subprocess.Popen([sys.executable, "-c", idle])
    backend = subprocess.Popen([sys.executable, "-c", idle])
    try:
        for proc in (worker, backend):
            # Until its second thread runs (no deadline but the process's life: a busy machine
            # may take long to start Python); one that died is a failure, not a wait.
            while len(os.listdir(f"/proc/{proc.pid}/task")) < 2:
                assert proc.poll() is None, "the idle process ended before its thread started"
                time.sleep(0.05)
        cores = sorted(os.sched_getaffinity(0))
        mine: list[set[int]] = []

        def pin() -> None:  # in a thread of its own: the test's own thread keeps its cores
            assert pin_apart([worker.pid], backend.pid)
            mine.append(os.sched_getaffinity(0))

        thread = threading.Thread(target=pin)
        thread.start()
        thread.join()

        def threads_of(pid: int) -> list[set[int]]:
            return [os.sched_getaffinity(int(t)) for t in os.listdir(f"/proc/{pid}/task")]

        assert all(c == {cores[-1]} for c in threads_of(worker.pid))
        assert all(c == set(cores[:-1]) for c in threads_of(backend.pid))
        assert mine == [set(cores[:-1])]
        assert os.sched_getaffinity(0) == set(cores)
    finally:
        worker.kill()
        backend.kill()
        worker.wait()
        backend.wait()
