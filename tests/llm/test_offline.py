from __future__ import annotations

from typing import Any

import pytest

from hermes_desk.llm import ChatModel, Message, OfflineResponder, ResponderInput, situation_for
from hermes_desk.llm.offline import PLACEHOLDER

REPLIES: dict[str, dict[str, Any]] = {
    "order_status": {
        "ok": "您好，订单 {order_id} 当前状态：{get_shipment.status_text}，承运商 "
        "{get_shipment.carrier}，预计 {get_shipment.eta} 送达。",
        "missing_slots": "麻烦您提供一下 12 位订单号，我马上帮您查询。",
        "tool_failed": "{fallback}",
    },
    "password_reset": {
        "waiting_input": "验证码已发送至 {phone}，请告诉我您收到的 6 位验证码。",
        "workflow_completed": "密码已重置成功。{notes}",
        "ok": {"zh": "好的，我来帮您重置密码。", "en": "Sure, let's reset your password."},
    },
    "payment_methods": {"ok": "您可以使用：{list_payment_methods.methods.0.name} 等。"},
    "oos": {"ok": "抱歉，这个问题我暂时无法帮您处理。"},
}


def responder() -> OfflineResponder:
    return OfflineResponder(REPLIES)


def test_ok_renders_slots_and_dotted_tool_results() -> None:
    facts = ResponderInput(
        intent="order_status",
        slots={"order_id": "202405180001"},
        tool_results={
            "get_shipment": {"status_text": "运输中", "carrier": "顺丰", "eta": "2024-05-20"}
        },
    )
    assert responder().reply(facts) == (
        "您好，订单 202405180001 当前状态：运输中，承运商 顺丰，预计 2024-05-20 送达。"
    )


def test_list_index_paths() -> None:
    facts = ResponderInput(
        intent="payment_methods",
        tool_results={"list_payment_methods": {"methods": [{"name": "支付宝"}, {"name": "微信"}]}},
    )
    assert responder().reply(facts) == "您可以使用：支付宝 等。"


def test_situations_are_derived_from_the_facts() -> None:
    assert situation_for(ResponderInput("x")) == "ok"
    assert situation_for(ResponderInput("x", missing_slots=("order_id",))) == "missing_slots"
    assert situation_for(ResponderInput("x", failed_fallbacks=("f",))) == "tool_failed"
    assert situation_for(ResponderInput("x", workflow_state="waiting_input")) == "waiting_input"
    assert situation_for(ResponderInput("x", workflow_state="completed")) == "workflow_completed"
    assert situation_for(ResponderInput("x", situation="custom")) == "custom"


def test_missing_slots_and_tool_failed() -> None:
    r = responder()
    assert r.reply(ResponderInput("order_status", missing_slots=("order_id",))) == (
        "麻烦您提供一下 12 位订单号，我马上帮您查询。"
    )
    failed = ResponderInput("order_status", failed_fallbacks=("物流系统繁忙，请稍后再试。",))
    assert r.reply(failed) == "物流系统繁忙，请稍后再试。"


def test_missing_field_never_crashes_and_prefers_a_complete_template() -> None:
    # the ok template needs get_shipment.* which is absent: placeholder, deterministic
    facts = ResponderInput(intent="order_status", slots={"order_id": "202405180001"})
    first = responder().reply(facts)
    assert PLACEHOLDER in first and "202405180001" in first
    assert responder().reply(facts) == first
    # a failed tool's fallback beats a placeholder reply
    facts2 = ResponderInput(
        intent="payment_methods", failed_fallbacks=("支付系统维护中。",), situation="ok"
    )
    assert responder().reply(facts2) == "支付系统维护中。"


def test_fallback_chain_of_situations_and_languages() -> None:
    r = responder()
    waiting = ResponderInput(
        "password_reset", slots={"phone": "13800138000"}, workflow_state="waiting_input"
    )
    assert "13800138000" in r.reply(waiting)
    done = ResponderInput("password_reset", workflow_state="completed", notes=("物流已延迟 7 天",))
    assert r.reply(done) == "密码已重置成功。物流已延迟 7 天"
    # workflow_failed → no template → tool_failed → no → ok (language map)
    failed = ResponderInput("password_reset", workflow_state="failed", language="en")
    assert r.reply(failed) == "Sure, let's reset your password."


def test_unknown_intent_uses_generic_or_default_intent() -> None:
    assert responder().reply(ResponderInput("nope", language="en")).startswith("Sure")
    r = OfflineResponder(REPLIES, default_intent="oos")
    assert r.reply(ResponderInput("nope")) == "抱歉，这个问题我暂时无法帮您处理。"


def test_broken_and_attribute_templates_are_safe() -> None:
    r = OfflineResponder(
        {"x": {"ok": "{order_id.__class__} {0} {", "missing_slots": "请提供 {missing_slots}"}}
    )
    out = r.reply(ResponderInput("x", slots={"order_id": "1"}))
    assert "class" not in out
    assert r.reply(ResponderInput("x", missing_slots=("order_id", "phone"))) == (
        "请提供 order_id、phone"
    )


@pytest.mark.anyio
async def test_is_a_chat_model() -> None:
    r = responder()
    assert isinstance(r, ChatModel)
    facts = ResponderInput("oos")
    resp = await r.complete([Message.user("今天天气")], context=facts)
    assert resp.link == "offline" and resp.offline
    assert resp.content == "抱歉，这个问题我暂时无法帮您处理。"
    assert resp.tool_calls == ()
    slots = await r.complete([Message.user("x")], response_format={"type": "json_object"})
    assert slots.content == "{}"
    bare = await r.complete([Message.user("你好")])
    assert bare.content and "帮您" in bare.content


def test_a_star_in_a_field_joins_every_item_of_a_list() -> None:
    from hermes_desk.llm.messages import ResponderInput
    from hermes_desk.llm.offline import OfflineResponder

    responder = OfflineResponder(
        {"payment_methods": {"ok": "可用：{list_payment_methods.methods.*.label}。"}}
    )
    methods = {"methods": [{"label": "支付宝"}, {"label": "微信支付"}, {"type": "x"}]}
    facts = ResponderInput(intent="payment_methods", tool_results={"list_payment_methods": methods})
    assert responder.reply(facts) == "可用：支付宝、微信支付。"
    english = {"methods": [{"label": "Card"}, {"label": "PayPal"}]}
    facts = ResponderInput(intent="payment_methods", tool_results={"list_payment_methods": english})
    assert responder.reply(facts) == "可用：Card, PayPal。"
    empty = ResponderInput(
        intent="payment_methods", tool_results={"list_payment_methods": {"methods": []}}
    )
    assert "支付宝" not in responder.reply(empty)


def test_terms_show_back_office_values_in_the_replys_language() -> None:
    replies = {
        "order_status": {
            "ok": {
                "zh": "订单 {order_id}：{get_shipment.status_text!t}，{get_shipment.carrier!t}。",
                "en": "Order {order_id} is {get_shipment.status_text!t} with "
                "{get_shipment.carrier!t}.",
            }
        },
        "payment_methods": {"ok": {"zh": "{m.methods.*.label!t}", "en": "{m.methods.*.label!t}"}},
    }
    terms = {
        "运输中": {"zh": "运输中", "en": "in transit"},
        "顺丰速运": {"zh": "顺丰速运", "en": "SF Express"},
        "支付宝": {"zh": "支付宝", "en": "Alipay"},
    }
    offline = OfflineResponder(replies, terms=terms)
    shipment = {"status_text": "运输中", "carrier": "顺丰速运"}
    facts = ResponderInput(
        intent="order_status",
        slots={"order_id": "1"},
        tool_results={"get_shipment": shipment},
        language="en",
    )
    assert offline.reply(facts) == "Order 1 is in transit with SF Express."
    zh = ResponderInput(
        intent="order_status", slots={"order_id": "1"}, tool_results={"get_shipment": shipment}
    )
    assert offline.reply(zh) == "订单 1：运输中，顺丰速运。"
    methods = {"m": {"methods": [{"label": "支付宝"}, {"label": "货到付款"}]}}
    listed = ResponderInput(
        intent="payment_methods", tool_results={"m": methods["m"]}, language="en"
    )
    assert offline.reply(listed) == "Alipay, 货到付款", "an unknown term is shown as it is"


def test_a_failed_tools_fallback_in_another_language_is_not_sent() -> None:
    offline = OfflineResponder({"order_status": {"ok": {"zh": "{get_shipment.eta}", "en": "x"}}})
    english = ResponderInput(
        intent="other",
        failed_fallbacks=("抱歉，订单系统暂时繁忙。",),
        language="en",
    )
    text = offline.reply(english)
    assert "抱歉" not in text and text.startswith("Sorry"), text
    chinese = ResponderInput(intent="other", failed_fallbacks=("抱歉，订单系统暂时繁忙。",))
    assert offline.reply(chinese) == "抱歉，订单系统暂时繁忙。"


def test_a_rejected_input_never_falls_back_to_the_waiting_prompt() -> None:
    offline = OfflineResponder(
        {"password_reset": {"waiting_input": {"zh": "验证码已发送", "en": "A code was sent"}}}
    )
    facts = ResponderInput(
        intent="password_reset",
        slots={"tries_left": 2},
        situation="input_rejected",
        language="en",
        workflow_state="waiting_input",
        waiting_for="sms_code",
    )
    text = offline.reply(facts)
    assert "sent" not in text and "2" in text, text


def test_sent_again_says_so_or_falls_back_to_the_slots_waiting_reply() -> None:
    templates: dict[str, Any] = {
        "waiting_sms_code": {"zh": "验证码已发送", "en": "A code was sent"},
        "waiting_input": {"zh": "请提供", "en": "Please give it"},
    }
    facts = ResponderInput(
        intent="password_reset",
        situation="sent_again",
        language="en",
        workflow_state="waiting_input",
        waiting_for="sms_code",
    )
    assert OfflineResponder({"password_reset": templates}).reply(facts) == "A code was sent"
    own = {**templates, "sent_again": {"zh": "已重新发送", "en": "Sent a new one"}}
    assert OfflineResponder({"password_reset": own}).reply(facts) == "Sent a new one"
    bare = OfflineResponder({"password_reset": {}}).reply(facts)
    assert bare.startswith("All right, I have sent it again"), bare


def test_conversation_replies_answer_dialogue_acts() -> None:
    offline = OfflineResponder(
        {"oos": {"ok": {"zh": "抱歉，无法处理", "en": "Sorry, I cannot help"}}},
        conversation={"act_closing": {"zh": "再见！", "en": "Goodbye!"}},
    )
    facts = ResponderInput(intent="oos", situation="act_closing", language="en")
    assert offline.reply(facts) == "Goodbye!"
    assert offline.reply(ResponderInput(intent="oos", situation="act_closing")) == "再见！"


def test_a_reported_status_is_said_by_the_records_status() -> None:
    offline = OfflineResponder(
        {"return_exchange": {
            "status_reported_refunded": {"zh": "订单 {order_id} 已退款", "en": "x"},
            "not_found": {"zh": "没有查到订单 {order_id}", "en": "x"},
        }}
    )  # fmt: skip

    def reply(status: str) -> str:
        return offline.reply(
            ResponderInput(
                intent="return_exchange",
                slots={"order_id": "1"},
                tool_results={"get_order": {"status": status}},
                situation="status_reported",
            )
        )

    assert reply("refunded") == "订单 1 已退款"
    # no template for the status: the generic sentence, never another situation's
    assert reply("delivered") == "我已为您查到这笔订单，马上为您核实进度。"


def test_an_ok_reply_has_variants_by_what_the_tool_found() -> None:
    offline = OfflineResponder(
        {
            "order_status": {
                "ok": "订单 {order_id} 预计 {get_shipment.eta} 送达。",
                "ok_delivered": "订单 {order_id} 已签收。",
                "ok_lost": "订单 {order_id} 的包裹丢失了：{get_shipment.no_such_field}",
            }
        }
    )

    def reply(status: str, **facts: Any) -> str:
        shipment = {"status": status, "eta": "2024-05-30"}
        return offline.reply(
            ResponderInput(
                intent="order_status",
                slots={"order_id": "1"},
                tool_results={"get_shipment": shipment},
                **facts,
            )
        )

    assert reply("delivered") == "订单 1 已签收。", "an arrived parcel is not promised a date"
    assert reply("in_transit") == "订单 1 预计 2024-05-30 送达。", "no variant: the ok template"
    assert reply("lost") == "订单 1 预计 2024-05-30 送达。", "a variant that cannot render: ok"
    assert reply("delivered", situation="tool_failed") != "订单 1 已签收。", "only for ok"
    assert reply("delivered a while ago") == "订单 1 预计 2024-05-30 送达。", "not a name"


def test_a_record_past_its_promised_date_is_told_late_before_any_status_variant() -> None:
    offline = OfflineResponder(
        {
            "order_status": {
                "ok": "订单 {order_id} 预计 {get_shipment.eta} 送达。",
                "ok_in_transit": "订单 {order_id} 运输中，预计 {get_shipment.eta} 送达。",
                "ok_overdue": "订单 {order_id} 原预计 {get_shipment.eta} 送达，超出 {days_overdue} 天。",  # noqa: E501
            }
        }
    )

    def reply(**facts: Any) -> str:
        return offline.reply(
            ResponderInput(
                intent="order_status",
                slots={"order_id": "1"},
                tool_results={"get_shipment": {"status": "in_transit", "eta": "2026-12-01"}},
                **facts,
            )
        )

    assert reply(overdue={"get_shipment": 4}) == "订单 1 原预计 2026-12-01 送达，超出 4 天。"
    assert reply() == "订单 1 运输中，预计 2026-12-01 送达。", "not late: the status variant"
    assert reply(overdue={"get_shipment": 4}, situation="tool_failed") != reply(
        overdue={"get_shipment": 4}
    ), "only for ok"


def test_a_packs_own_situation_has_variants_by_what_answered_then_falls_back_to_ok() -> None:
    offline = OfflineResponder(
        {
            "kb_question": {
                "ok": "{kb_search.passage}",
                "answer_for_order": "关于订单 {order_id}：{kb_search.passage}",
                "answer_for_order_get_order": "订单 {order_id}：{get_order.status_text}。{kb_search.passage}",  # noqa: E501
            }
        }
    )

    def reply(situation: str, **results: Any) -> str:
        return offline.reply(
            ResponderInput(
                intent="kb_question",
                slots={"order_id": "1"},
                tool_results={"kb_search": {"passage": "一到三天。"}, **results},
                situation=situation,
            )
        )

    refunded = {"status": "refunded", "status_text": "已退款"}
    assert reply("answer_for_order", get_order=refunded) == "订单 1：已退款。一到三天。"
    assert reply("answer_for_order") == "关于订单 1：一到三天。", "no order looked up"
    assert reply("answer_for_order", get_order={"status": "x"}) == "关于订单 1：一到三天。"
    assert reply("answer_for_something") == "一到三天。", "no template of its own: ok"


def test_a_search_that_found_nothing_after_the_record_still_says_the_record() -> None:
    """ "帮我查一下 订单…" read as a knowledge question: the order was found, no article was, and
    the reply only said it would ask a colleague."""
    offline = OfflineResponder(
        {
            "kb_question": {
                "not_found": "没有找到说明。",
                "not_found_get_order": "订单 {order_id}：{get_order.status_text}。没有找到说明。",
            }
        }
    )

    def reply(**results: Any) -> str:
        return offline.reply(
            ResponderInput(
                intent="kb_question",
                slots={"order_id": "1"},
                tool_results={"kb_search": {"results": []}, **results},
                situation="not_found",
            )
        )

    delivered = {"status": "delivered", "status_text": "已签收"}
    assert reply(get_order=delivered) == "订单 1：已签收。没有找到说明。"
    assert reply() == "没有找到说明。", "no order looked up"
    assert reply(get_order={"error": "not found"}) == "没有找到说明。", "no status to say"


def test_an_amount_reads_as_people_write_it_unless_the_template_formats_it() -> None:
    offline = OfflineResponder(
        {
            "order_status": {
                "ok": "待付款 {get_order.amount} 元",
                "ok_paid": "{get_order.amount:.2f}",
            }
        }
    )

    def reply(status: str, amount: float) -> str:
        order = {"status": status, "amount": amount}
        return offline.reply(
            ResponderInput(intent="order_status", tool_results={"get_order": order})
        )

    assert reply("pending_payment", 129.0) == "待付款 129 元"
    assert reply("pending_payment", 428.9) == "待付款 428.9 元"
    assert reply("paid", 129.0) == "129.00", "a template's own format wins"


def test_a_tool_that_answered_has_its_own_ok_variant() -> None:
    offline = OfflineResponder(
        {
            "order_status": {
                "ok": "订单 {order_id} 预计 {get_shipment.eta} 送达。",
                "ok_paid": "订单 {order_id} 已付款，待发货。",
                "ok_get_order": "订单 {order_id}：{get_order.status_text}。",
            }
        }
    )

    def reply(**results: Any) -> str:
        return offline.reply(
            ResponderInput(intent="order_status", slots={"order_id": "1"}, tool_results=results)
        )

    assert reply(get_order={"status": "paid", "status_text": "已付款"}) == "订单 1 已付款，待发货。"
    assert reply(get_order={"status": "refunded", "status_text": "已退款"}) == "订单 1：已退款。"
    assert reply(get_shipment={"eta": "2024-05-30"}) == "订单 1 预计 2024-05-30 送达。"


def test_a_value_made_of_terms_is_shown_piece_by_piece_or_not_at_all() -> None:
    terms = {
        "招商银行": {"zh": "招商银行", "en": "China Merchants Bank"},
        "中国银行": {"zh": "中国银行", "en": "Bank of China"},
        "中国工商银行": {"zh": "中国工商银行", "en": "ICBC"},
        "储蓄卡": {"zh": "储蓄卡", "en": "debit card"},
        "信用卡": {"zh": "信用卡", "en": "credit card"},
        "（尾号": {"zh": "（尾号", "en": " (ending"},
        "）": {"zh": "）", "en": ")"},
        "支付宝": {"zh": "支付宝", "en": "Alipay"},
    }
    offline = OfflineResponder({"payment_methods": {"ok": "{m.methods.*.label!t}"}}, terms=terms)
    labels = [
        "支付宝",
        "招商银行储蓄卡（尾号 6217）",
        "中国工商银行信用卡（尾号 0392）",
        "某某银行信用卡",
    ]
    methods = {"m": {"methods": [{"label": label} for label in labels]}}
    english = ResponderInput(intent="payment_methods", tool_results=methods, language="en")
    assert offline.reply(english) == (
        "Alipay, China Merchants Bank debit card (ending 6217), ICBC credit card (ending 0392), "
        "某某银行信用卡"
    ), "the longest term first (中国工商银行, not 中国银行); an unknown bank: as it is"
    chinese = ResponderInput(intent="payment_methods", tool_results=methods)
    assert offline.reply(chinese) == "、".join(labels)
