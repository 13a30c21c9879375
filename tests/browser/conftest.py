"""A real headless Chromium against the service and the demo backend on loopback ports.

Chromium comes from the system (Debian's ``chromium``); Playwright never downloads a browser.
Without it the browser tests skip, except in CI (``CI=true``), where they fail. The same holds
for axe-core (``make axe`` installs the pinned version with npm into ``.tools/axe``). Tests save
screenshots and accessibility reports under ``test-artifacts/`` (git-ignored).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from demo_backend import BackendState, business_today
from demo_backend import create_app as create_backend
from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread

CHROMIUM = os.environ.get("HERMES_TEST_CHROMIUM", "/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
AXE = Path(os.environ.get("HERMES_TEST_AXE", ROOT / ".tools/axe/node_modules/axe-core/axe.min.js"))
ARTIFACTS = Path(os.environ.get("HERMES_TEST_ARTIFACTS", ROOT / "test-artifacts"))
#: The two screens the console is checked on: a desktop and the smallest it supports.
DESKTOP = {"width": 1440, "height": 900}
SMALL = {"width": 1024, "height": 768}
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class Console:
    url: str
    backend_url: str
    settings: Settings


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if path is None:
        _missing(f"Chromium is not installed ({CHROMIUM}); apt-get install chromium")
        raise AssertionError("unreachable")
    return path


def _missing(message: str) -> None:
    if IN_CI:
        pytest.fail(f"CI must run the browser tests: {message}")
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Any]:
    # Module, not session: sync Playwright holds an event loop on this thread while it runs,
    # and the async tests of other folders need the thread's loop free.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def new_page(browser: Any) -> Iterator[Callable[..., Any]]:
    """Open a tab in a fresh context: ``new_page(viewport=SMALL, permissions=[...])``."""
    contexts: list[Any] = []

    def open_page(viewport: dict[str, int] | None = None, **options: Any) -> Any:
        context = browser.new_context(viewport=viewport or DESKTOP, locale="zh-CN", **options)
        contexts.append(context)
        return context.new_page()

    try:
        yield open_page
    finally:
        for context in contexts:
            context.close()


@pytest.fixture
def page(new_page: Callable[..., Any]) -> Any:
    return new_page()


@pytest.fixture(scope="session")
def axe_source() -> str:
    if not AXE.exists():
        _missing(f"axe-core is not installed ({AXE}); run `make axe` (needs npm)")
    return AXE.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module")
def backend_url() -> Iterator[str]:
    with serve_in_thread(create_backend(BackendState(today=business_today()))) as url:
        yield url


@pytest.fixture(scope="session")
def model_dir(pack_model_dir: Path) -> Path:
    return pack_model_dir  # trained once per run, before any server starts


@pytest.fixture
def console(tmp_path: Path, model_dir: Path, backend_url: str) -> Iterator[Console]:
    settings = Settings(
        service={"data_dir": tmp_path, "backend_url": backend_url},
        nlu={"model_dir": model_dir},
        workflows={"watchdog_interval_s": 3600},
    )
    with serve_in_thread(create_app(settings)) as url:
        yield Console(url, backend_url, settings)
