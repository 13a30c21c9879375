"""Start-up checks that name the problem before anything heavy runs (no training, no stores).

Every problem names the setting it comes from, so ``serve`` and ``config check`` can print
``service.data_dir: /srv/hermes is a file, not a folder`` instead of a traceback from deep in
the runtime. The checks only read, bind and connect; the one file they write (to learn whether a
folder is writable) is removed at once.
"""

from __future__ import annotations

import errno
import importlib.util
import shutil
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from hermes_desk.config import Settings
from hermes_desk.errors import HermesError

__all__ = ["Problem", "check_port", "check_settings"]

#: how long a store may take to answer the start-up check
CONNECT_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Problem:
    setting: str
    message: str

    def __str__(self) -> str:
        return f"{self.setting}: {self.message}"


def check_settings(settings: Settings, *, stores: bool = True) -> list[Problem]:
    """Everything the service will use: folders, the pack, the model chain's extras, MCP
    commands and (with ``stores``) the Redis and PostgreSQL servers configured."""
    problems = [
        *_writable_folder("service.data_dir", settings.service.data_dir),
        *(
            _writable_folder("nlu.model_dir", settings.nlu.model_dir)
            if settings.nlu.model_dir is not None
            else []
        ),
        *_pack(settings),
        *_model_chain(settings),
        *_mcp_commands(settings),
    ]
    if stores:
        problems += _stores(settings)
    return problems


def check_port(host: str, port: int, setting: str = "service.port") -> list[Problem]:
    """The address can be bound now (nothing else listens there)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # uvicorn sets SO_REUSEADDR too, so a port in TIME_WAIT is not reported as taken
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return [Problem(setting, f"{host}:{port} is already in use by another process")]
            return [Problem(setting, f"cannot listen on {host}:{port}: {exc.strerror or exc}")]
    return []


def _writable_folder(setting: str, path: Path) -> list[Problem]:
    if path.exists() and not path.is_dir():
        return [Problem(setting, f"{path} is a file, not a folder")]
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return [Problem(setting, f"{existing} (a parent of {path}) is a file, not a folder")]
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".hermes-write-check-"):
            pass
    except OSError as exc:
        where = "" if existing == path else f" (its nearest existing parent {existing})"
        return [Problem(setting, f"{path}{where} is not writable: {exc.strerror or exc}")]
    return []


def _pack(settings: Settings) -> list[Problem]:
    from hermes_desk.packs import load_pack

    variables = {"backend_url": settings.service.backend_url.rstrip("/")}
    try:
        load_pack(settings.service.pack, variables=variables)
    except HermesError as exc:
        return [Problem("service.pack", str(exc))]
    return []


def _model_chain(settings: Settings) -> list[Problem]:
    models = [link for link in settings.llm.chain if link != "offline"]
    if models and importlib.util.find_spec("litellm") is None:
        return [
            Problem(
                "llm.chain",
                f"{', '.join(models)} need the 'llm' extra (pip install 'hermes-desk[llm]')",
            )
        ]
    return []


def _mcp_commands(settings: Settings) -> list[Problem]:
    problems = []
    for index, server in enumerate(settings.llm.mcp_servers):
        if server.command and shutil.which(server.command[0]) is None:
            problems.append(
                Problem(
                    f"llm.mcp_servers[{index}].command",
                    f"{server.command[0]!r} (MCP server {server.name}) is not on PATH",
                )
            )
    return problems


def _stores(settings: Settings) -> list[Problem]:
    redis_urls = {
        "sessions.redis_url": (settings.sessions.store == "redis", settings.sessions.redis_url),
        "tools.breaker.redis_url": (
            settings.tools.breaker.store == "redis",
            settings.tools.breaker.redis_url,
        ),
        "workflows.redis_url": (
            settings.workflows.snapshot_store == "redis",
            settings.workflows.redis_url,
        ),
        "actions.redis_url": (settings.actions.store == "redis", settings.actions.redis_url),
    }
    problems = [
        problem
        for setting, (used, url) in redis_urls.items()
        if used
        for problem in _redis(setting, url)
    ]
    if settings.memory.store == "postgres":
        problems += _postgres("memory.postgres_dsn", settings.memory.postgres_dsn)
    return problems


def _redis(setting: str, url: str) -> list[Problem]:
    if urlparse(url).scheme not in {"redis", "rediss", "unix"}:
        return [Problem(setting, f"{url!r} is not a redis:// URL")]
    import redis

    client = redis.Redis.from_url(
        url, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=CONNECT_TIMEOUT_S
    )
    try:
        client.ping()
    except (redis.RedisError, OSError) as exc:
        return [Problem(setting, f"Redis at {_safe(url)} does not answer: {exc}")]
    finally:
        client.close()
    return []


def _postgres(setting: str, dsn: str) -> list[Problem]:
    if importlib.util.find_spec("psycopg") is None:
        return [Problem(setting, "PostgreSQL needs the 'postgres' extra")]
    import psycopg

    try:
        with psycopg.connect(dsn, connect_timeout=int(CONNECT_TIMEOUT_S)):
            pass
    except psycopg.Error as exc:
        return [Problem(setting, f"PostgreSQL at {_safe(dsn)} does not answer: {exc}")]
    return []


def _safe(url: str) -> str:
    """The URL without its password (D3: secrets never reach logs)."""
    parsed = urlparse(url)
    if parsed.password is None:
        return url
    return url.replace(f":{parsed.password}@", ":***@")
