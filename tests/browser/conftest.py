"""A real headless Chromium against the service and the demo backend on loopback ports.

Chromium comes from the system (Debian's ``chromium``); Playwright never downloads a browser.
Without it the browser tests skip, except in CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from demo_backend import create_app as create_backend
from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread

CHROMIUM = os.environ.get("HERMES_TEST_CHROMIUM", "/usr/bin/chromium")
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
        message = f"Chromium is not installed ({CHROMIUM}); apt-get install chromium"
        if IN_CI:
            pytest.fail(f"CI must run the browser tests: {message}")
        pytest.skip(message)
    return path


@pytest.fixture
def page(chromium_path: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="zh-CN")
            tab = context.new_page()
            try:
                yield tab
            finally:
                tab.close()
                context.close()
        finally:
            browser.close()


@pytest.fixture(scope="module")
def backend_url() -> Iterator[str]:
    with serve_in_thread(create_backend()) as url:
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
