"""Faults under load: what a contact center's agents see when a worker, Redis, PostgreSQL or the
business backend fails mid-conversation.

    .venv/bin/python scripts/load_faults.py [--users 30] [--workers 2] [--json]

Lays out the shared deployment of ``deploy/`` on 127.0.0.1 — ``--workers`` ``serve`` processes
behind nginx, a private Redis (``deploy/redis.conf``: append-only, fsync on every write) on a
port of its own, a private PostgreSQL cluster (``initdb`` under the run's folder, its own port)
for memory, the demo backend with realistic latencies — and runs the Locust agents of
``hermes-desk bench load`` against it. Under that load, one after the other with quiet time in
between:

1. ``kill -9`` a worker (started again after ``--restart-after`` seconds, as systemd would);
2. ``kill -9`` the private Redis, then start it again on its append-only file;
3. stop the private PostgreSQL (``pg_ctl -m immediate``), then start it again;
4. make the backend slow (2.5 s on order and parcel look-ups) for ``--fault-s`` seconds;
5. make the backend fail (half of all its answers 503) for ``--fault-s`` seconds.

Nothing outside the run is touched: the machine's own Redis and PostgreSQL keep running.
Without ``initdb`` (or with ``--postgres-dsn``) the PostgreSQL restart is skipped and said so.

One table: per fault, the turns answered and the failed turn attempts during it (the agents
retry a failed turn, reading the transcript first), and the recovery time (from the fault until
the first turn answered after its last failure). Then the run's checks: turns answered and then
lost (every answered turn at its index in the transcript kept for it, live or archived) must be
0, and writes executed twice for one idempotency key (the backend's log) must be 0. Exit 1 when
either is not.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_desk.bench.load import (
    LoadStep,
    check_transcripts,
    ledger_records,
    locust_totals,
    start_locust,
    writes_executed,
)
from hermes_desk.bench.load_cluster import (
    BACKEND_LATENCY_MS,
    Cluster,
    PrivatePostgres,
    build_cluster,
)


@dataclass
class Fault:
    name: str
    inject: Callable[[], None]
    heal: Callable[[], None] | None
    started: float = 0.0
    ended: float = 0.0
    skipped: str = ""


def faults(cluster: Cluster, args: argparse.Namespace) -> list[Fault]:
    def kill_worker() -> None:
        cluster.workers[0].kill()

    def restart_worker() -> None:
        time.sleep(args.restart_after)
        cluster.workers[0].start()

    def kill_redis() -> None:
        assert cluster.redis is not None
        cluster.redis.kill()

    def start_redis() -> None:
        assert cluster.redis is not None
        time.sleep(args.restart_after)
        cluster.redis.start()

    def stop_postgres() -> None:
        assert cluster.postgres is not None
        cluster.postgres.stop("immediate")

    def start_postgres() -> None:
        assert cluster.postgres is not None
        time.sleep(args.restart_after)
        cluster.postgres.start()

    def slow() -> None:
        for name in ("get_order", "get_shipment"):
            cluster.backend.fault(name, {"latency_ms": 2500})

    def failing() -> None:
        cluster.backend.fault("*", {"error_rate": 0.5, "status_code": 503})

    def heal_backend() -> None:
        time.sleep(args.fault_s)
        cluster.backend.clear_faults()
        cluster.backend.set_latency(BACKEND_LATENCY_MS)

    out = [
        Fault("kill -9 a worker (restarted)", kill_worker, restart_worker),
        Fault("kill -9 Redis (restarted)", kill_redis, start_redis),
        Fault("PostgreSQL stopped (immediate) and restarted", stop_postgres, start_postgres),
        Fault("backend slow (2.5 s look-ups)", slow, heal_backend),
        Fault("backend failing (50 % 503)", failing, heal_backend),
    ]
    if cluster.postgres is None:
        out[2].skipped = "no private PostgreSQL (initdb missing, or --postgres-dsn given)"
    return out


def window_figures(records: list[dict[str, Any]], fault: Fault, grace_s: float) -> dict[str, Any]:
    end = fault.ended + grace_s
    inside = [r for r in records if fault.started <= r["at"] <= end]
    failures = [r for r in inside if r["kind"] == "fail"]
    answered = [r for r in inside if r["kind"] == "turn"]
    recovery = 0.0
    if failures:
        last = max(r["at"] for r in failures)
        after = [r["at"] for r in records if r["kind"] == "turn" and r["at"] > last]
        recovery = (min(after) if after else end) - fault.started
    return {
        "fault": fault.name,
        "turns_answered": len(answered),
        "turn_attempts_failed": len(failures),
        "recovery_s": round(recovery, 1),
        "skipped": fault.skipped,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir or tempfile.mkdtemp(prefix="hermes-load-faults-"))
    private_pg = args.postgres_dsn is None and PrivatePostgres.available()
    cluster = build_cluster(
        work, workers=args.workers, stores="shared", customers=args.customers,
        model_dir=Path(args.model_dir) if args.model_dir else None,
        postgres_dsn=args.postgres_dsn, balancer=True, private_postgres=private_pg,
    )  # fmt: skip
    customers_file = work / "customers.json"
    customers_file.write_text(json.dumps(cluster.customers), encoding="utf-8")
    plan = faults(cluster, args)
    duration = args.warmup_s + len(plan) * (args.fault_s + args.quiet_s) + args.quiet_s
    try:
        print(f"starting {args.workers} workers, private Redis, "
              f"{'private PostgreSQL' if private_pg else 'PostgreSQL ' + str(args.postgres_dsn)}"
              f", nginx; data in {work}", file=sys.stderr)  # fmt: skip
        cluster.start()
        locust, ledger, prefix = start_locust(
            cluster.url, LoadStep(args.users, duration, args.workers), work,
            customers_file=customers_file, backend_url=cluster.backend.url,
            think=(args.think, args.think / 3), approve_think=(0.5, 0.1), ws_share=0.5,
            conversations=0, seed=args.seed, tag="faults",
        )  # fmt: skip
        time.sleep(args.warmup_s)
        for fault in plan:
            if fault.skipped:
                print(f"skipped: {fault.name}: {fault.skipped}", file=sys.stderr)
                continue
            print(f"fault: {fault.name}", file=sys.stderr)
            fault.started = time.time()
            fault.inject()
            if fault.heal is not None:
                fault.heal()
            fault.ended = time.time()
            time.sleep(args.quiet_s)
        locust.wait()
        records = ledger_records(ledger)
        checked, lost = check_transcripts(
            records, cluster.url, work / "data" / "hermes.db", archive_dsn=cluster.archive_dsn
        )
        log = cluster.backend.log()
        totals = locust_totals(prefix)
    finally:
        if "locust" in locals() and locust.poll() is None:
            locust.kill()
        cluster.stop()
    executed = writes_executed(log)
    twice = sorted(f"{e}:{k}" for (e, k), n in executed.items() if n > 1)
    return {
        "users": args.users,
        "workers": args.workers,
        "loadavg_1m": round(os.getloadavg()[0], 2),
        "faults": [
            window_figures(records, f, args.grace_s)
            if not f.skipped
            else {"fault": f.name, "skipped": f.skipped}
            for f in plan
        ],
        "turns_answered": sum(1 for r in records if r["kind"] == "turn"),
        "turns_stored_answer_lost": sum(1 for r in records if r["kind"] == "unacked"),
        "turns_checked": checked,
        "turns_acknowledged_then_lost": len(lost),
        "lost_examples": lost[:5],
        "writes_executed": sum(executed.values()),
        "writes_executed_twice": len(twice),
        "twice_examples": twice[:5],
        "conversations_closed": sum(1 for r in records if r["kind"] == "closed"),
        "conversations_abandoned": sum(1 for r in records if r["kind"] == "abandoned"),
        "requests": totals["requests"],
        "request_failures": totals["failures"],
        "failure_examples": totals["failure_examples"],
        "workdir": str(work),
    }


def print_table(report: dict[str, Any]) -> None:
    rows = [("fault", "answered", "failed attempts", "recovery s")]
    for f in report["faults"]:
        if f.get("skipped"):
            rows.append((f["fault"], "-", "-", f"skipped: {f['skipped']}"))
        else:
            rows.append(
                (f["fault"], str(f["turns_answered"]), str(f["turn_attempts_failed"]),
                 f"{f['recovery_s']:g}")
            )  # fmt: skip
    rows.append(
        (
            "turns acknowledged then lost (must be 0)",
            str(report["turns_checked"]),
            str(report["turns_acknowledged_then_lost"]),
            "",
        )
    )
    rows.append(("writes executed twice (must be 0)", str(report["writes_executed"]),
                 str(report["writes_executed_twice"]), ""))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for i, row in enumerate(rows):
        print(" | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
        if i == 0:
            print("-|-".join("-" * w for w in widths))
    print(
        f"\n{report['users']} agents, {report['workers']} workers behind nginx; "
        f"{report['turns_answered']} turns answered "
        f"({report['turns_stored_answer_lost']} more stored with the answer lost), "
        f"{report['conversations_closed']} conversations closed, "
        f"{report['conversations_abandoned']} abandoned; load average {report['loadavg_1m']}; "
        f"data in {report['workdir']}"
    )
    for example in report["lost_examples"] + report["twice_examples"]:
        print(f"  {example}")
    passed = not report["turns_acknowledged_then_lost"] and not report["writes_executed_twice"]
    print("PASSED" if passed else "FAILED")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=30, help="simulated agents")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--customers", type=int, default=200)
    parser.add_argument("--think", type=float, default=1.0, help="mean think time, s")
    parser.add_argument("--warmup-s", type=float, default=20.0)
    parser.add_argument(
        "--fault-s", type=float, default=10.0, help="how long a backend fault lasts"
    )
    parser.add_argument("--quiet-s", type=float, default=15.0, help="quiet time between faults")
    parser.add_argument("--grace-s", type=float, default=5.0, help="counted after a fault, s")
    parser.add_argument("--restart-after", type=float, default=2.0, help="s before a restart")
    parser.add_argument("--postgres-dsn", default=None, help="use this PostgreSQL (no restart)")
    parser.add_argument("--model-dir", default=os.environ.get("HERMES_NLU__MODEL_DIR"))
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    report = run(args)
    if args.json:
        print(json.dumps(report, indent=1, ensure_ascii=False))
    else:
        print_table(report)
    lost, twice = report["turns_acknowledged_then_lost"], report["writes_executed_twice"]
    return 0 if not lost and not twice else 1


if __name__ == "__main__":
    raise SystemExit(main())
