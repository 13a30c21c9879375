"""Shared fixtures: real Redis and PostgreSQL when they run, a clear skip when they don't.

In CI (``CI=true``) a missing server is an error, not a skip: the contract suites must run there.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_desk.testing import FakeClock

# Services built by the tests share one intent-model cache (keyed by the training data's
# fingerprint), so the pack's model trains once per machine instead of once per test.
os.environ.setdefault(
    "HERMES_NLU__MODEL_DIR", str(Path(tempfile.gettempdir()) / "hermes-desk-test-models")
)

REDIS_URL = os.environ.get("HERMES_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
POSTGRES_DSN = os.environ.get("HERMES_TEST_POSTGRES_DSN", "postgresql://127.0.0.1:5432/test")
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _unavailable(what: str, exc: Exception) -> None:
    message = f"{what} is not reachable ({exc}); start it or set the HERMES_TEST_* URL"
    if IN_CI:
        pytest.fail(f"CI must run the {what} tests: {message}")
    pytest.skip(message)


def _train_pack_model() -> Path:
    """Train (or load from the shared cache) the bundled pack's intent model; its folder."""
    from hermes_desk.config import Settings
    from hermes_desk.packs import load_pack
    from hermes_desk.runtime import load_intent_model, load_sentiment_model

    settings = Settings()
    pack = load_pack(settings.service.pack)
    load_intent_model(pack, settings)
    load_sentiment_model(pack, settings)
    return settings.model_dir


def pytest_collection_finish(session: pytest.Session) -> None:
    """Train the pack's model once, before any test runs, when a collected test serves it:
    outside every test's time limit, and before any server's start-up."""
    if any("pack_model_dir" in getattr(item, "fixturenames", ()) for item in session.items):
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line("preparing the pack's intent model (trained once per version) …")
        _train_pack_model()


@pytest.fixture(scope="session")
def pack_model_dir() -> Path:
    """The folder holding the bundled pack's trained intent model; servers built in tests load
    it from there instead of training their own."""
    return _train_pack_model()


@pytest.fixture
def fake_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def tmp_db_path(tmp_path: Path) -> Path:
    return tmp_path / "hermes.db"


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis URL whose keys are wiped after the test (database 15 by default)."""
    try:
        import redis
    except ImportError as exc:  # pragma: no cover - the extra is installed by make test
        _unavailable("Redis", exc)
        raise
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except Exception as exc:
        _unavailable("Redis", exc)
    client.flushdb()
    yield REDIS_URL
    client.flushdb()
    client.close()


@pytest.fixture
def postgres_dsn() -> Iterator[str]:
    """A PostgreSQL DSN with a fresh schema per test, dropped afterwards."""
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover
        _unavailable("PostgreSQL", exc)
        raise
    schema = f"t_{uuid.uuid4().hex[:12]}"
    try:
        conn = psycopg.connect(POSTGRES_DSN, autocommit=True)
    except Exception as exc:
        _unavailable("PostgreSQL", exc)
        raise
    conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in POSTGRES_DSN else "?"
    yield f"{POSTGRES_DSN}{sep}options=-csearch_path%3D{schema}"
    conn.execute(f"DROP SCHEMA {schema} CASCADE")
    conn.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
