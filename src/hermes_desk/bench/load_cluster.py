"""The processes a load run drives, all on 127.0.0.1: the demo backend, ``serve`` workers, the
load balancer (nginx with the repository's ``deploy/nginx.conf``), and a private Redis and
PostgreSQL when the run brings its own.

Used by ``hermes-desk bench load`` and ``scripts/load_faults.py``. Every process is a child of
the caller, started on a free port and stopped (or SIGKILLed) by pid.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

__all__ = [
    "BACKEND_LATENCY_MS",
    "DEPLOY",
    "Backend",
    "Cluster",
    "LoadBalancer",
    "PrivatePostgres",
    "PrivateRedis",
    "Worker",
    "cpu_seconds",
    "free_port",
    "make_customers",
    "open_fds",
    "postgres_database_size",
    "redis_used_memory",
    "rss_bytes",
    "shared_store_env",
]

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
#: the demo backend's realistic latencies (ms) per route, set before a run
BACKEND_LATENCY_MS: Mapping[str, int] = {
    "get_order": 40, "get_shipment": 60, "list_orders": 40, "get_user": 20, "check_phone": 30,
    "send_sms": 150, "verify_sms": 60, "reset_password": 120, "create_return": 120,
    "issue_refund": 150, "create_ticket": 80, "add_ticket_note": 60, "get_support": 20,
}  # fmt: skip
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PAST_ANY_SEQ = 2**62  # asks the backend's log for no entries, only its last sequence number


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a live process has used (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def open_fds(pid: int) -> int:
    """File descriptors a live process holds open (``/proc/<pid>/fd``)."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def make_customers(count: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The demo data grown to ``count`` customers (each a copy of a sample customer with their
    orders and parcels, under new ids and phones), and the customers as the agents see them.

    The SMS outbox keeps a phone's latest code only, so concurrent password resets need distinct
    phones: more customers than agents resetting at once."""
    from demo_backend.state import load_sample_data

    data = load_sample_data()
    users, orders, shipments = data["users"], data["orders"], data["shipments"]
    by_order = {s["order_id"]: s for s in shipments}
    grown = copy.deepcopy(data)
    customers = []
    for i in range(count):
        base = users[i % len(users)]
        user_id, phone = f"u{5000 + i}", f"139{70000000 + i:08d}"
        grown["users"].append({**base, "user_id": user_id, "phone": phone})
        grown["payment_methods"][user_id] = data["payment_methods"].get(base["user_id"], [])
        grown["supports"][user_id] = data["supports"].get(base["user_id"], {})
        mine = []
        for j, order in enumerate(o for o in orders if o["user_id"] == base["user_id"]):
            order_id = f"2025{i:06d}{j:02d}"
            grown["orders"].append({**order, "order_id": order_id, "user_id": user_id})
            if order["order_id"] in by_order:
                grown["shipments"].append({**by_order[order["order_id"]], "order_id": order_id})
                mine.append(order_id)
        customers.append({"user": user_id, "phone": phone, "orders": mine or [order_id]})
    return grown, customers


def _wait_http(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up in {timeout_s:g} s")


def _stop(proc: subprocess.Popen[bytes] | None, *, kill: bool = False) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@dataclass
class Backend:
    """The demo backend with the grown data and realistic latencies."""

    workdir: Path
    data: dict[str, Any]
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, latency_ms: Mapping[str, int] = BACKEND_LATENCY_MS) -> None:
        data_file = self.workdir / "backend-data.json"
        data_file.write_text(json.dumps(self.data, ensure_ascii=False), encoding="utf-8")
        with (self.workdir / "backend.log").open("ab") as log:  # the child keeps its own copy
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "demo_backend", "--port", str(self.port), "--seed", "7",
                 "--data", str(data_file)],
                stdout=log, stderr=log, cwd=ROOT,
            )  # fmt: skip
        _wait_http(self.url + "/health", self.proc)
        self.set_latency(latency_ms)

    def set_latency(self, latency_ms: Mapping[str, int]) -> None:
        for name, ms in latency_ms.items():
            self.fault(name, {"latency_ms": ms})

    def fault(self, name: str, body: Mapping[str, Any]) -> None:
        httpx.put(f"{self.url}/_faults/{name}", json=dict(body), timeout=10).raise_for_status()

    def clear_faults(self) -> None:
        httpx.delete(f"{self.url}/_faults", timeout=10).raise_for_status()

    def log(self, since: int = 0) -> list[dict[str, Any]]:
        """The requests the backend answered after sequence number ``since`` (it keeps the
        last 10,000)."""
        response = httpx.get(f"{self.url}/_log", params={"since": since}, timeout=60)
        response.raise_for_status()
        entries: list[dict[str, Any]] = response.json()["entries"]
        return entries

    def last_seq(self) -> int:
        """The sequence number of the last request the backend logged."""
        response = httpx.get(f"{self.url}/_log", params={"since": _PAST_ANY_SEQ}, timeout=60)
        response.raise_for_status()
        return int(response.json()["last_seq"])

    def stop(self) -> None:
        _stop(self.proc)


@dataclass
class Worker:
    """One ``hermes-desk serve`` process on its own port."""

    index: int
    workdir: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    python: str = sys.executable  # another interpreter (``bench turn-cpu --against-python``)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, *, wait: bool = True) -> None:
        with (self.workdir / f"worker-{self.index}.log").open("ab") as log:
            self.proc = subprocess.Popen(
                [self.python, "-m", "hermes_desk", "serve", "--port", str(self.port)],
                stdout=log, stderr=log, cwd=self.workdir, env={**os.environ, **self.env},
            )  # fmt: skip
        if wait:
            self.wait_up()

    def wait_up(self) -> None:
        assert self.proc is not None
        _wait_http(self.url + "/healthz", self.proc)
        self.starts += 1

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def kill(self) -> None:
        _stop(self.proc, kill=True)

    def stop(self) -> None:
        _stop(self.proc)


class LoadBalancer:
    """nginx running the repository's ``deploy/nginx.conf`` (the http-level file a server
    includes from ``/etc/nginx/conf.d``), its upstream and port set to this run's, inside a
    minimal main configuration under the run's folder."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.binary = shutil.which("nginx") or "/usr/sbin/nginx"
        self.root = workdir / "nginx"
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @staticmethod
    def available() -> bool:
        return Path(shutil.which("nginx") or "/usr/sbin/nginx").exists()

    def render(self, upstreams: Sequence[int]) -> Path:
        """Write the site file with these worker ports, and the main file around it."""
        (self.root / "logs").mkdir(parents=True, exist_ok=True)
        site = (DEPLOY / "nginx.conf").read_text(encoding="utf-8")
        servers = "".join(f"    server 127.0.0.1:{port} max_fails=0;\n" for port in upstreams)
        site = re.sub(r"(?:    server 127\.0\.0\.1:\d+[^\n]*\n)+", lambda m: servers, site)
        site = re.sub(r"listen 127\.0\.0\.1:8000;", f"listen 127.0.0.1:{self.port};", site)
        (self.root / "hermes-desk.conf").write_text(site, encoding="utf-8")
        main = self.root / "nginx.conf"
        main.write_text(
            "daemon off;\nworker_processes 1;\npid logs/nginx.pid;\nerror_log logs/error.log;\n"
            "events { worker_connections 4096; }\n"
            "http {\n  access_log off;\n  client_body_temp_path logs/body;\n"
            "  proxy_temp_path logs/proxy;\n  fastcgi_temp_path logs/fastcgi;\n"
            "  uwsgi_temp_path logs/uwsgi;\n  scgi_temp_path logs/scgi;\n"
            "  include hermes-desk.conf;\n}\n",
            encoding="utf-8",
        )
        return main

    def start(self, upstreams: Sequence[int]) -> None:
        main = self.render(upstreams)
        with (self.root / "logs" / "stdout.log").open("ab") as log:
            self.proc = subprocess.Popen(
                [self.binary, "-p", str(self.root), "-c", str(main)], stdout=log, stderr=log
            )
        _wait_http(self.url + "/healthz", self.proc)

    def reconfigure(self, upstreams: Sequence[int]) -> None:
        """New upstreams without dropping connections (``SIGHUP``: nginx reloads)."""
        self.render(upstreams)
        assert self.proc is not None
        self.proc.send_signal(signal.SIGHUP)
        time.sleep(1.0)

    def stop(self) -> None:
        _stop(self.proc)


class PrivateRedis:
    """A redis-server of the run's own, on its own port, with the repository's
    ``deploy/redis.conf`` (append-only file, fsync on every write): restarting it is a fault
    only this run sees."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.dir = workdir / "redis"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        with (self.dir / "redis.log").open("ab") as log:
            self.proc = subprocess.Popen(
                ["redis-server", str(DEPLOY / "redis.conf"), "--port", str(self.port),
                 "--bind", "127.0.0.1", "--dir", str(self.dir), "--daemonize", "no"],
                stdout=log, stderr=log,
            )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            probe = subprocess.run(
                ["redis-cli", "-p", str(self.port), "ping"], capture_output=True, text=True
            )
            if probe.stdout.strip() == "PONG":
                return
            time.sleep(0.1)
        raise RuntimeError("private redis did not come up")

    def used_memory(self) -> int:
        out = subprocess.run(
            ["redis-cli", "-p", str(self.port), "info", "memory"], capture_output=True, text=True
        ).stdout
        found = re.search(r"used_memory:(\d+)", out)
        return int(found.group(1)) if found else 0

    def kill(self) -> None:
        _stop(self.proc, kill=True)

    def stop(self) -> None:
        _stop(self.proc)


def redis_used_memory(url: str) -> int:
    """``used_memory`` of the Redis at ``url`` (INFO memory), in bytes."""
    import redis

    client = redis.Redis.from_url(url, socket_timeout=10)
    try:
        return int(client.info("memory")["used_memory"])
    finally:
        client.close()


def postgres_database_size(dsn: str) -> int:
    """Size on disk of the PostgreSQL database at ``dsn`` (``pg_database_size``), in bytes."""
    import psycopg

    with psycopg.connect(dsn, connect_timeout=10) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0


class PrivatePostgres:
    """A PostgreSQL cluster of the run's own (``initdb`` under the run's folder, its own port
    and socket directory), started and stopped with ``pg_ctl``. As root the server runs as the
    ``postgres`` user (PostgreSQL refuses to run as root)."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.dir = workdir / "pg"
        self.port = port or free_port()
        self.bin = _pg_bin()
        self.prefix: list[str] = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.prefix:  # the postgres user must reach its folder inside the run's
            workdir.chmod(0o755)

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *argv: str) -> None:
        subprocess.run([*self.prefix, *argv], check=True, capture_output=True)

    def init(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        if self.prefix:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run(f"{self.bin}/initdb", "-D", str(self.dir / "data"), "-A", "trust", "-U",
                  "postgres")  # fmt: skip

    def start(self) -> None:
        self._run(
            f"{self.bin}/pg_ctl", "-D", str(self.dir / "data"), "-l", str(self.dir / "pg.log"),
            "-w", "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1", "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._run(f"{self.bin}/pg_ctl", "-D", str(self.dir / "data"), "-m", mode, "-w", "stop")

    @staticmethod
    def available() -> bool:
        return _pg_bin() != ""


def _pg_bin() -> str:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists():
            return str(candidate)
    found = shutil.which("initdb")
    return str(Path(found).parent) if found else ""


def shared_store_env(redis_url: str, postgres_dsn: str) -> dict[str, str]:
    """The settings of ``deploy/hermes-desk.env`` (the shared stores), with this run's URLs."""
    env: dict[str, str] = {}
    for line in (DEPLOY / "hermes-desk.env").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, value = line.split("=", 1)
        if name.endswith("REDIS_URL"):
            value = redis_url
        elif name.endswith("POSTGRES_DSN"):
            value = postgres_dsn
        env[name] = value
    return {k: v for k, v in env.items() if k.startswith(("HERMES_SESSIONS", "HERMES_TOOLS",
            "HERMES_WORKFLOWS", "HERMES_ACTIONS", "HERMES_MEMORY"))}  # fmt: skip


@dataclass
class Cluster:
    """Backend, workers and (with more than one worker, or when asked) the load balancer."""

    workdir: Path
    workers: list[Worker]
    backend: Backend
    balancer: LoadBalancer | None = None
    redis: PrivateRedis | None = None
    postgres: PrivatePostgres | None = None
    customers: list[dict[str, Any]] = field(default_factory=list)
    #: where the workers keep memory with the shared stores (given, or the private cluster's)
    postgres_dsn: str | None = None
    #: the Redis the workers share (given, or the private one's)
    redis_url: str | None = None

    @property
    def archive_dsn(self) -> str | None:
        """Where the workers archive closed sessions when not in their SQLite file."""
        env = self.workers[0].env if self.workers else {}
        if env.get("HERMES_SESSIONS__ARCHIVE") == "postgres":
            return env.get("HERMES_SESSIONS__ARCHIVE_POSTGRES_DSN") or None
        return None

    @property
    def url(self) -> str:
        return self.balancer.url if self.balancer is not None else self.workers[0].url

    def start(self, active: int | None = None) -> None:
        self.backend.start()
        first, *rest = self.workers
        first.start()  # the first start trains the intent model once, into the shared folder
        for worker in rest:
            worker.start(wait=False)
        for worker in rest:
            worker.wait_up()
        if self.balancer is not None:
            self.balancer.start([w.port for w in self.workers[: active or len(self.workers)]])

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()
        if self.balancer is not None:
            self.balancer.stop()
        self.backend.stop()
        if self.redis is not None:
            self.redis.stop()
        if self.postgres is not None:
            with contextlib.suppress(subprocess.CalledProcessError):
                self.postgres.stop()


def build_cluster(
    workdir: Path,
    *,
    workers: int,
    stores: str,
    customers: int,
    model_dir: Path | None,
    redis_url: str | None = None,
    postgres_dsn: str | None = None,
    balancer: bool | None = None,
    private_postgres: bool = False,
) -> Cluster:
    """Lay out a cluster (nothing started yet except a private Redis or PostgreSQL).

    ``stores``: ``embedded`` (SQLite in one data folder; one worker) or ``shared`` (Redis for
    sessions, breakers, snapshots and proposals, PostgreSQL for memory). Without ``redis_url`` a
    private Redis is started; without ``postgres_dsn`` a private PostgreSQL cluster is
    (``private_postgres``) — or the memory stays in SQLite when neither is given."""
    workdir.mkdir(parents=True, exist_ok=True)
    data, people = make_customers(customers)
    backend = Backend(workdir, data)
    env = {
        "HERMES_SERVICE__BACKEND_URL": backend.url,
        "HERMES_SERVICE__DATA_DIR": str(workdir / "data"),
        "HERMES_NLU__MODEL_DIR": str(model_dir or workdir / "models"),
    }
    redis = postgres = None
    if stores == "shared":
        if redis_url is None:
            redis = PrivateRedis(workdir)
            redis.start()
            redis_url = redis.url(0)
        if postgres_dsn is None and private_postgres:
            postgres = PrivatePostgres(workdir)
            postgres.init()
            postgres.start()
            postgres_dsn = postgres.dsn
        shared = shared_store_env(redis_url, postgres_dsn or "")
        if postgres_dsn is None:  # memory and the archive stay in SQLite
            shared = {
                k: v
                for k, v in shared.items()
                if not k.startswith(("HERMES_MEMORY", "HERMES_SESSIONS__ARCHIVE"))
            }
        env.update(shared)
    elif workers > 1:
        raise ValueError("several workers need the shared stores (stores='shared')")
    pool = [Worker(i, workdir, env) for i in range(workers)]
    lb = LoadBalancer(workdir) if (balancer if balancer is not None else workers > 1) else None
    return Cluster(
        workdir, pool, backend, lb, redis, postgres, people, postgres_dsn,
        redis_url if stores == "shared" else None,
    )  # fmt: skip
