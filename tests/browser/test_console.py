"""The agent console in a real headless Chromium: open a session, type, read the assist."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect
from tests.browser.conftest import Console
from websockets.sync.client import connect

pytestmark = pytest.mark.browser

ORDER = "202405201234"


def _open_session(page: Page, console: Console, user: str) -> str:
    page.goto(f"{console.url}/console")
    page.get_by_test_id("user-id").fill(user)
    page.get_by_test_id("open-session").click()
    expect(page.get_by_test_id("connection")).to_have_text(re.compile("live"))
    session_id = page.get_by_test_id("session-id").inner_text()
    assert session_id.startswith(user) or len(session_id) > 16
    return session_id


def test_an_order_question_shows_intent_suggestion_and_tool_call(
    page: Page, console: Console, artifacts: Path
) -> None:
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)

    _open_session(page, console, "u1001")
    page.get_by_test_id("utterance").fill(f"我的订单{ORDER}现在什么状态？")
    page.get_by_test_id("utterance").press("Enter")

    shipment = httpx.get(f"{console.backend_url}/shipments/{ORDER}").json()
    expect(page.get_by_test_id("intent")).to_have_text("订单状态 Order status")  # the pack's label
    expect(page.get_by_test_id("intent")).to_have_attribute("data-intent", "order_status")
    expect(page.get_by_test_id("confidence")).to_contain_text("%")
    expect(page.get_by_test_id("slots")).to_contain_text(ORDER)
    expect(page.get_by_test_id("slots")).to_contain_text("订单号 Order id")
    expect(page.get_by_test_id("suggestion")).to_have_value(re.compile(shipment["eta"]))
    expect(page.get_by_test_id("suggestion-source")).to_contain_text("offline")
    expect(page.get_by_test_id("suggestion-compliance")).to_contain_text("compliant")
    row = page.get_by_test_id("tool-calls").locator("tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("td").nth(0)).to_have_text("查询物流 Get shipment")
    expect(row.locator("td").nth(0)).to_have_attribute("title", "get_shipment")
    expect(row.locator("td").nth(1)).to_have_text("本轮 this turn")
    expect(row.locator("td").nth(2)).to_have_text("成功 ok")
    expect(row.locator("td").nth(3)).to_contain_text("ms")
    final = page.get_by_test_id("transcript").locator(".line.final")
    expect(final).to_have_count(1)
    expect(final).to_contain_text(ORDER)
    breakers = page.get_by_test_id("breakers")
    shipment_row = breakers.locator("tr", has=page.locator("td[title^='get_shipment ']"))
    expect(shipment_row).to_contain_text("查询物流")
    expect(shipment_row.locator("td").nth(1)).to_have_text("正常")
    expect(shipment_row.locator("td").nth(1)).to_have_attribute("title", re.compile("^closed"))
    page.screenshot(path=artifacts / "console-order-1440x900.png", full_page=True)

    assert problems == []
    local = (console.url, console.url.replace("http://", "ws://"))
    assert requests and all(url.startswith(local) for url in requests), requests


def test_partial_segments_are_grey_until_the_final_one(page: Page, console: Console) -> None:
    session_id = _open_session(page, console, "u1002")
    url = f"{console.url.replace('http://', 'ws://')}/v1/sessions/{session_id}/ws?user_id=u1002"

    def send(socket: Any, text: str, final: bool) -> None:
        socket.send(json.dumps({"type": "segment", "speaker": "customer", "text": text,
                                "final": final}, ensure_ascii=False))  # fmt: skip

    transcript = page.get_by_test_id("transcript")
    with connect(url) as platform:  # the call platform's speech recognition, streaming
        assert json.loads(platform.recv())["type"] == "ready"
        send(platform, "我的订单", final=False)
        expect(transcript.locator(".line.partial")).to_have_text(re.compile("我的订单$"))
        send(platform, f"我的订单{ORDER}", final=False)
        expect(transcript.locator(".line.partial")).to_have_count(1)
        expect(transcript.locator(".line.partial")).to_contain_text(ORDER)
        expect(page.get_by_test_id("intent")).to_have_text("—")  # partials run nothing
        send(platform, f"我的订单{ORDER}现在什么状态", final=True)
        expect(transcript.locator(".line.partial")).to_have_count(0)
        expect(transcript.locator(".line.final")).to_contain_text("现在什么状态")
        expect(page.get_by_test_id("intent")).to_have_attribute("data-intent", "order_status")


def test_a_resumed_session_shows_its_transcript_and_closing_ends_it(
    page: Page, console: Console
) -> None:
    session_id = _open_session(page, console, "u1003")
    page.get_by_test_id("utterance").fill("我的快递到哪了")
    page.get_by_test_id("utterance").press("Enter")
    expect(page.get_by_test_id("missing")).to_contain_text("订单号 Order id")

    page.reload()
    assert _open_session(page, console, "u1003") == session_id
    expect(page.get_by_test_id("transcript").locator(".line.final")).to_contain_text("快递")

    page.get_by_test_id("close-session").click()  # the summary dialog: confirm as proposed
    expect(page.get_by_test_id("summary-text")).to_have_value(re.compile("快递|订单"))
    page.get_by_test_id("summary-save").click()
    expect(page.get_by_test_id("connection")).to_contain_text("ended")
    expect(page.get_by_test_id("utterance")).to_be_disabled()


def test_the_agent_approves_edits_and_rejects_proposals(page: Page, console: Console) -> None:
    since = httpx.get(f"{console.backend_url}/_log").json()["last_seq"]
    _open_session(page, console, "u1003")
    page.get_by_test_id("utterance").fill("我要退货退款，订单202405231122")
    page.get_by_test_id("utterance").press("Enter")
    cards = page.get_by_test_id("proposal")
    expect(cards).to_have_count(1)
    expect(cards.first).to_have_attribute("data-status", "proposed")
    expect(cards.first).to_contain_text("创建退货单 Create return")
    expect(page.get_by_test_id("suggestion")).not_to_have_value(re.compile("已办理完成"))
    log = httpx.get(f"{console.backend_url}/_log", params={"since": since}).json()["entries"]
    assert [e for e in log if e["outcome"] == "executed" and e["endpoint"] == "create_return"] == []

    # Edit the return's reason, then approve it.
    cards.first.get_by_test_id("proposal-edit").click()
    area = cards.first.get_by_test_id("proposal-arguments")
    arguments = json.loads(area.input_value())
    area.fill(json.dumps({**arguments, "reason": "尺码不合适"}, ensure_ascii=False))
    cards.first.get_by_test_id("proposal-approve-edited").click()
    executed = page.locator("[data-testid=proposal][data-status=executed]")
    expect(executed).to_have_count(1)
    expect(executed).to_contain_text("尺码不合适")

    # The refund is proposed next; the agent rejects it with the keyboard.
    pending = page.locator("[data-testid=proposal][data-status=proposed]")
    expect(pending).to_have_count(1)
    expect(pending).to_contain_text("退款 Issue refund")
    page.once("dialog", lambda dialog: dialog.accept("客户要换货不要退款"))
    page.keyboard.press("Alt+r")
    expect(page.locator("[data-testid=proposal][data-status=rejected]")).to_have_count(1)
    entries = httpx.get(f"{console.backend_url}/_log", params={"since": since}).json()["entries"]
    ran = [e["endpoint"] for e in entries if e["outcome"] == "executed"
           and e["endpoint"] in {"create_return", "issue_refund"}]  # fmt: skip
    assert ran == ["create_return"]


def test_a_request_the_customer_takes_back_leaves_nothing_to_approve(
    page: Page, console: Console
) -> None:
    """The customer says "算了不退了" while the return waits: the card shows it withdrawn and
    offers no approval any more."""
    _open_session(page, console, "u1005")
    page.get_by_test_id("utterance").fill("我要退货退款，订单202405191888")
    page.get_by_test_id("utterance").press("Enter")
    card = page.get_by_test_id("proposal").first
    expect(card).to_have_attribute("data-status", "proposed")
    expect(card.get_by_test_id("proposal-approve")).to_have_count(1)
    page.get_by_test_id("utterance").fill("算了不退了")
    page.get_by_test_id("utterance").press("Enter")
    expect(card).to_have_attribute("data-status", "withdrawn")
    expect(card).to_contain_text("客户已撤回")
    expect(card.get_by_test_id("proposal-approve")).to_have_count(0)
    expect(page.get_by_test_id("suggestion")).to_have_value(re.compile("已为您撤回"))
    # The return's workflow says the customer took it back, not that it failed.
    expect(page.get_by_test_id("workflow")).to_contain_text("客户已撤回")
    expect(page.get_by_test_id("workflow")).to_have_attribute("data-status", "failed")
