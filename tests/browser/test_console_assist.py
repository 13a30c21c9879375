"""The console's assist panels in a real Chromium: the suggestion the agent edits, inserts,
copies and rates; knowledge, sentiment and alerts; the pending indicator; panels that follow the
newest turn; workflow tool calls; the pack's labels; shortcuts; 1024 × 768; CJK fonts; axe-core.

Turn outcomes come from the real service. Where a field of the turn contract (``knowledge``,
``sentiment``, ``alerts``) is not in the frame, the test's WebSocket route adds it on the way to
the page (knowledge from the turn's own ``kb_search`` results), so the rendering is checked
either way; fields the service sends are passed through untouched.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, WebSocketRoute, expect
from tests.browser.conftest import DESKTOP, IN_CI, SMALL, Console

pytestmark = pytest.mark.browser

ORDER = "202405201234"
RETURN_ORDER = "202405231122"  # u1003's order the demo backend lets return
OTHER_RETURN = "202405150456"  # u1002's (the demo backend is shared by this module's tests)
CJK_FONTS = re.compile(r"Noto Sans CJK|Noto Sans SC|Source Han|PingFang|Hiragino|YaHei|WenQuanYi")
WS_URL = re.compile(r"/v1/sessions/[^/]+/ws")


def _open(page: Page, console: Console, user: str) -> str:
    page.goto(f"{console.url}/console")
    page.get_by_test_id("user-id").fill(user)
    page.get_by_test_id("open-session").click()
    expect(page.get_by_test_id("connection")).to_have_text(re.compile("live"))
    return page.get_by_test_id("session-id").inner_text()


def _say(page: Page, text: str) -> None:
    page.get_by_test_id("speaker").select_option("customer")
    page.get_by_test_id("utterance").fill(text)
    page.get_by_test_id("utterance").press("Enter")


def _events(console: Console, sid: str, user: str) -> dict[str, dict[str, Any]]:
    body = httpx.get(
        f"{console.url}/v1/sessions/{sid}/suggestions/feedback", params={"user_id": user}
    ).json()
    return {e["event"]: e for e in body["events"] if e["event"] != "shown"}


class Frames:
    """Routes the session socket through the test: records assist frames, may fill in the
    contract's optional fields, may hold assists back, and can push frames to the page."""

    def __init__(self, page: Page, fill: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.fill = fill
        self.assists: list[dict[str, Any]] = []
        self.held: list[str] = []
        self.hold = False
        self.route: WebSocketRoute | None = None
        page.route_web_socket(WS_URL, self._handle)

    def _handle(self, route: WebSocketRoute) -> None:
        self.route = route
        server = route.connect_to_server()

        def from_server(message: str | bytes) -> None:
            frame = json.loads(message)
            if frame.get("type") == "assist":
                if self.fill is not None:
                    self.fill(frame)
                self.assists.append(frame)
                if self.hold:
                    self.held.append(json.dumps(frame, ensure_ascii=False))
                    return
            route.send(json.dumps(frame, ensure_ascii=False))

        server.on_message(from_server)

    def release(self) -> None:
        assert self.route is not None
        while self.held:
            self.route.send(self.held.pop(0))


def _fill_contract_fields(frame: dict[str, Any]) -> None:
    """What other parts of the service add to a turn, when the frame does not carry it yet."""
    if "knowledge" not in frame:
        hits = [
            hit
            for call in frame["tool_calls"]
            if call["tool"] == "kb_search" and call.get("result")
            for hit in call["result"]["results"]
        ]
        frame["knowledge"] = [
            {"title": h["title"], "article_id": h["id"], "passage": h["snippet"],
             "source": f"kb/{h['id']}.md", "score": h["score"]}
            for h in hits
        ]  # fmt: skip
    frame.setdefault("sentiment", {"label": "negative", "score": 0.91})
    frame.setdefault(
        "alerts",
        [{"kind": "regulator_threat", "severity": "critical", "message": "客户提到投诉到 12315",
          "speaker": "customer", "turn_index": frame["turn_index"]}],
    )  # fmt: skip


def _wait_for(page: Page, ready: Callable[[], bool]) -> None:
    """Let Playwright dispatch route callbacks until ``ready()`` (bounded by attempts)."""
    for _ in range(400):
        if ready():
            return
        page.wait_for_timeout(25)
    raise AssertionError("the frame never came")


# -- the suggestion -------------------------------------------------------------------------------


def test_the_agent_edits_inserts_copies_and_rates_a_suggestion(
    new_page: Callable[..., Page], console: Console
) -> None:
    page = new_page(permissions=["clipboard-read", "clipboard-write"])
    sid = _open(page, console, "u1001")
    _say(page, f"我的订单{ORDER}现在什么状态？")
    box = page.get_by_test_id("suggestion")
    expect(box).to_have_value(re.compile(ORDER))
    expect(box).to_be_editable()
    edited = f"{box.input_value()} 还有什么可以帮您？"
    expect(page.get_by_test_id("suggestion-edited")).to_be_hidden()
    box.fill(edited)
    expect(page.get_by_test_id("suggestion-edited")).to_be_visible()

    page.get_by_test_id("suggestion-insert").click()
    expect(page.get_by_test_id("utterance")).to_have_value(edited)
    expect(page.get_by_test_id("speaker")).to_have_value("agent")
    expect(page.get_by_test_id("feedback-status")).to_contain_text("inserted")
    # Inserted, never sent: the transcript has the customer's line only.
    lines = page.get_by_test_id("transcript").locator(".line.final")
    expect(lines).to_have_count(1)

    page.get_by_test_id("suggestion-copy").click()
    expect(page.get_by_test_id("feedback-status")).to_contain_text("copied")
    assert page.evaluate("navigator.clipboard.readText()") == edited

    page.get_by_test_id("suggestion-not-useful").click()
    expect(page.get_by_test_id("suggestion-not-useful")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_test_id("suggestion-reason")).to_be_focused()
    page.get_by_test_id("suggestion-reason").fill("语气不当 Wrong tone")
    page.get_by_test_id("suggestion-reason-send").click()
    expect(page.get_by_test_id("feedback-status")).to_contain_text("语气不当")

    events = _events(console, sid, "u1001")
    assert set(events) == {"edited", "inserted", "copied", "rated"}
    assert events["edited"]["text"] == edited and events["edited"]["suggestion"] != edited
    assert events["rated"]["useful"] is False and events["rated"]["reason"] == "语气不当 Wrong tone"
    assert events["rated"]["text"] == edited, "the rating keeps the edited text"
    assert {e["agent_id"] for e in events.values()} == {"agent-1"}

    # Sending the inserted reply is the agent's act: it lands in the transcript as theirs.
    page.get_by_test_id("send").click()
    expect(lines).to_have_count(2)
    expect(lines.nth(1)).to_have_attribute("data-speaker", "agent")
    report = httpx.get(f"{console.url}/v1/metrics/suggestions").json()
    counts = report["by_intent"]["order_status"]
    assert (counts["shown"], counts["inserted"], counts["copied"], counts["edited"]) == (1, 1, 1, 1)
    assert counts["rated"] == {"total": 1, "useful": 0, "not_useful": 1}


def test_keyboard_shortcuts_approve_insert_and_rate(page: Page, console: Console) -> None:
    sid = _open(page, console, "u1002")
    _say(page, f"我要退货退款，订单{OTHER_RETURN}")
    proposal = page.locator("[data-testid=proposal][data-status=proposed]")
    expect(proposal).to_have_count(1)
    box = page.get_by_test_id("suggestion")
    expect(box).not_to_have_value("")
    suggestion = box.input_value()

    page.keyboard.press("Alt+i")
    expect(page.get_by_test_id("utterance")).to_have_value(suggestion.strip())
    page.keyboard.press("Alt+u")
    expect(page.get_by_test_id("suggestion-useful")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_test_id("feedback-status")).to_contain_text("rated useful")
    page.keyboard.press("Alt+n")  # changed mind: not useful
    expect(page.get_by_test_id("suggestion-not-useful")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_test_id("suggestion-reason")).to_be_visible()
    expect(page.get_by_test_id("feedback-status")).to_contain_text("rated not useful")

    page.keyboard.press("Alt+a")
    expect(page.locator("[data-testid=proposal][data-status=executed]")).to_have_count(1)
    events = _events(console, sid, "u1002")
    assert set(events) == {"inserted", "rated"}
    assert events["rated"]["useful"] is False, "the latest rating is kept"


# -- knowledge, sentiment, alerts -----------------------------------------------------------------


def test_knowledge_cards_sentiment_and_alert_badges(
    page: Page, console: Console, artifacts: Path
) -> None:
    frames = Frames(page, fill=_fill_contract_fields)
    _open(page, console, "u1002")
    _say(page, "运费怎么算？")
    expect(page.get_by_test_id("intent")).to_have_text("政策咨询 Policy question")
    [frame] = frames.assists
    cards = page.get_by_test_id("knowledge-card")
    assert frame["knowledge"], "the knowledge base answered the question"
    expect(cards).to_have_count(len(frame["knowledge"]))
    first = frame["knowledge"][0]
    expect(cards.first).to_contain_text(first["title"])
    expect(cards.first.get_by_test_id("knowledge-source")).to_contain_text(first["source"])

    sentiment = page.get_by_test_id("sentiment")
    expect(sentiment).to_be_visible()
    expect(sentiment).to_have_attribute("data-label", frame["sentiment"]["label"])
    alerts = page.get_by_test_id("alert-item")
    expect(alerts).to_have_count(len(frame["alerts"]))
    if frame["alerts"]:
        expect(alerts.first).to_contain_text(frame["alerts"][0]["message"])

    # An alert pushed on its own (an agent line's compliance slip) joins the list on top.
    assert frames.route is not None
    slip = {"type": "alert", "kind": "over_promise", "severity": "warning", "speaker": "agent",
            "message": "坐席承诺了“保证今天到”", "turn_index": 7}  # fmt: skip
    frames.route.send(json.dumps(slip, ensure_ascii=False))
    expect(alerts).to_have_count(len(frame["alerts"]) + 1)
    expect(alerts.first).to_contain_text("保证今天到")
    expect(alerts.first).to_have_attribute("data-severity", "warning")
    expect(alerts.first).to_contain_text("坐席 agent")
    page.locator("#assist").screenshot(path=artifacts / "console-assist-knowledge-alerts.png")

    # The next turn carries what it carries: no knowledge here, so the cards go.
    frames.fill = None
    _say(page, f"我的订单{ORDER}现在什么状态？")
    expect(page.get_by_test_id("intent")).to_have_attribute("data-intent", "order_status")
    second = frames.assists[-1]
    expect(cards).to_have_count(len(second.get("knowledge") or []))
    if second.get("sentiment"):
        expect(sentiment).to_have_attribute("data-label", second["sentiment"]["label"])
    else:
        expect(sentiment).to_be_hidden()  # absent field: no badge, no error


def test_a_turn_without_the_optional_fields_renders_cleanly(page: Page, console: Console) -> None:
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))

    def strip(frame: dict[str, Any]) -> None:
        for name in ("knowledge", "sentiment", "alerts", "language", "dialogue_act"):
            frame.pop(name, None)

    Frames(page, fill=strip)
    _open(page, console, "u1001")
    _say(page, f"我的订单{ORDER}现在什么状态？")
    expect(page.get_by_test_id("intent")).to_have_attribute("data-intent", "order_status")
    expect(page.get_by_test_id("sentiment")).to_be_hidden()
    expect(page.get_by_test_id("knowledge")).to_contain_text("None")
    expect(page.get_by_test_id("alerts")).to_contain_text("None")
    assert problems == []


# -- turn state -----------------------------------------------------------------------------------


def test_a_pending_indicator_shows_while_a_turn_runs(page: Page, console: Console) -> None:
    frames = Frames(page)
    _open(page, console, "u1001")
    pending = page.get_by_test_id("pending")
    expect(pending).to_be_hidden()
    frames.hold = True  # the assist is held back by the test until released
    _say(page, f"我的订单{ORDER}现在什么状态？")
    expect(pending).to_be_visible()
    expect(pending).to_have_attribute("role", "status")
    expect(page.locator("#assist")).to_have_attribute("aria-busy", "true")
    _wait_for(page, lambda: bool(frames.held))
    expect(pending).to_be_visible()
    expect(page.get_by_test_id("intent")).to_have_text("—")
    frames.release()
    expect(page.get_by_test_id("intent")).to_have_attribute("data-intent", "order_status")
    expect(pending).to_be_hidden()
    expect(page.locator("#assist")).to_have_attribute("aria-busy", "false")


def test_panels_are_cleared_when_their_turn_is_gone(page: Page, console: Console) -> None:
    _open(page, console, "u1003")
    source = page.get_by_test_id("suggestion-source")
    compliance = page.get_by_test_id("suggestion-compliance")
    # No reply yet: no badges beside an empty box (`hidden` beats .badge's inline-block).
    expect(page.get_by_test_id("suggestion")).to_have_value("")
    expect(source).to_be_hidden()
    expect(compliance).to_be_hidden()
    assert (
        page.evaluate("getComputedStyle(document.getElementById('suggestion-source')).display")
        == "none"
    )

    _say(page, f"我要退货退款，订单{RETURN_ORDER}")
    workflow = page.get_by_test_id("workflow")
    expect(workflow).to_have_attribute("data-workflow", "return_refund")
    expect(page.get_by_test_id("steps").locator("li")).not_to_have_count(0)
    expect(source).to_be_visible()

    _say(page, "你们支持哪些支付方式")
    expect(page.get_by_test_id("intent")).to_have_attribute("data-intent", "payment_methods")
    expect(workflow).to_have_text("—")  # the earlier turn's workflow card does not stay
    expect(page.get_by_test_id("steps").locator("li")).to_have_count(0)
    rows = page.get_by_test_id("tool-calls").locator("tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first.locator("td").first).to_have_attribute("title", "list_payment_methods")

    page.get_by_test_id("close-session").click()  # the summary dialog: confirm as proposed
    expect(page.get_by_test_id("summary-text")).not_to_have_value("")
    page.get_by_test_id("summary-save").click()
    expect(page.get_by_test_id("connection")).to_contain_text("ended")
    expect(page.get_by_test_id("suggestion")).to_have_value("")
    expect(source).to_be_hidden()
    expect(compliance).to_be_hidden()
    expect(page.get_by_test_id("intent")).to_have_text("—")
    expect(rows.first).to_have_text("—")


def test_workflow_tool_calls_are_listed(page: Page, console: Console) -> None:
    _open(page, console, "u1003")
    _say(page, f"我要退货退款，订单{RETURN_ORDER}")
    rows = page.get_by_test_id("tool-calls").locator("tbody tr")
    lookup = rows.filter(has=page.locator("td[title=get_order]"))
    expect(lookup).to_have_count(1)
    expect(lookup.locator("td").nth(1)).to_have_text("流程 · 查询订单")
    expect(lookup.locator("td").nth(1)).to_have_attribute("title", re.compile("get_order"))
    expect(lookup.locator("td").nth(2)).to_have_text("成功 ok")
    expect(lookup.locator("td").nth(3)).to_contain_text("ms")
    steps = page.get_by_test_id("steps")
    expect(steps.locator("li[data-step=get_order]")).to_contain_text("成功 succeeded")
    expect(steps.locator("li[data-step=create_return]")).to_contain_text("创建退货单 Create return")
    # The write waits for the agent, not the customer: the card says so.
    expect(steps.locator("li[data-step=create_return]")).to_contain_text("待批准 awaiting approval")
    expect(page.get_by_test_id("workflow")).to_contain_text("待批准 awaiting approval")

    page.locator("[data-testid=proposal][data-status=proposed]").get_by_test_id(
        "proposal-approve"
    ).click()
    expect(page.locator("[data-testid=proposal][data-status=executed]")).to_have_count(1)
    created = rows.filter(has=page.locator("td[title=create_return]"))
    expect(created).to_have_count(1)  # run after the approval, outside any turn: still listed
    expect(created.locator("td").nth(1)).to_contain_text("创建退货单")
    for cell in rows.locator("td:first-child").all():
        assert cell.inner_text().strip() not in {"", "—"}


def test_labels_come_from_the_pack(page: Page, console: Console) -> None:
    labels = httpx.get(f"{console.url}/v1/pack/labels").json()["labels"]
    _open(page, console, "u1001")
    _say(page, "今天天气怎么样")
    oos = labels["intents"]["oos"]
    expect(page.get_by_test_id("intent")).to_have_text(f"{oos['zh']} {oos['en']}")
    _say(page, "我忘记密码了，手机号13800138000")
    workflow = page.get_by_test_id("workflow")
    expect(workflow).to_have_attribute("data-status", "waiting_input")
    waiting = labels["statuses"]["waiting_input"]
    expect(workflow).to_contain_text(f"{waiting['zh']} {waiting['en']}")
    expect(workflow).to_contain_text("重置密码 Password reset")
    for raw in ("waiting_input", "password_reset", "oos"):
        assert raw not in page.locator("#assist").inner_text()


# -- layout, fonts, accessibility -----------------------------------------------------------------


def _fill_panels(page: Page, console: Console) -> None:
    _open(page, console, "u1003")
    _say(page, f"我要退货退款，订单{RETURN_ORDER}")
    expect(page.locator("[data-testid=proposal][data-status=proposed]")).to_have_count(1)
    expect(page.get_by_test_id("suggestion")).not_to_have_value("")


@pytest.mark.parametrize("viewport", [DESKTOP, SMALL], ids=["1440x900", "1024x768"])
def test_the_console_fits_the_screen(
    new_page: Callable[..., Page], console: Console, artifacts: Path, viewport: dict[str, int]
) -> None:
    page = new_page(viewport=viewport)
    _fill_panels(page, console)
    expect(page.get_by_test_id("breakers").locator("tbody tr")).not_to_have_count(1)
    width = viewport["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "no sideways scroll"
    for card in page.locator(".card").all():
        box = card.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5
    table = page.get_by_test_id("breakers").bounding_box()
    card = page.locator(".card-breakers").bounding_box()
    assert table and card and table["x"] + table["width"] <= card["x"] + card["width"]
    overflow = page.evaluate(
        "[...document.querySelectorAll('.card')].filter(c => c.scrollWidth > c.clientWidth + 1)"
        ".map(c => c.querySelector('h2')?.textContent)"
    )
    assert overflow == [], overflow
    utterance = page.get_by_test_id("utterance").bounding_box()
    assert utterance and utterance["width"] >= 240, utterance
    name = f"console-{width}x{viewport['height']}.png"
    page.screenshot(path=artifacts / name, full_page=True)
    page.screenshot(path=artifacts / name.replace(".png", "-viewport.png"))


def _cjk_font_installed() -> bool:
    try:
        found = subprocess.run(
            ["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        return False
    return bool(found.stdout.strip())


def test_chinese_renders_with_a_system_cjk_font(page: Page, console: Console) -> None:
    if not _cjk_font_installed():
        message = "no CJK font installed: apt-get install fonts-noto-cjk"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    _open(page, console, "u1001")
    _say(page, f"我的订单{ORDER}现在什么状态？")
    expect(page.get_by_test_id("intent")).to_have_text("订单状态 Order status")
    stack = page.evaluate("getComputedStyle(document.body).fontFamily")
    for family in ("PingFang SC", "Noto Sans CJK SC", "Source Han Sans SC"):
        assert family in stack
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    for selector in ("#intent-name", "#transcript .line .text", "h1 .sub"):
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        cjk = [f for f in fonts if CJK_FONTS.search(f["familyName"]) and f["glyphCount"] > 0]
        assert cjk, (selector, fonts)  # the Chinese glyphs come from a real CJK font, not boxes


@pytest.mark.parametrize("viewport", [DESKTOP, SMALL], ids=["1440x900", "1024x768"])
def test_axe_finds_no_serious_violations(
    new_page: Callable[..., Page],
    console: Console,
    axe_source: str,
    artifacts: Path,
    viewport: dict[str, int],
) -> None:
    # The console's Content-Security-Policy forbids inline scripts: axe is the test's own.
    page = new_page(viewport=viewport, bypass_csp=True)
    _fill_panels(page, console)
    page.get_by_test_id("suggestion-not-useful").click()  # the reason form shows too
    expect(page.get_by_test_id("suggestion-reason")).to_be_visible()
    page.add_script_tag(content=axe_source)
    results = page.evaluate(
        "axe.run(document, {runOnly: {type: 'tag', values: "
        "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})"
    )
    report = {"axe": results["testEngine"]["version"], "violations": results["violations"]}
    name = f"axe-{viewport['width']}x{viewport['height']}.json"
    (artifacts / name).write_text(json.dumps(report, ensure_ascii=False, indent=2))
    serious = [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:5])
        for v in results["violations"]
        if v["impact"] in {"serious", "critical"}
    ]
    assert serious == [], serious
    assert results["passes"], "axe ran its rules"
