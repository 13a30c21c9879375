"""``/readyz`` pings every configured store (session, breaker, snapshot, proposal, memory,
feedback, archive): 200 listing them when all answer, 503 with a JSON body naming each one that
does not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread

STORES = ["session", "breaker", "snapshot", "proposal", "memory", "feedback", "archive"]
#: Nothing listens on port 1: a connection there is refused at once.
DOWN_REDIS = "redis://127.0.0.1:1/0"
DOWN_POSTGRES = "postgresql://127.0.0.1:1/test?connect_timeout=1"


@pytest.fixture(autouse=True)
def _trained_pack_model(pack_model_dir: Path) -> Path:
    return pack_model_dir


def _settings(data_dir: Path, **sections: Any) -> Settings:
    # No backend runs: readiness is about the stores, and nothing here calls a tool.
    return Settings(
        service={"data_dir": data_dir, "backend_url": "http://127.0.0.1:1"},
        workflows={"watchdog_interval_s": 3600, **sections.pop("workflows", {})},
        **sections,
    )


def _readyz(settings: Settings, *then: tuple[str, str, dict[str, Any]]) -> list[httpx.Response]:
    """Start the service, ask ``/readyz``, then each ``(method, path, json)``; stop it."""
    with (
        serve_in_thread(create_app(settings)) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        answers = [client.get("/readyz")]
        answers += [client.request(method, path, json=body) for method, path, body in then]
        return answers


def test_ready_when_every_embedded_store_answers(tmp_path: Path) -> None:
    [ready] = _readyz(_settings(tmp_path))
    assert ready.status_code == 200
    body = ready.json()
    assert body["status"] == "ready" and body["stores"] == STORES


def test_not_ready_while_the_redis_session_store_is_down(tmp_path: Path) -> None:
    settings = _settings(tmp_path, sessions={"store": "redis", "redis_url": DOWN_REDIS})
    ready, opened = _readyz(settings, ("POST", "/v1/sessions", {"user_id": "u1001"}))
    assert ready.status_code == 503
    assert ready.headers["content-type"] == "application/json"
    error = ready.json()["error"]
    assert error["code"] == "not_ready"
    assert set(error["stores"]) == {"session"}, "the other stores answer"
    assert "unreachable" in error["stores"]["session"]
    assert "session" in error["message"]
    assert opened.status_code == 503, "readiness tells the truth about what requests get"


def test_not_ready_names_every_store_that_is_down(tmp_path: Path) -> None:
    redis = {"store": "redis", "redis_url": DOWN_REDIS}
    settings = _settings(
        tmp_path,
        sessions={**redis, "archive": "postgres", "archive_postgres_dsn": DOWN_POSTGRES},
        tools={"breaker": redis},
        actions=redis,
        feedback=redis,
        memory={"store": "postgres", "postgres_dsn": DOWN_POSTGRES},
    )
    [ready] = _readyz(settings)
    assert ready.status_code == 503
    down = {"session", "breaker", "proposal", "memory", "feedback", "archive"}
    assert set(ready.json()["error"]["stores"]) == down


@pytest.mark.redis
@pytest.mark.postgres
def test_ready_when_every_shared_store_answers(
    tmp_path: Path, redis_url: str, postgres_dsn: str
) -> None:
    redis = {"store": "redis", "redis_url": redis_url}
    settings = _settings(
        tmp_path,
        sessions={**redis, "archive": "postgres", "archive_postgres_dsn": postgres_dsn},
        tools={"breaker": redis},
        workflows={"snapshot_store": "redis", "redis_url": redis_url},
        actions=redis,
        feedback=redis,
        memory={"store": "postgres", "postgres_dsn": postgres_dsn},
    )
    [ready] = _readyz(settings)
    assert ready.status_code == 200, ready.text
    assert ready.json()["stores"] == STORES
