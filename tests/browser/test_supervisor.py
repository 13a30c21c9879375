"""The supervisor page in a real headless Chromium: live sessions with their sentiment and
alerts, fed by the server-sent event stream, the API key only ever in a header."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect
from tests.browser.conftest import DESKTOP, SMALL

from demo_backend import BackendState, business_today
from demo_backend import create_app as create_backend
from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread

pytestmark = pytest.mark.browser

KEY = "supervisor-page-key-0123456789"


@pytest.fixture
def service(tmp_path: Path, model_dir: Path) -> Iterator[str]:
    with serve_in_thread(create_backend(BackendState(today=business_today()))) as backend_url:
        settings = Settings(
            service={"data_dir": tmp_path, "backend_url": backend_url, "api_keys": {KEY: "acme"}},
            nlu={"model_dir": model_dir},
            workflows={"watchdog_interval_s": 3600},
        )
        with serve_in_thread(create_app(settings)) as url:
            yield url


def _turn(client: httpx.Client, sid: str, text: str, speaker: str = "customer") -> None:
    body = {"user_id": "u1002", "text": text, "speaker": speaker}
    response = client.post(f"/v1/sessions/{sid}/turns", json=body)
    assert response.status_code == 200, response.text


def test_the_supervisor_sees_sessions_sentiment_and_alerts_live(
    page: Page, service: str, artifacts: Path
) -> None:
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("pageerror", lambda error: problems.append(str(error)))

    page.goto(f"{service}/console/supervisor")
    expect(page.get_by_test_id("error")).to_contain_text("401")  # no key yet: refused, said
    page.get_by_test_id("api-key").fill(KEY)
    page.get_by_test_id("connect").click()
    expect(page.get_by_test_id("connection")).to_have_text(re.compile("live"))
    expect(page.get_by_test_id("error")).to_be_hidden()

    with httpx.Client(base_url=service, headers={"X-API-Key": KEY}, timeout=60) as client:
        opened = client.post("/v1/sessions", json={"user_id": "u1002", "resume": False})
        sid = opened.json()["session_id"]
        row = page.locator(f'tr[data-session-id="{sid}"]')
        expect(row).to_have_count(1)
        expect(page.get_by_test_id("session-count")).to_have_text("1")

        _turn(client, sid, "你们太差劲了 我要打12315投诉")
        expect(row.locator(".sentiment")).to_contain_text("negative")
        expect(row.locator(".alert-cell")).to_contain_text("Regulator threat")
        expect(row).to_have_class(re.compile("critical"))
        alerts = page.get_by_test_id("alerts").locator("li")
        expect(alerts).to_have_count(1)
        expect(alerts.first).to_contain_text("客户提到向监管部门投诉")

        _turn(client, sid, "保证今天到，绝对没问题，你的手机号13912345678对吧", "agent")
        expect(alerts).to_have_count(3)
        kinds = {alerts.nth(i).get_attribute("data-kind") for i in range(3)}
        assert kinds == {"regulator_threat", "over_promise", "full_number"}
        expect(page.get_by_test_id("alerts")).to_contain_text("坐席")
        assert "13912345678" not in page.content(), "alerts never echo the number"

        _turn(client, sid, "好的 谢谢你")
        expect(row.locator(".trend span")).to_have_count(2)
        expect(row.locator(".sentiment")).to_contain_text("positive")

        for width, height in ((1440, 900), (1024, 768)):
            page.set_viewport_size({"width": width, "height": height})
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, f"the page scrolls sideways at {width}x{height}"
            shot = artifacts / f"supervisor-{width}x{height}.png"
            page.screenshot(path=str(shot), full_page=True)

        assert client.delete(f"/v1/sessions/{sid}", params={"user_id": "u1002"}).is_success
        expect(row).to_have_count(0)
        expect(page.get_by_test_id("session-count")).to_have_text("0")

    assert not [u for u in requests if KEY in u], "the key never travels in a URL"
    assert not problems, problems


def test_a_reloaded_page_gets_the_current_board_from_the_snapshot(page: Page, service: str) -> None:
    with httpx.Client(base_url=service, headers={"X-API-Key": KEY}, timeout=60) as client:
        sid = client.post("/v1/sessions", json={"user_id": "u1002", "resume": False}).json()[
            "session_id"
        ]
        _turn(client, sid, "你是傻逼吗")
    page.goto(f"{service}/console/supervisor")
    page.get_by_test_id("api-key").fill(KEY)
    page.get_by_test_id("api-key").press("Enter")
    row = page.locator(f'tr[data-session-id="{sid}"]')
    expect(row).to_have_count(1)
    expect(row.locator(".alert-cell")).to_contain_text("Abuse")
    expect(page.get_by_test_id("alerts").locator("li")).to_have_count(1)


def _axe(page: Page, axe_source: str, report: Path) -> list[tuple[str, str, list[str]]]:
    """Run axe-core on the page; its report saved to ``report``; the serious violations."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(content=axe_source)
    results = page.evaluate(
        "axe.run(document, {runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})"
    )
    assert "color-contrast" in {rule["id"] for rule in results["passes"]}, "axe checked contrast"
    found = {
        "axe": results["testEngine"]["version"],
        "violations": results["violations"],
        "incomplete": [(v["id"], [n["target"] for n in v["nodes"]]) for v in results["incomplete"]],
    }
    report.write_text(json.dumps(found, ensure_ascii=False, indent=2))
    return [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:5])
        for v in results["violations"]
        if v["impact"] in {"serious", "critical"}
    ]


@pytest.mark.parametrize("viewport", [DESKTOP, SMALL], ids=["1440x900", "1024x768"])
def test_axe_finds_no_serious_violations_on_the_supervisor_page(
    new_page: Callable[..., Page],
    service: str,
    axe_source: str,
    artifacts: Path,
    viewport: dict[str, int],
) -> None:
    size = f"{viewport['width']}x{viewport['height']}"
    # The page's Content-Security-Policy forbids inline scripts: axe is the test's own.
    page = new_page(viewport=viewport, bypass_csp=True)
    page.goto(f"{service}/console/supervisor")
    expect(page.get_by_test_id("error")).to_contain_text("401")  # refused: the error shows
    assert _axe(page, axe_source, artifacts / f"axe-supervisor-empty-{size}.json") == []

    page.get_by_test_id("api-key").fill(KEY)
    page.get_by_test_id("connect").click()
    expect(page.get_by_test_id("connection")).to_have_text(re.compile("live"))
    with httpx.Client(base_url=service, headers={"X-API-Key": KEY}, timeout=60) as client:
        sid = client.post("/v1/sessions", json={"user_id": "u1002", "resume": False}).json()[
            "session_id"
        ]
        _turn(client, sid, "你们太差劲了 我要打12315投诉")
        _turn(client, sid, "保证今天到，绝对没问题", "agent")
        _turn(client, sid, "好的 谢谢你")
    row = page.locator(f'tr[data-session-id="{sid}"]')
    expect(row.locator(".trend span")).to_have_count(2)
    expect(row).to_have_class(re.compile("critical"))  # the red row, its badges on it
    expect(page.get_by_test_id("alerts").locator("li")).to_have_count(2)
    assert _axe(page, axe_source, artifacts / f"axe-supervisor-{size}.json") == []
