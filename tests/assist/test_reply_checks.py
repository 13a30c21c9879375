"""The automatic reply checks of ``bench replies``: each can fail, and says so."""

from __future__ import annotations

from typing import Any

from hermes_desk.bench.replies import check_turn, summarise


def _outcome(reply: str, intent: str = "oos", **extra: Any) -> dict[str, Any]:
    return {"suggestion": {"text": reply}, "intent": {"name": intent}, **extra}


def test_language_is_the_replys_not_the_quoted_customers() -> None:
    label = {"text": "Please open a ticket: 快递员态度很差", "intent": "complaint"}
    quoting = _outcome("I have put it forward (open a complaint ticket: 快递员态度很差).")
    assert check_turn(label, quoting, language="en", executed=False)["language"] is True
    chinese = _outcome("非常抱歉，我已为您登记。")
    assert check_turn(label, chinese, language="en", executed=False)["language"] is False


def test_a_done_claim_fails_unless_a_write_executed() -> None:
    label = {"text": "refund please", "intent": "return_exchange"}
    claim = _outcome("Your return and refund are done: refund R-1.", "return_exchange")
    assert check_turn(label, claim, language="en", executed=False)["no_false_done"] is False
    assert check_turn(label, claim, language="en", executed=True)["no_false_done"] is True
    honest = _outcome("I have put in the request; it goes through once confirmed.")
    assert check_turn(label, honest, language="en", executed=False)["no_false_done"] is True
    zh = _outcome("密码已重置：临时密码已通过短信发送。")
    assert check_turn(label, zh, language="zh", executed=False)["no_false_done"] is False


def test_rejections_closings_emotion_and_preferences() -> None:
    rejected = {"text": "000000", "intent": "password_reset", "expect": "rejected"}
    again = _outcome("A code has been sent to the phone ending 8000.", "password_reset")
    assert check_turn(rejected, again, language="en", executed=False)["rejection_named"] is False
    named = _outcome("Sorry, that code is not right (tries left: 2).", "password_reset")
    assert check_turn(rejected, named, language="en", executed=False)["rejection_named"] is True

    closing = {"text": "谢谢，没别的问题了", "intent": "oos", "act": "closing"}
    oos = _outcome("抱歉，这个问题我暂时无法帮您处理。")
    assert check_turn(closing, oos, language="zh", executed=False)["closing_closed"] is False
    bye = _outcome("好的，祝您生活愉快，再见！")
    assert check_turn(closing, bye, language="zh", executed=False)["closing_closed"] is True

    upset = {"text": "I am really upset", "intent": "logistics", "negative": True}
    flat = _outcome("Order 1 is in transit.", "logistics")
    assert check_turn(upset, flat, language="en", executed=False)["negative_acknowledged"] is False

    preference = {"text": "以后不要给我打电话", "intent": "oos", "preference": True}
    ticket = _outcome(
        "专员会在24小时内给您打电话。", proposals=[{"tool": "create_ticket", "status": "proposed"}]
    )
    assert check_turn(preference, ticket, language="zh", executed=False)["preference_kept"] is False


def test_summary_counts_only_the_checks_that_apply() -> None:
    rows = [
        {"conversation": "a", "turn": 0, "lang": "zh", "text": "x", "reply": "y", "intent": "oos",
         "verdicts": {"intent": True, "slots": None, "language": True, "no_false_done": True,
                      "rejection_named": None, "closing_closed": False,
                      "negative_acknowledged": None, "preference_kept": None}},
        {"conversation": "b", "turn": 0, "lang": "en", "text": "x", "reply": "y", "intent": "oos",
         "verdicts": {"intent": False, "slots": True, "language": True, "no_false_done": True,
                      "rejection_named": None, "closing_closed": None,
                      "negative_acknowledged": None, "preference_kept": None}},
    ]  # fmt: skip
    figures = summarise(rows, conversations=2)
    assert figures["all"]["intent"] == {"n": 2, "passed": 1, "rate": 0.5}
    assert figures["zh"]["closing_closed"] == {"n": 1, "passed": 0, "rate": 0.0}
    assert figures["en"]["rejection_named"]["n"] == 0
    assert [f["failed"] for f in figures["failures"]] == [["closing_closed"], ["intent"]]
