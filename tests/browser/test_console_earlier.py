"""The console shows the agent what the customer's earlier contacts had done for them: the
ticket opened last time, with its number, before the customer says a word."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect
from tests.browser.conftest import Console

pytestmark = pytest.mark.browser


def _ticket_opened_in_an_earlier_contact(console: Console, user: str) -> str:
    """A complaint in a contact of its own, its ticket approved, the contact closed: the
    ticket's number."""
    with httpx.Client(base_url=console.url, timeout=30) as client:
        sid = client.post("/v1/sessions", json={"user_id": user}).json()["session_id"]
        turn = client.post(
            f"/v1/sessions/{sid}/turns",
            json={"user_id": user, "text": "我要投诉订单202405201234，一直不动"},
        ).json()
        [proposal] = turn["proposals"]
        approved = client.post(
            f"/v1/proposals/{proposal['id']}/approve", json={"user_id": user, "agent_id": "a7"}
        ).json()
        assert approved["status"] == "executed", approved
        assert client.delete(f"/v1/sessions/{sid}", params={"user_id": user}).status_code == 200
    return str(approved["result"]["ticket_id"])


def _open(page: Page, console: Console, user: str) -> None:
    page.goto(f"{console.url}/console")
    page.get_by_test_id("user-id").fill(user)
    page.get_by_test_id("open-session").click()
    expect(page.get_by_test_id("connection")).to_have_text(re.compile("live"))


def test_the_ticket_of_an_earlier_contact_is_shown_when_the_next_one_opens(
    page: Page, console: Console, artifacts: Path
) -> None:
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    ticket = _ticket_opened_in_an_earlier_contact(console, "u1001")
    _open(page, console, "u1001")
    earlier = page.get_by_test_id("earlier")
    expect(earlier.locator("li")).to_have_count(1)
    expect(earlier).to_contain_text(ticket)
    expect(earlier).to_contain_text("创建投诉工单")
    page.screenshot(path=artifacts / "console-earlier-1440x900.png", full_page=True)
    # Another customer's contact shows none of it.
    page.get_by_test_id("close-session").click()
    page.get_by_role("dialog").get_by_test_id("summary-save").click()
    expect(page.get_by_test_id("connection")).to_contain_text("ended")
    _open(page, console, "u1003")
    expect(earlier.locator("li")).to_have_count(1)
    expect(earlier).to_have_text(re.compile("None"))
    expect(earlier).not_to_contain_text(ticket)
    assert problems == []
