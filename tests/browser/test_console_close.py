"""Closing a contact in the console: the after-contact summary and the proposed disposition in a
modal dialog, edited and confirmed by the agent, saved, then the session closed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect
from tests.browser.conftest import DESKTOP, SMALL, Console

pytestmark = pytest.mark.browser

ORDER = "202405201234"
TITLE = re.compile("会话小结 Close contact")


def _open_with_a_turn(page: Page, console: Console, user: str) -> str:
    page.goto(f"{console.url}/console")
    page.get_by_test_id("user-id").fill(user)
    page.get_by_test_id("open-session").click()
    expect(page.get_by_test_id("connection")).to_have_text(re.compile("live"))
    page.get_by_test_id("utterance").fill(f"我的订单{ORDER}现在什么状态？")
    page.get_by_test_id("utterance").press("Enter")
    expect(page.get_by_test_id("intent")).to_have_attribute("data-intent", "order_status")
    return page.get_by_test_id("session-id").inner_text()


def _summary(console: Console, sid: str, user: str) -> dict[str, object]:
    response = httpx.get(f"{console.url}/v1/sessions/{sid}/summary", params={"user_id": user})
    assert response.status_code == 200, response.text
    body = response.json()
    assert isinstance(body, dict)
    return body


def test_the_agent_edits_the_summary_changes_the_disposition_and_closes(
    page: Page, console: Console, artifacts: Path
) -> None:
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    sid = _open_with_a_turn(page, console, "u1001")

    page.get_by_test_id("close-session").click()
    dialog = page.get_by_role("dialog", name=TITLE)
    expect(dialog).to_be_visible()
    text = page.get_by_test_id("summary-text")
    expect(text).to_have_value(re.compile(ORDER))  # written from the conversation
    expect(text).to_be_focused()
    proposed = page.get_by_test_id("summary-proposed")
    expect(proposed).to_have_attribute("data-disposition", re.compile(r"^[a-z_]+$"))
    proposed_id = proposed.get_attribute("data-disposition")
    live = _summary(console, sid, "u1001")  # the one the dialog shows, not yet confirmed
    assert live["confirmed"] is False
    assert live["disposition"]["proposed"] == proposed_id  # type: ignore[index]
    select = page.get_by_test_id("summary-disposition")
    expect(select).to_have_value(proposed_id or "")
    # Both names of every disposition of the pack; the proposed one is marked.
    options = select.locator("option")
    expect(options).to_have_count(7)
    callback = select.locator("option[value=callback_scheduled]")
    expect(callback).to_have_text("已约回访 Callback scheduled")
    expect(select.locator(f"option[value={proposed_id}]")).to_contain_text("建议 proposed")
    page.screenshot(path=artifacts / "console-close-1440x900.png", full_page=True)

    edited = f"{text.input_value()} 客户要求明天上午回电确认。"
    text.fill(edited)
    select.select_option("callback_scheduled")
    page.get_by_test_id("summary-save").click()

    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("connection")).to_contain_text("ended")
    expect(page.get_by_test_id("utterance")).to_be_disabled()
    expect(page.get_by_test_id("closed-summary")).to_contain_text("已约回访 Callback scheduled")
    expect(page.get_by_test_id("user-id")).to_be_focused()  # focus is not lost with the dialog

    saved = _summary(console, sid, "u1001")
    assert saved["confirmed"] is True and saved["source"] == "agent"
    assert saved["text"] == edited.strip()
    assert saved["confirmed_by"] == "agent-1"
    assert saved["disposition"]["chosen"] == "callback_scheduled"  # type: ignore[index]
    assert saved["disposition"]["proposed"] == proposed_id  # type: ignore[index]
    params = {"user_id": "u1001"}
    assert httpx.delete(f"{console.url}/v1/sessions/{sid}", params=params).status_code == 404
    assert httpx.get(f"{console.url}/v1/sessions/{sid}", params=params).json()["status"] == "closed"
    assert problems == []


def test_escape_cancels_and_the_session_stays_open(page: Page, console: Console) -> None:
    sid = _open_with_a_turn(page, console, "u1002")
    close = page.get_by_test_id("close-session")
    close.click()
    dialog = page.get_by_role("dialog", name=TITLE)
    expect(dialog).to_be_visible()
    expect(page.get_by_test_id("summary-text")).to_have_value(re.compile(ORDER))
    page.get_by_test_id("summary-text").fill("改过但不保存")
    page.keyboard.press("Escape")

    expect(dialog).to_be_hidden()
    expect(close).to_be_focused()
    expect(page.get_by_test_id("connection")).to_have_text(re.compile("live"))
    expect(page.get_by_test_id("utterance")).to_be_enabled()
    summary = _summary(console, sid, "u1002")
    assert summary["confirmed"] is False and "改过但不保存" not in str(summary["text"])
    opened = httpx.get(f"{console.url}/v1/sessions/{sid}", params={"user_id": "u1002"})
    assert opened.json()["status"] == "open"

    # The Cancel button does the same; an empty summary is refused and changes nothing.
    close.click()
    expect(dialog).to_be_visible()
    expect(page.get_by_test_id("summary-text")).to_have_value(re.compile(ORDER))
    page.get_by_test_id("summary-text").fill("   ")
    page.get_by_test_id("summary-save").click()
    expect(page.get_by_test_id("summary-error")).to_contain_text("The summary is empty")
    expect(dialog).to_be_visible()
    page.get_by_test_id("summary-cancel").click()
    expect(dialog).to_be_hidden()
    assert _summary(console, sid, "u1002")["confirmed"] is False
    expect(page.get_by_test_id("connection")).to_have_text(re.compile("live"))


def test_closing_without_saving_still_closes_the_session(page: Page, console: Console) -> None:
    sid = _open_with_a_turn(page, console, "u1003")
    page.get_by_test_id("close-session").click()
    expect(page.get_by_test_id("summary-text")).to_have_value(re.compile(ORDER))
    page.get_by_test_id("summary-skip").click()
    expect(page.get_by_role("dialog", name=TITLE)).to_be_hidden()
    expect(page.get_by_test_id("connection")).to_contain_text("ended")
    expect(page.get_by_test_id("closed-summary")).to_contain_text("Closed without a summary")
    stored = _summary(console, sid, "u1003")  # the offline one kept with the archive
    assert stored["confirmed"] is False and ORDER in str(stored["text"])
    params = {"user_id": "u1003"}
    assert httpx.get(f"{console.url}/v1/sessions/{sid}", params=params).json()["status"] == "closed"


@pytest.mark.parametrize("viewport", [DESKTOP, SMALL], ids=["1440x900", "1024x768"])
def test_axe_finds_no_serious_violations_in_the_close_dialog(
    new_page: Callable[..., Page],
    console: Console,
    axe_source: str,
    artifacts: Path,
    viewport: dict[str, int],
) -> None:
    page = new_page(viewport=viewport, bypass_csp=True)
    _open_with_a_turn(page, console, "u1001")
    page.get_by_test_id("close-session").click()
    expect(page.get_by_test_id("summary-text")).to_have_value(re.compile(ORDER))
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, "the page scrolls sideways with the dialog open"
    size = f"{viewport['width']}x{viewport['height']}"
    page.screenshot(path=artifacts / f"console-close-dialog-{size}.png")
    page.add_script_tag(content=axe_source)
    results = page.evaluate(
        "axe.run(document, {runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})"
    )
    report = {"axe": results["testEngine"]["version"], "violations": results["violations"]}
    (artifacts / f"axe-close-dialog-{size}.json").write_text(
        json.dumps(report, ensure_ascii=False, indent=2)
    )
    serious = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:5])
        for v in results["violations"]
        if v["impact"] in {"serious", "critical"}
    ]
    assert serious == [], serious
    assert results["passes"], "axe ran its rules"
