"""The console keeps the key out of URLs and shows personal numbers masked (spec D3)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.browser.conftest import Console

from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread

pytestmark = pytest.mark.browser

KEY = "console-privacy-key-0123456789"


@pytest.fixture
def keyed_console(tmp_path: Path, model_dir: Path, backend_url: str) -> Iterator[Console]:
    settings = Settings(
        service={"data_dir": tmp_path, "backend_url": backend_url, "api_keys": {KEY: "acme"}},
        nlu={"model_dir": model_dir},
        workflows={"watchdog_interval_s": 3600},
    )
    with serve_in_thread(create_app(settings)) as url:
        yield Console(url, backend_url, settings)


def test_the_socket_opens_with_a_ticket_and_the_transcript_shows_numbers_masked(
    page: Page, keyed_console: Console
) -> None:
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    page.on("websocket", lambda socket: urls.append(socket.url))
    page.goto(f"{keyed_console.url}/console")
    page.get_by_test_id("api-key").fill(KEY)
    page.get_by_test_id("user-id").fill("u1001")
    page.get_by_test_id("open-session").click()
    expect(page.get_by_test_id("connection")).to_have_text(re.compile("live"))

    page.get_by_test_id("utterance").fill(
        "我忘记密码了，手机号13800138000，邮箱zhang.san@example.com"
    )
    page.get_by_test_id("utterance").press("Enter")
    transcript = page.get_by_test_id("transcript").locator(".line.final")
    expect(transcript).to_have_count(1)
    expect(transcript).to_contain_text("138****8000")
    expect(transcript).to_contain_text("z***@example.com")
    expect(page.get_by_test_id("intent")).not_to_have_text("—")
    assert "13800138000" not in page.content() and "zhang.san@" not in page.content()

    sockets = [u for u in urls if u.startswith("ws")]
    assert sockets and all("ticket=" in u for u in sockets), sockets
    assert not [u for u in urls if KEY in u or "api_key" in u]
