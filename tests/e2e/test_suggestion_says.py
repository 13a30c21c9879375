"""The suggestion says the right thing (SPEC §8 R1), over HTTP with the real demo backend:
the turn's language, true outcomes, emotion, contact preferences and dialogue acts."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from demo_backend.state import BackendState, business_today, load_sample_data

from demo_backend import create_app as create_backend
from hermes_desk.testing.servers import serve_in_thread
from tests.e2e.conftest import Service, serve_service

_HAN = re.compile(r"[\u4e00-\u9fff]")


def _han(text: str) -> int:
    return len(_HAN.findall(text))


def test_the_reply_speaks_each_turns_language_and_a_bare_number_keeps_it(
    service: Service,
) -> None:
    sid = service.open_session("u1004")["session_id"]
    english = service.turn(sid, "u1004", "Hi, where is my order 202405120345?")
    assert english["language"] == "en"
    text = english["suggestion"]["text"]
    assert "202405120345" in text and _han(text) == 0, text  # carrier and status in English too

    bare = service.turn(sid, "u1004", "202405240001")
    assert bare["language"] == "en", "a bare order number keeps the conversation's language"
    assert _han(bare["suggestion"]["text"]) == 0

    chinese = service.turn(sid, "u1004", "那这个订单什么时候能到？")
    assert chinese["language"] == "zh"
    assert _han(chinese["suggestion"]["text"]) > 5

    mixed = service.turn(sid, "u1004", "refund 要多久到账")
    assert mixed["language"] == "zh", "Chinese words carry the turn, an English term does not"


def test_why_still_wrong_after_a_wrong_code_is_about_the_code(service: Service) -> None:
    """ "怎么还不对" right after a wrong code was read as a parcel's question and asked for an
    order number; the reset's next code was then taken by a parcel's conversation."""
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "忘记密码了，手机号13800138000")
    service.turn(sid, "u1001", "验证码是123456")
    said = service.turn(sid, "u1001", "怎么还不对")["suggestion"]["text"]
    assert "验证码" in said and "订单号" not in said, said
    code = httpx.get(f"{service.backend_url}/sms/outbox/13800138000").json()["code"]
    verified = service.turn(sid, "u1001", code)
    assert verified["suggestion"]["situation"] == "proposed", verified["suggestion"]


def test_a_rejected_code_is_named_with_the_tries_left_and_nothing_is_called_done(
    service: Service,
) -> None:
    sid = service.open_session("u1001")["session_id"]
    first = service.turn(sid, "u1001", "I forgot my password, my phone is 13800138000")
    assert first["language"] == "en"
    assert first["workflow"]["waiting_for"] == "sms_code"

    wrong = service.turn(sid, "u1001", "the code is 000000")
    assert wrong["suggestion"]["situation"] == "input_rejected"
    assert "not right" in wrong["suggestion"]["text"] and "2" in wrong["suggestion"]["text"]
    assert "has been sent" not in wrong["suggestion"]["text"]

    again = service.turn(sid, "u1001", "验证码是111111")
    assert again["language"] == "zh"
    assert again["suggestion"]["situation"] == "input_rejected"
    assert "不正确" in again["suggestion"]["text"] and "1 次" in again["suggestion"]["text"]

    code = httpx.get(f"{service.backend_url}/sms/outbox/13800138000").json()["code"]
    verified = service.turn(sid, "u1001", f"ok it is {code}")
    assert verified["suggestion"]["situation"] == "proposed"
    [proposal] = verified["proposals"]
    assert proposal["status"] == "proposed"
    text = verified["suggestion"]["text"]
    assert "is reset" not in text and "once confirmed" in text, text


@pytest.mark.parametrize(
    ("asked", "says"),
    [("thanks! can I log in now?", "temporary password"), ("谢谢 现在能登录了吗", "临时密码")],
)
def test_thanks_and_can_i_log_in_after_the_reset_says_how_it_went(
    service: Service, asked: str, says: str
) -> None:
    """ "thanks! can I log in now?" after the agent approved the reset got "You are welcome,
    glad I could help": the question went unanswered."""
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "I forgot my password, my phone is 13800138000")
    code = httpx.get(f"{service.backend_url}/sms/outbox/13800138000").json()["code"]
    [proposal] = service.turn(sid, "u1001", code)["proposals"]
    approved = service.client.post(
        f"/v1/proposals/{proposal['id']}/approve", json={"user_id": "u1001", "agent_id": "a-1"}
    )
    assert approved.status_code == 200, approved.text
    said = service.turn(sid, "u1001", asked)["suggestion"]["text"]
    assert says in said and "welcome" not in said and "不客气" not in said, said


def test_a_negative_turn_is_acknowledged_before_the_facts_and_gives_a_key_fact(
    service: Service,
) -> None:
    sid = service.open_session("u1001")["session_id"]
    upset = service.turn(sid, "u1001", "Where is my order 202405201234? I am really upset")
    text = upset["suggestion"]["text"]
    assert text.startswith("I am really sorry"), text
    assert text.index("sorry") < text.index("202405201234"), "the facts follow"
    assert "in transit" in text

    later = service.turn(sid, "u1001", "It has been 10 days already and I am really upset")
    first_sentence = re.split(r"[.!?]", later["suggestion"]["text"])[0]
    assert "sorry" in first_sentence.lower(), later["suggestion"]["text"]
    facts = {f["key"]: f for f in later["key_facts"]}
    assert facts["logistics_delay_days"]["value"] == 10
    assert facts["logistics_delay_days"]["is_key_fact"]

    service.close(sid, "u1001")
    sid = service.open_session("u1001")["session_id"]
    angry = service.turn(sid, "u1001", "订单202405201234到哪了，我很生气")
    text = angry["suggestion"]["text"]
    assert text.startswith("非常抱歉") and "运输中" in text, text
    assert text.count("我理解您的心情") == 1

    sid2 = service.open_session("u1002")["session_id"]
    repeated = service.turn(sid2, "u1002", "客服三次都没解决")
    facts = {f["key"]: f for f in repeated["key_facts"]}
    assert facts["repeat_contact_count"]["value"] == 3
    assert facts["repeat_contact_count"]["is_key_fact"]


def test_a_stated_preference_is_noted_not_ticketed_and_kept_in_later_replies(
    service: Service,
) -> None:
    before = httpx.get(f"{service.backend_url}/_log").json()["last_seq"]
    sid = service.open_session("u1003")["session_id"]
    out = service.turn(sid, "u1003", "以后不要给我打电话，发短信就行")
    assert out["suggestion"]["situation"] == "preference_noted"
    assert out["proposals"] == [] and out["tool_calls"] == [], "no ticket, no look-up"
    text = out["suggestion"]["text"]
    assert "短信" in text and "不希望接到电话" in text
    assert "回电" not in text and "致电" not in text
    keys = {f["key"]: f["value"] for f in out["key_facts"] if f["is_key_fact"]}
    assert keys == {"contact_preference_no_calls": True, "contact_preference_channel": "sms"}
    assert httpx.get(f"{service.backend_url}/_log").json()["last_seq"] == before

    complaint = service.turn(sid, "u1003", "我要投诉，订单202405231122一直不发货")
    assert [p["tool"] for p in complaint["proposals"]] == ["create_ticket"]
    assert "已记下您的要求" in complaint["suggestion"]["text"]
    assert "希望通过短信联系" in complaint["suggestion"]["text"]

    closed = service.close(sid, "u1003")
    texts = {n["key"]: n["text"] for n in closed["notes"]}
    assert texts["contact_preference_channel"] == "希望通过短信联系"

    # The next contact is in English: the notes read in English.
    sid2 = service.open_session("u1003")["session_id"]
    english = service.turn(sid2, "u1003", "Hello, is order 202405231122 shipped yet?")
    notes = {n["key"]: n["text"] for n in english["notes"]}
    assert notes["contact_preference_channel"] == "Prefers contact by text message"
    assert notes["contact_preference_no_calls"] == "Does not want phone calls"
    closed = service.close(sid2, "u1003")
    assert {n["text"] for n in closed["notes"]} >= {"Prefers contact by text message"}


def test_english_preferences_are_noted_with_their_channel(service: Service) -> None:
    sid = service.open_session("u1005")["session_id"]
    out = service.turn(sid, "u1005", "Please don't call me, email only")
    assert out["language"] == "en"
    assert out["suggestion"]["situation"] == "preference_noted"
    assert out["proposals"] == []
    assert "Prefers contact by e-mail" in out["suggestion"]["text"]
    keys = {f["key"]: f["value"] for f in out["key_facts"] if f["is_key_fact"]}
    assert keys["contact_preference_channel"] == "email"


def test_dialogue_acts_are_answered_as_such_not_as_out_of_scope(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    hello = service.turn(sid, "u1001", "你好")
    assert hello["dialogue_act"] == "greeting"
    assert hello["suggestion"]["situation"] == "act_greeting"
    assert hello["tool_calls"] == [] and hello["proposals"] == []
    assert "抱歉" not in hello["suggestion"]["text"]

    asked = service.turn(sid, "u1001", "你好，我的订单202405201234到哪了")
    assert asked["dialogue_act"] == "greeting", "reported, but the question is answered"
    assert [c["tool"] for c in asked["tool_calls"]] == ["get_shipment"]

    bye = service.turn(sid, "u1001", "谢谢，没别的问题了")
    assert bye["dialogue_act"] == "closing"
    assert bye["suggestion"]["situation"] == "act_closing"
    assert bye["tool_calls"] == [] and bye["proposals"] == []
    assert "再见" in bye["suggestion"]["text"] and "无法" not in bye["suggestion"]["text"]

    thanks = service.turn(sid, "u1001", "thank you so much for your help")
    assert thanks["dialogue_act"] == "thanks" and thanks["language"] == "en"
    assert "welcome" in thanks["suggestion"]["text"]

    wrong = service.turn(sid, "u1001", "不是这个，是另一个")
    assert wrong["dialogue_act"] == "correction"
    assert wrong["suggestion"]["situation"] == "act_correction"
    assert wrong["tool_calls"] == []

    # asking for help as a first turn: "Sorry, I cannot help with that one" before
    sid = service.open_session("u1001", resume=False)["session_id"]
    helped = service.turn(sid, "u1001", "i need help")
    assert helped["suggestion"]["situation"] == "act_greeting", helped["suggestion"]
    assert "How can I help" in helped["suggestion"]["text"]


@pytest.mark.parametrize(
    "text, said",
    [("帮我转人工", "我是人工客服"), ("你们是机器人吗", "我是人工客服"),
     ("I want to talk to a real person", "you are talking to a person")],
)  # fmt: skip
def test_a_customer_asking_for_a_person_is_told_they_have_one(
    service: Service, text: str, said: str
) -> None:
    """ "帮我转人工" and "你们是机器人吗" answered "我暂时无法帮您处理"; "I want to talk to a real
    person" put a complaint ticket forward whose summary was the sentence. The agent who sends
    the suggestion is a person: the reply says so, and nothing is looked up or proposed."""
    sid = service.open_session("u1001")["session_id"]
    out = service.turn(sid, "u1001", text)
    assert out["dialogue_act"] == "human", out["dialogue_act"]
    assert out["suggestion"]["situation"] == "act_human", out["suggestion"]
    assert said in out["suggestion"]["text"] and "无法" not in out["suggestion"]["text"]
    assert out["tool_calls"] == [] and out["proposals"] == []


@pytest.mark.parametrize(
    "text, said",
    [("hello, I'd like to speak to a human", "you are talking to a person"),
     ("are you a real person or a bot", "you are talking to a person"),
     ("你们是人工还是机器人", "我是人工客服"), ("能不能帮我转人工", "我是人工客服")],
)  # fmt: skip
def test_asking_for_a_person_among_other_words_is_told_they_have_one(
    service: Service, text: str, said: str
) -> None:
    """ "hello, I'd like to speak to a human" and "你们是人工还是机器人" (more than the act's
    phrase) answered "Sorry, I cannot help with that one"."""
    sid = service.open_session("u1001")["session_id"]
    out = service.turn(sid, "u1001", text)
    assert out["suggestion"]["situation"] == "act_human", out["suggestion"]
    assert said in out["suggestion"]["text"]
    assert out["tool_calls"] == [] and out["proposals"] == []


def test_a_confirmation_while_a_write_waits_proposes_nothing_new(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    complaint = service.turn(sid, "u1001", "我要投诉，订单202405201234的快递员态度很差")
    [proposal] = complaint["proposals"]
    assert proposal["tool"] == "create_ticket"

    yes = service.turn(sid, "u1001", "yes please")
    assert yes["dialogue_act"] == "confirmation" and yes["language"] == "en"
    assert yes["proposals"] == [] and yes["tool_calls"] == []
    assert yes["suggestion"]["situation"] == "act_confirmation_pending"
    text = yes["suggestion"]["text"]
    assert "complaint ticket" in text, "the pending write, explained in the turn's language"
    assert _han(text) <= len("快递员态度很差") + 20, text  # only the customer's own words

    ok = service.turn(sid, "u1001", "好的")
    assert ok["dialogue_act"] == "confirmation"
    assert ok["suggestion"]["situation"] == "act_confirmation_pending"
    listed = service.client.get(f"/v1/sessions/{sid}/proposals", params={"user_id": "u1001"})
    assert listed.status_code == 200, listed.text
    statuses = [p["status"] for p in listed.json()["proposals"]]
    assert statuses == ["proposed"], "still one proposal: nothing runs before the agent approves"


def test_a_failed_look_up_is_said_in_the_customers_language(service: Service) -> None:
    httpx.put(f"{service.backend_url}/_faults/get_shipment", json={"error_rate": 1.0})
    try:
        sid = service.open_session("u1001")["session_id"]
        english = service.turn(sid, "u1001", "Where is my parcel 202405201234?")
        assert [c["status"] for c in english["tool_calls"]] != ["ok"]
        assert english["suggestion"]["situation"] == "tool_failed"
        text = english["suggestion"]["text"]
        assert text.startswith("Sorry") and _han(text) == 0, text
        assert "arrive by" not in text, "no shipment facts without a shipment"
        chinese = service.turn(sid, "u1001", "订单202405201234的快递到哪了")
        assert chinese["suggestion"]["situation"] == "tool_failed"
        assert chinese["suggestion"]["text"].startswith("抱歉")
    finally:
        httpx.delete(f"{service.backend_url}/_faults")


def test_an_order_of_another_customer_reads_as_not_found_in_english(service: Service) -> None:
    sid = service.open_session("u1002")["session_id"]
    out = service.turn(sid, "u1002", "Where is my order 202405201234?")
    assert out["suggestion"]["situation"] == "not_found"
    assert "could not find order 202405201234" in out["suggestion"]["text"]
    # What the agent's screen shows of the calls reads exactly as for an order that does not
    # exist: nothing tells that this one is someone else's (SPEC §8 X3).
    nobodys = service.turn(sid, "u1002", "Where is my order 209999999999?")

    def shown(turn: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(c["tool"], c["status"], c["error"], c["result"]) for c in turn["tool_calls"]]

    assert shown(out) == shown(nobodys) and shown(out)[0][1:] == (
        "not_found",
        "no such record",
        None,
    )
    workflow_of = service.open_session("u1004")["session_id"]
    reset = service.turn(workflow_of, "u1004", "I forgot my password, my phone is 13912345678")
    view = service.client.get(
        f"/v1/workflows/{reset['workflow']['id']}", params={"user_id": "u1004"}
    ).json()
    assert "another customer" not in str(view), "u1002's phone reads as not registered"
    assert reset["suggestion"]["situation"] == "not_found", "not 'try again later'"
    assert "not linked to your account" in reset["suggestion"]["text"]
    unknown = service.turn(workflow_of, "u1004", "I forgot my password, my phone is 13900001111")
    assert unknown["suggestion"]["text"] == reset["suggestion"]["text"]


def test_a_parcel_that_arrived_or_never_will_is_not_promised_a_date(service: Service) -> None:
    data = load_sample_data()
    owners = {order["order_id"]: order["user_id"] for order in data["orders"]}
    ended = {
        "delivered": ("delivered", "已签收"),
        "lost": ("lost", "丢失"),
        "returned": ("returned", "退回"),
    }
    # "where is my order" of one returned or refunded after its parcel came says so (the order's
    # calls_detail); "快递到哪了" asks of the parcel
    since = {"returning": "being returned", "refunded": "refunded"}
    statuses = {order["order_id"]: order["status"] for order in data["orders"]}
    shipments = [s for s in data["shipments"] if s["status"] in ended]
    assert len(shipments) >= 10, "the sample data has parcels that arrived, were lost or returned"
    for shipment in shipments:
        order_id = shipment["order_id"]
        said_en, said_zh = ended[shipment["status"]]
        said_en = since.get(statuses[order_id], said_en)
        user = owners[order_id]
        sid = service.open_session(user)["session_id"]
        english = service.turn(sid, user, f"Where is my order {order_id}?")
        assert {c["status"] for c in english["tool_calls"]} == {"ok"}, english["tool_calls"]
        text = english["suggestion"]["text"]
        assert said_en in text and "arrive by" not in text and "expected by" not in text, text
        chinese = service.turn(sid, user, f"订单{order_id}的快递到哪了")
        text = chinese["suggestion"]["text"]
        assert said_zh in text and "预计" not in text, text
        # a parcel returned to the shop may have been a customer's return, received: its
        # delivery is not denied ("已被退回…没有送达" for an order returned and refunded)
        assert "没有送达" not in text and "not delivered" not in english["suggestion"]["text"]
        service.close(sid, user)

    sid = service.open_session("u1004")["session_id"]
    on_its_way = service.turn(sid, "u1004", "Where is my order 202405240001?")
    assert "arrive by" in on_its_way["suggestion"]["text"], "a parcel on its way keeps its date"
    # A delayed parcel: its date was the expected one, which may be past ("原预计").
    for shipment in [s for s in data["shipments"] if s["status"] == "delayed"]:
        user = owners[shipment["order_id"]]
        sid = service.open_session(user)["session_id"]
        late = service.turn(sid, user, f"订单{shipment['order_id']}的快递到哪了")
        assert "原预计" in late["suggestion"]["text"], late["suggestion"]["text"]
        service.close(sid, user)


def test_a_proposal_shown_again_names_its_own_order_not_the_turns(service: Service) -> None:
    sid = service.open_session("u1001")["session_id"]
    asked = service.turn(
        sid, "u1001", "I want to return order 202405201234, the headphones are broken"
    )
    [proposal] = asked["proposals"]
    assert proposal["arguments"]["order_id"] == "202405201234"

    plain = service.turn(service.open_session("u1003")["session_id"], "u1003",
                         "I'd like to return order 202405231122")  # fmt: skip
    [default_reason] = plain["proposals"]
    assert "customer requested a return" in default_reason["explanation"]
    assert _han(plain["suggestion"]["text"]) == 0, plain["suggestion"]["text"]
    other = service.turn(sid, "u1001", "202405181001")
    assert other["suggestion"]["situation"] == "proposed"
    assert [p["id"] for p in other["proposals"]] == [proposal["id"]], "no second return"
    text = other["suggestion"]["text"]
    # the proposal named with its own order; the other only said to need a request of its own
    shown, _, rest = text.partition("Order 202405181001 needs a request of its own")
    assert "202405201234" in shown and "202405181001" not in shown and rest, text


def test_an_order_not_shipped_yet_is_answered_from_the_order_not_called_missing(
    service: Service,
) -> None:
    sid = service.open_session("u1001")["session_id"]
    unpaid = service.turn(sid, "u1001", "has my order 202405250077 shipped?")
    calls = [(c["tool"], c["status"]) for c in unpaid["tool_calls"]]
    assert calls == [("get_shipment", "not_found"), ("get_order", "ok")]
    text = unpaid["suggestion"]["text"]
    assert "waiting for payment" in text and "could not find" not in text, text
    chinese = service.turn(sid, "u1001", "订单202405250077的快递到哪了")
    text = chinese["suggestion"]["text"]
    assert "待付款" in text and "没有查到" not in text, text

    sid = service.open_session("u1005")["session_id"]
    cancelled = service.turn(sid, "u1005", "where is my parcel 202405211314?")
    assert "cancelled" in cancelled["suggestion"]["text"], cancelled["suggestion"]["text"]
    # "I didn't cancel it" got the status again: what cancels an order is said with it.
    why = service.turn(sid, "u1005", "我没取消啊")["suggestion"]["text"]
    assert "已取消" in why and "30 分钟" in why and "退回" not in why, why
    # "能恢复吗" / "can you restore it?" got the status again: no cancelled order comes back.
    again = service.turn(sid, "u1005", "能恢复吗")
    assert "不能恢复" in again["suggestion"]["text"] and again["proposals"] == [], again
    restore = service.turn(sid, "u1005", "can you restore it?")["suggestion"]["text"]
    assert "cannot be restored" in restore, restore

    # Another customer's order is still not found, by either look-up (SPEC §8 X3).
    sid = service.open_session("u1002")["session_id"]
    other = service.turn(sid, "u1002", "has my order 202405250077 shipped?")
    assert [c["status"] for c in other["tool_calls"]] == ["not_found", "not_found"]
    assert other["suggestion"]["situation"] == "not_found"
    assert "waiting for payment" not in other["suggestion"]["text"]


def test_the_code_is_said_to_have_gone_only_to_the_phone_it_went_to(service: Service) -> None:
    sid = service.open_session("u1006")["session_id"]
    service.turn(sid, "u1006", "I forgot my password")
    sent = service.turn(sid, "u1006", "17700001111")
    assert sent["workflow"]["waiting_for"] == "sms_code"
    assert "ending 1111" in sent["suggestion"]["text"]
    for text in ("my old number was 13900002222, I don't use it anymore", "13900003333"):
        later = service.turn(sid, "u1006", text)
        assert later["workflow"]["waiting_for"] == "sms_code"
        reply = later["suggestion"]["text"]
        assert "ending 1111" in reply and "2222" not in reply and "3333" not in reply, reply
    outbox = httpx.get(f"{service.backend_url}/sms/outbox/13900002222")
    assert outbox.status_code == 404, "no code went to the old number"


def test_every_customers_ways_to_pay_are_said_in_english_to_an_english_turn(
    service: Service,
) -> None:
    for user in sorted(load_sample_data()["payment_methods"]):
        sid = service.open_session(user)["session_id"]
        out = service.turn(sid, user, "Which payment methods can I use?")
        assert out["intent"]["name"] == "payment_methods", out["intent"]
        text = out["suggestion"]["text"]
        assert text.startswith("Your account can pay with") and _han(text) == 0, text
        service.close(sid, user)


def test_did_it_work_after_an_approved_reset_is_answered_with_the_reset(service: Service) -> None:
    sid = service.open_session("u1005")["session_id"]
    service.turn(sid, "u1005", "I forgot my password, my phone is 13688889999")
    code = httpx.get(f"{service.backend_url}/sms/outbox/13688889999").json()["code"]
    verified = service.turn(sid, "u1005", f"the code is {code}")
    [proposal] = verified["proposals"]
    approved = service.client.post(
        f"/v1/proposals/{proposal['id']}/approve",
        json={"user_id": "u1005", "agent_id": "agent-1"},
    )
    assert approved.status_code == 200 and approved.json()["status"] == "executed"
    asked = service.turn(sid, "u1005", "did it work?")
    assert asked["suggestion"]["situation"] == "workflow_completed", asked["suggestion"]
    text = asked["suggestion"]["text"]
    assert text.startswith("Your password is reset") and "ending 9999" in text, text
    assert asked["proposals"] == [] and asked["tool_calls"] == []


def test_asked_to_cancel_an_order_the_reply_says_how_not_when_it_ships(service: Service) -> None:
    """No tool of the pack cancels an order: the reply quotes how it is done, proposes nothing,
    and never answers a cancellation with "it ships once it is paid"."""
    sid = service.open_session("u1001")["session_id"]
    asked = service.turn(sid, "u1001", "我的订单202405250077还没付款，帮我取消掉吧")
    text = asked["suggestion"]["text"]
    assert asked["intent"]["name"] == "order_status"
    assert asked["intent"]["answered_as"] == "kb_question"
    assert asked["proposals"] == []
    assert [c["tool"] for c in asked["tool_calls"]] == ["get_order", "kb_search"]
    assert "直接取消" in text and "发货" not in text.split("。")[0], text
    whether = service.turn(sid, "u1001", "can I still cancel it?")
    assert "cancelled" in whether["suggestion"]["text"] and whether["proposals"] == []
    assert "ships once it is paid" not in whether["suggestion"]["text"]
    # Whether it was cancelled is a question about the record.
    status = service.turn(sid, "u1001", "订单202405250077取消了吗")
    assert status["intent"]["answered_as"] == "order_status"
    assert "待付款" in status["suggestion"]["text"]
    # In English, and as a first turn: a cancellation, never a return put forward.
    sid = service.open_session("u1012")["session_id"]
    english = service.turn(sid, "u1012", "I want to cancel order 202405250303")
    assert english["intent"]["name"] == "order_status" and english["proposals"] == []
    assert "My Orders" in english["suggestion"]["text"], english["suggestion"]["text"]
    # Told to go ahead with it: not put in here, follow the steps ("tell me what you would like
    # done" asked for what was just said).
    ahead = service.turn(sid, "u1012", "ok do it")
    assert ahead["suggestion"]["situation"] == "not_put_in_here", ahead["suggestion"]
    assert ahead["proposals"] == [] and ahead["workflow"] is None
    assert "not something I can put in" in ahead["suggestion"]["text"]
    # The order is looked up first: a shipped one is told what a shipped order can do, in either
    # language; another customer's order gets the general answer, without its number.
    sid = service.open_session("u1004")["session_id"]
    shipped = service.turn(sid, "u1004", "帮我把订单202405120345取消了")
    assert [c["tool"] for c in shipped["tool_calls"]] == ["get_order", "kb_search"]
    assert "已发货" in shipped["suggestion"]["text"] and "拒收" in shipped["suggestion"]["text"]
    english = service.turn(sid, "u1004", "I want to cancel order 202405240001")
    assert "A shipped or delivered order cannot be cancelled" in english["suggestion"]["text"]
    others = service.turn(sid, "u1004", "帮我取消订单202405201234")
    assert [c["status"] for c in others["tool_calls"]] == ["not_found", "ok"]
    assert "202405201234" not in others["suggestion"]["text"], others["suggestion"]["text"]
    # A new address asked for beside a question: how it is done, not the parcel's status again.
    sid = service.open_session("u1009")["session_id"]
    service.turn(sid, "u1009", "猫粮什么时候到啊 202405220011")
    address = service.turn(sid, "u1009", "能送到公司吗，地址改成高新路100号")
    assert address["intent"]["answered_as"] == "kb_question", address["intent"]
    text = address["suggestion"]["text"]
    assert "修改" in text and "当前状态" not in text and "预计" not in text, text


def test_another_order_named_after_a_return_is_looked_up_not_the_return_repeated(
    service: Service,
) -> None:
    sid = service.open_session("u1003")["session_id"]
    service.turn(sid, "u1003", "我要退货退款，订单202405231122")
    other = service.turn(sid, "u1003", "另外我另一个订单202405100789到哪了")
    assert other["intent"]["name"] in ("logistics", "order_status")
    assert other["suggestion"]["situation"] != "proposed"
    text = other["suggestion"]["text"]
    assert "202405100789" in text and "202405231122" not in text, text


def test_where_another_order_is_asked_after_a_return_is_answered_not_the_return_shown(
    service: Service,
) -> None:
    """ "where is order B?" after "I want to return order A" re-showed the waiting return ("I have
    put in the request for order A"), with no look-up of B."""
    for request, asked in (
        ("I want to return order 202405181001", "thanks. where is order 202405201234?"),
        ("我要退货 订单202405181001", "where is order 202405201234?"),
    ):
        sid = service.open_session("u1001")["session_id"]
        service.turn(sid, "u1001", request)
        out = service.turn(sid, "u1001", asked)
        assert [c["tool"] for c in out["tool_calls"]] == ["get_shipment"], out["suggestion"]
        text = out["suggestion"]["text"]
        assert "202405201234" in text and "202405181001" not in text, text
        service.close(sid, "u1001")


def test_a_payment_problem_is_answered_not_the_ways_to_pay_listed(service: Service) -> None:
    sid = service.open_session("u1002")["session_id"]
    twice = service.turn(sid, "u1002", "I was charged twice for order 202405150456")
    assert twice["intent"]["name"] == "payment_methods"
    assert twice["intent"]["answered_as"] == "kb_question" and twice["proposals"] == []
    assert "refunded" in twice["suggestion"]["text"], twice["suggestion"]["text"]
    assert "can pay with" not in twice["suggestion"]["text"]
    more = service.turn(sid, "u1002", "I want a refund of the extra 89 yuan")
    assert "charged twice" in more["suggestion"]["text"], more["suggestion"]["text"]
    asked = service.turn(sid, "u1002", "which payment methods can I use?")
    assert "WeChat Pay" in asked["suggestion"]["text"], "a question about the ways to pay"


def test_a_refund_asked_for_after_a_late_parcel_is_put_forward(service: Service) -> None:
    sid = service.open_session("u1007")["session_id"]
    late = service.turn(sid, "u1007", "我的电动牙刷怎么还没到 202405220505")
    assert late["intent"]["name"] == "logistics"
    refund = service.turn(sid, "u1007", "那我不要了，退款吧")
    assert refund["intent"]["name"] == "return_exchange"
    assert [p["tool"] for p in refund["proposals"]] == ["create_return"]
    assert "product" not in refund["slots"], refund["slots"]  # 退款吧 names no product 吧
    assert refund["slots"]["reason"] == "我不要了"
    assert "202405220505" in refund["suggestion"]["text"], refund["suggestion"]["text"]
    assert "延误" not in refund["suggestion"]["text"], "not the parcel's status again"


def test_a_parcel_past_its_eta_is_told_late_never_promised_for_that_date_again(
    tmp_path: Path,
) -> None:
    """A back office whose parcel is still "in transit" five days after its data's today:
    the reply says the date has passed, in both languages; one due today is still promised."""
    five_days_ago = business_today() - dt.timedelta(days=5)
    stale = create_backend(BackendState(today=five_days_ago))
    with serve_in_thread(stale) as backend_url, serve_service(tmp_path, backend_url) as service:
        sid = service.open_session("u1001")["session_id"]
        eta = (five_days_ago + dt.timedelta(days=2)).isoformat()  # the sample's eta, moved
        chinese = service.turn(sid, "u1001", "订单202405201234到哪了")["suggestion"]["text"]
        assert eta in chinese and "已超出 3 天" in chinese and "运输中" in chinese, chinese
        assert f"原预计 {eta} 送达" in chinese and f"，预计 {eta}" not in chinese, chinese
        english = service.turn(sid, "u1001", "where is order 202405201234 now?")
        text = english["suggestion"]["text"]
        assert f"expected by {eta}, which has passed" in text and "in transit" in text, text
        assert "it should arrive by" not in text

    on_time = create_backend(BackendState(today=business_today()))
    with (
        serve_in_thread(on_time) as backend_url,
        serve_service(tmp_path / "b", backend_url) as service,
    ):
        sid = service.open_session("u1001")["session_id"]
        text = service.turn(sid, "u1001", "订单202405201234到哪了")["suggestion"]["text"]
        due = (business_today() + dt.timedelta(days=2)).isoformat()
        assert f"预计 {due} 送达" in text and "超出" not in text, text


def test_asked_whether_a_refund_came_the_reply_says_the_orders_status_then_the_article(
    service: Service,
) -> None:
    """The order is looked up: its status is said with the amount refunded and when it arrives
    (a report of the customer's own refund, ``status_reports``; "has my refund … arrived" got
    the lost-parcel article, "退货的钱到了吗" the refund shortfall's sentence)."""
    sid = service.open_session("u1006")["session_id"]
    for asked in ("我的跑步鞋退款到账了吗，订单202405170666", "退货的钱到了吗 202405170666"):
        chinese = service.turn(sid, "u1006", asked)
        text = chinese["suggestion"]["text"]
        assert chinese["proposals"] == [] and chinese["workflow"] is None
        assert text.startswith("订单 202405170666 已退款 459 元，按原支付方式退回"), text
    for asked in ("has the refund for order 202405170666 come through?",
                  "has my refund for 202405170666 arrived"):  # fmt: skip
        english = service.turn(sid, "u1006", asked)
        text = english["suggestion"]["text"]
        assert text.startswith("Order 202405170666 is refunded (459 yuan)"), text
        assert "working days" in text and english["proposals"] == [], text
    # Another customer's order: nothing of it is said, and the answer stays general.
    other = service.turn(sid, "u1006", "订单202405100789的退款什么时候到")
    text = other["suggestion"]["text"]
    assert "202405100789" not in text and "退货中" not in text, text


def test_asked_whether_a_refund_went_through_puts_no_return_forward(service: Service) -> None:
    """ "did the refund for … go through" put a return forward for a delivered order ("All right,
    I have put in the request…"): "did the" opened no question."""
    sid = service.open_session("u1001")["session_id"]
    out = service.turn(sid, "u1001", "did the refund for 202405181001 go through")
    text = out["suggestion"]["text"]
    assert out["proposals"] == [] and out["workflow"] is None, text
    assert text.startswith("Order 202405181001 is delivered, with 0 yuan refunded so far"), text
    # Nor a report of a return sent back, or of a refund not made: each put one forward.
    reports = (
        "i sent 202405181001 back last week", "我已经把202405181001寄回去了",
        "was my return for 202405181001 approved", "202405181001 怎么还没退款",
        "i already requested a return for 202405181001", "202405181001 退货被拒了",
    )  # fmt: skip
    for said in reports:
        out = service.turn(sid, "u1001", said)
        text = out["suggestion"]["text"]
        assert out["proposals"] == [] and out["workflow"] is None, (said, text)
        assert "0 yuan refunded" in text or "已退款 0 元" in text, (said, text)


def test_a_parcel_that_arrived_broken_is_told_what_to_do_not_its_status_again(
    service: Service,
) -> None:
    sid = service.open_session("u1010")["session_id"]
    service.turn(sid, "u1010", "我的订单202405181212到哪了")
    broken = service.turn(sid, "u1010", "钢化膜碎了一张")
    text = broken["suggestion"]["text"]
    assert "拍照" in text and "补发" in text and "运输中" not in text, text
    assert broken["proposals"] == []
    again = service.turn(sid, "u1010", "能补发吗")["suggestion"]["text"]
    assert "拍照" in again and "确认丢失" not in again, again  # the damage sentence, not the lost
    english = service.turn(sid, "u1010", "one of the screen protectors arrived cracked")
    text = english["suggestion"]["text"]
    assert "photos within 48 hours" in text and "in transit" not in text, text


@pytest.mark.parametrize(
    ("user", "broken", "number", "told", "status"),
    [
        ("u1010", "the screen protector arrived cracked", "it is 202405181212",
         "photos within 48 hours", "Order 202405181212 is shipped"),
        # a refund short of what was paid, then the order: a return's workflow was started
        ("u1006", "I got refunded but it's 30 less than I paid", "order 202405170666",
         "help article", "Order 202405170666 is refunded"),
    ],
)  # fmt: skip
def test_the_number_given_after_a_problem_answers_the_problem(
    service: Service, user: str, broken: str, number: str, told: str, status: str
) -> None:
    """ "…arrived cracked", asked for the order, then "it is 202405181212": the parcel's status
    alone ("in transit, expected by …"), nothing of the damage."""
    sid = service.open_session(user)["session_id"]
    service.turn(sid, user, broken)
    out = service.turn(sid, user, number)
    text = out["suggestion"]["text"]
    assert text.startswith(status) and told in text, text
    assert out["proposals"] == [] and out["workflow"] is None


@pytest.mark.parametrize(
    ("where", "broken", "what_now", "told", "status"),
    [
        ("我的订单202405181212到哪了", "钢化膜碎了一张", "那怎么办", "拍照", "运输中"),
        ("where is my parcel 202405181212", "the mug arrived broken", "what should I do?",
         "photos within 48 hours", "in transit"),
    ],
)  # fmt: skip
def test_asked_what_to_do_after_a_problem_is_told_what_to_do_not_the_status(
    service: Service, where: str, broken: str, what_now: str, told: str, status: str
) -> None:
    """ "那怎么办" right after "钢化膜碎了一张" got the parcel's status again."""
    sid = service.open_session("u1010")["session_id"]
    service.turn(sid, "u1010", where)
    service.turn(sid, "u1010", broken)
    out = service.turn(sid, "u1010", what_now)
    text = out["suggestion"]["text"]
    assert told in text and status not in text, text
    assert out["proposals"] == [] and out["workflow"] is None


@pytest.mark.parametrize(
    ("user", "turns", "told"),
    [
        ("u1005", ["我的订单202405191888怎么还没到", "显示签收了可我没收到"], "代收"),
        ("u1005", ["包裹202405191888显示签收了但我没收到"], "代收"),
        ("u1001", ["my package says delivered but I don't have it"], "lockers"),
        ("u1001", ["it says delivered but i never got it"], "lockers"),
    ],
)
def test_a_parcel_said_delivered_that_never_came_is_told_what_to_do(
    service: Service, user: str, turns: list[str], told: str
) -> None:
    """ "显示签收了可我没收到" got the parcel's status again ("已签收。如果您没有收到…"); "my
    package says delivered but I don't have it" was asked for the order number, the answer to
    come the status again. The lost-parcel article says what to do; the order named is looked
    up first."""
    sid = service.open_session(user, resume=False)["session_id"]
    for text in turns:
        out = service.turn(sid, user, text)
    said = out["suggestion"]["text"]
    assert told in said and out["proposals"] == [] and out["workflow"] is None, said
    if "202405191888" in turns[-1]:
        assert said.startswith("订单 202405191888 当前状态：已签收。"), said


def test_a_problem_with_another_customers_order_is_answered_without_its_number(
    service: Service,
) -> None:
    sid = service.open_session("u1001", resume=False)["session_id"]
    out = service.turn(sid, "u1001", "my parcel 202405191888 shows delivered but I never got it")
    said = out["suggestion"]["text"]
    assert "lockers" in said and "202405191888" not in said, said
    assert out["tool_calls"][0]["status"] == "not_found"


def test_the_right_item_asked_for_after_a_wrong_one_is_told_how_not_the_return_again(
    service: Service,
) -> None:
    """ "I got the wrong item in order …" put a return forward; "I want the right one sent" showed
    the same return again ("I want" read as "n't": nothing asked)."""
    sid = service.open_session("u1001", resume=False)["session_id"]
    first = service.turn(sid, "u1001", "I got the wrong item in order 202405181001")
    [proposal] = first["proposals"]
    assert proposal["arguments"]["reason"] == "I got the wrong item"
    out = service.turn(sid, "u1001", "I want the right one sent")
    said = out["suggestion"]["text"]
    assert out["suggestion"]["situation"] != "proposed" and "Exchange" in said, said
    listed = service.client.get(f"/v1/sessions/{sid}/proposals", params={"user_id": "u1001"})
    assert [p["status"] for p in listed.json()["proposals"]] == ["proposed"]


def test_asked_to_leave_a_parcel_with_a_neighbour_the_reply_says_how_not_its_status(
    service: Service,
) -> None:
    sid = service.open_session("u1004")["session_id"]
    service.turn(sid, "u1004", "where is my monitor 202405240001")
    asked = service.turn(sid, "u1004", "I won't be home, can they leave it with the neighbour?")
    text = asked["suggestion"]["text"]
    assert "with a neighbour" in text and "tell them when they call" in text, text
    assert "out for delivery" not in text and asked["proposals"] == []
    chinese = service.turn(sid, "u1004", "能不能放快递柜")["suggestion"]["text"]
    assert "快递柜" in chinese and "快递员" in chinese and "派送中" not in chinese, chinese
    # who would leave it named ("could the driver", "can the courier"): the same question
    for text in ("could the driver leave it with my neighbour?",
                 "can the courier leave it at the door?"):  # fmt: skip
        said = service.turn(sid, "u1004", text)["suggestion"]["text"]
        assert "tell them when they call" in said and "out for delivery" not in said, said


def test_an_order_number_given_for_a_policy_question_answers_that_question_for_it(
    service: Service,
) -> None:
    """A number given after "我地址写错了，能改吗" ("订单号…") found how to track a parcel; now it
    answers the address question, saying the order's status first. A policy question naming an
    order gets its own article, not one picked by the order's status."""
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "我地址写错了，能改吗")
    given = service.turn(sid, "u1001", "订单号202405201234")
    text = given["suggestion"]["text"]
    assert given["intent"]["name"] == "kb_question" and given["proposals"] == []
    assert text.startswith("订单 202405201234 当前状态：已发货。"), text
    assert "《修改收货地址》" in text and "无法在系统中直接修改" in text, text
    fees = service.turn(sid, "u1001", "订单202405181001运费怎么算")["suggestion"]["text"]
    assert fees.startswith("订单 202405181001 当前状态：") and "《运费说明》" in fees, fees
    # Another customer's order is neither named nor described.
    other = service.turn(sid, "u1001", "订单202405100789的地址写错了能改吗")["suggestion"]["text"]
    assert "202405100789" not in other and "退货中" not in other, other


def test_a_returns_progress_asked_after_another_parcel_is_answered_for_the_return(
    service: Service,
) -> None:
    """Asked "另外订单…的退货到哪一步了" after another order's parcel, the reply kept the parcel's
    topic and said the returned order's parcel had been delivered; now the return's status and
    the refund article."""
    sid = service.open_session("u1003")["session_id"]
    service.turn(sid, "u1003", "我的订单202405231122到哪了")
    asked = service.turn(sid, "u1003", "另外订单202405100789的退货到哪一步了")
    text = asked["suggestion"]["text"]
    assert asked["intent"]["name"] == "return_exchange" and asked["proposals"] == []
    assert text.startswith("订单 202405100789 当前状态：退货中。"), text
    assert "《退款多久能到账与退货进度》" in text and "已签收" not in text, text


def test_the_order_given_for_a_returns_progress_puts_no_second_return_forward(
    service: Service,
) -> None:
    """ "我的退货怎么样了", then "订单号…": the number put a new return forward for the order
    already being returned ("好的，我已为订单…提交申请"). Now it answers the question: the
    order's status, then where a return is and when its refund comes (a question, by the
    article; "where is my refund?", which reports a refund not come, by the status's line)."""
    for first, given, status, source in (
        ("我的退货怎么样了", "订单号202405100789", "订单 202405100789 当前状态：退货中。",
         "《退款多久能到账与退货进度》"),
        ("where is my refund?", "it's 202405100789", "Order 202405100789 is being returned",
         "then takes 1–7 working days"),
    ):  # fmt: skip
        sid = service.open_session("u1003")["session_id"]
        service.turn(sid, "u1003", first)
        answered = service.turn(sid, "u1003", given)
        text = answered["suggestion"]["text"]
        assert answered["proposals"] == [], answered["proposals"]
        assert text.startswith(status) and source in text, text
        assert "提交申请" not in text and "put in the request" not in text, text
        service.close(sid, "u1003")
    # Another customer's order, given the same way, is a number to check, not described.
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "我的退货怎么样了")
    other = service.turn(sid, "u1001", "订单号202405100789")
    assert other["proposals"] == []
    said = other["suggestion"]["text"]
    assert said == "抱歉，没有查到订单 202405100789，请您核对一下订单号好吗？", said


def test_a_refund_short_of_what_was_paid_is_explained_not_returned(service: Service) -> None:
    """ "退款少了20块 订单…" put a return of the whole order forward; now the refund article says
    what is not refunded in cash and asks for the order to check the refund's details."""
    sid = service.open_session("u1001")["session_id"]
    said = service.turn(sid, "u1001", "退款少了20块 订单202405181001")
    text = said["suggestion"]["text"]
    assert said["proposals"] == [] and said["workflow"] is None
    assert "优惠券和积分抵扣的部分不退现金" in text and "《退款多久能到账与退货进度》" in text, text


def test_a_parcel_asked_elsewhere_or_sooner_is_told_how_not_its_status_again(
    service: Service,
) -> None:
    """ "can you deliver it to my office instead?", "帮我寄到公司去", "can you send it to me
    faster?" after the parcel's status repeated the status; no tool redirects or rushes a parcel,
    so the knowledge base says what can be done."""
    for first, asked, source in (
        ("where is my order 202405201234?", "can you deliver it to my office instead?",
         "Changing the delivery address"),
        ("订单202405201234到哪了", "帮我寄到公司去", "《修改收货地址》"),
        ("where is my order 202405201234?", "can you send it to me faster?", "Rushing an order"),
        # chat spelling: "can u make it" before what is asked
        ("wheres my stuff 202405201234", "ok can u make it faster", "Rushing an order"),
        ("我的快递咋还不到 202405201234", "能快点不", "《加急与催件》"),
    ):  # fmt: skip
        sid = service.open_session("u1001")["session_id"]
        status = service.turn(sid, "u1001", first)["suggestion"]["text"]
        said = service.turn(sid, "u1001", asked)
        text = said["suggestion"]["text"]
        assert said["proposals"] == [] and text != status, text
        assert source in text, text
        service.close(sid, "u1001")


def test_a_forgotten_order_number_is_told_where_to_find_it_not_asked_for_again(
    service: Service,
) -> None:
    """ "我的订单到哪了", then "我不记得订单号了", asked for the 12-digit number again (the same
    sentence twice); the reply now says where the number is."""
    for first, forgot, said in (
        ("我的订单到哪了", "我不记得订单号了", "在“我的订单”里打开订单就能看到"),
        ("where is my parcel?", "I don't remember my order number", "each order's page in"),
    ):
        sid = service.open_session("u1004")["session_id"]
        asked = service.turn(sid, "u1004", first)
        assert asked["missing_slots"] == ["order_id"], asked["suggestion"]
        out = service.turn(sid, "u1004", forgot)
        assert out["missing_slots"] == [] and said in out["suggestion"]["text"], out["suggestion"]
        assert out["suggestion"]["text"] != asked["suggestion"]["text"]
        service.close(sid, "u1004")


def test_a_go_ahead_after_asking_whether_a_return_may_be_made_puts_it_forward(
    service: Service,
) -> None:
    """ "can I return order …?" got the policy, then "great, do it" got "Sorry, I cannot help with
    that one". The go-ahead asks for the return: it is put forward for the agent. A bare "好的"
    only acknowledges the answer: nothing is."""
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "can I return order 202405181001?")
    out = service.turn(sid, "u1001", "great, do it")
    assert [p["tool"] for p in out["proposals"]] == ["create_return"], out["suggestion"]
    assert out["suggestion"]["situation"] == "proposed"
    assert "202405181001" in out["suggestion"]["text"]
    service.close(sid, "u1001")
    # "yes please" got "All right. Is there anything else I can help with?"
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "can I return order 202405181001?")
    yes = service.turn(sid, "u1001", "yes please")
    assert [p["tool"] for p in yes["proposals"]] == ["create_return"], yes["suggestion"]
    service.close(sid, "u1001")
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "订单202405181001能退吗")
    ok = service.turn(sid, "u1001", "好的")
    assert ok["proposals"] == [] and ok["suggestion"]["situation"] == "act_confirmation"


def test_no_thanks_closes_the_conversation(service: Service) -> None:
    """ "不用了，谢谢" after an answer read out of scope ("我暂时无法帮您处理")."""
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "订单202405201234到哪了")
    out = service.turn(sid, "u1001", "不用了，谢谢")
    assert out["dialogue_act"] == "closing" and out["suggestion"]["situation"] == "act_closing"
    assert "无法" not in out["suggestion"]["text"]


def test_a_parcel_said_lost_puts_no_return_forward(service: Service) -> None:
    """ "my keyboard order … says lost" read as a return at 0.45 put a return forward "(reason:
    customer requested a return)" that nobody asked for; an unsure reading now only answers."""
    sid = service.open_session("u1004")["session_id"]
    said = service.turn(sid, "u1004", "my keyboard order 202405120345 says lost")
    text = said["suggestion"]["text"]
    assert said["proposals"] == [] and said["workflow"] is None, said["proposals"]
    assert "request" not in text and "lost" in text.lower(), text


def test_a_parcel_on_time_gets_no_apology_and_an_upset_turn_gets_one(service: Service) -> None:
    """ "已在途 0 天…给您带来不便非常抱歉": the reply for a parcel on its way apologised for a wait
    there had not been; an upset customer's turn is still acknowledged first."""
    sid = service.open_session("u1001")["session_id"]
    calm = service.turn(sid, "u1001", "订单202405201234到哪了")["suggestion"]["text"]
    assert calm.startswith("订单 202405201234 的包裹目前") and "抱歉" not in calm, calm
    upset = service.turn(sid, "u1001", "怎么这么慢，气死我了")["suggestion"]["text"]
    assert "抱歉" in upset.split("订单")[0] and "预计" in upset, upset
    english = service.turn(sid, "u1001", "where is my parcel 202405201234")["suggestion"]["text"]
    assert "in transit" in english and "Sorry" not in english, english


def test_an_exchange_asked_for_is_told_how_and_no_refund_is_put_forward(service: Service) -> None:
    """ "帮我换大一号" started the return workflow (a return, then a refund) for a customer who
    wanted another size; no tool exchanges an item, so the reply says how to ask for one."""
    sid = service.open_session("u1001")["session_id"]
    asked = service.turn(sid, "u1001", "T恤202405181001尺码不合适，帮我换大一号")
    text = asked["suggestion"]["text"]
    assert asked["proposals"] == [] and asked["workflow"] is None, asked["proposals"]
    assert text.startswith("订单 202405181001 当前状态：已签收。") and "《换货政策》" in text, text
    refund = service.turn(sid, "u1001", "算了不要换货了，直接退款")
    assert [p["tool"] for p in refund["proposals"]] == ["create_return"], refund["proposals"]


def test_asked_to_rush_an_order_the_reply_says_what_can_be_done_not_its_status_again(
    service: Service,
) -> None:
    """Asked "能加急吗", "帮我催一下快递" or "can you check with the courier?", the reply repeated
    the order's status."""
    sid = service.open_session("u1004")["session_id"]
    service.turn(sid, "u1004", "我的显示器202405240001今天能送到吗")
    chased = service.turn(sid, "u1004", "帮我催一下快递")
    text = chased["suggestion"]["text"]
    assert "《加急与催件》" in text and "催件" in text and "派送中（" not in text, text
    assert chased["proposals"] == []
    english = service.turn(sid, "u1004", "can you check with the courier?")["suggestion"]["text"]
    assert "Rushing an order" in english and "out for delivery" not in english, english
    sid = service.open_session("u1008")["session_id"]
    service.turn(sid, "u1008", "咖啡豆202405241357什么时候发货")
    rushed = service.turn(sid, "u1008", "能加急吗")["suggestion"]["text"]
    assert "仓库不能加急" in rushed, rushed


def test_a_parcel_on_its_way_is_told_with_its_waybill_number(service: Service) -> None:
    """ "订单…的快递单号是多少" got the status without the number the customer tracks it by; a
    waybill holding eleven phone-like digits is shown whole."""
    sid = service.open_session("u1006", resume=False)["session_id"]
    out = service.turn(sid, "u1006", "订单202405230909的快递单号是多少")["suggestion"]["text"]
    assert "运单号 772019961203378" in out and "运输中" in out, out
    sid = service.open_session("u1001", resume=False)["session_id"]
    english = service.turn(sid, "u1001", "what's the tracking number for order 202405201234?")
    assert "tracking number SF1402385567921" in english["suggestion"]["text"], english


def test_asked_to_come_sooner_the_reply_says_what_can_be_done_not_the_status_again(
    service: Service,
) -> None:
    """ "能快一点吗" right after a parcel's status repeated the status word for word, and "订单…
    能早点到吗" of an order not yet shipped quoted the service hours. A parcel on its way can be
    chased with the courier; an order still in the warehouse ships in its turn."""
    sid = service.open_session("u1001")["session_id"]
    status = service.turn(sid, "u1001", "我的订单202405201234到哪了")["suggestion"]["text"]
    sooner = service.turn(sid, "u1001", "能快一点吗")["suggestion"]["text"]
    assert sooner != status and "催件" in sooner and "仓库不能加急" not in sooner, sooner
    sid = service.open_session("u1003")["session_id"]
    early = service.turn(sid, "u1003", "订单202405231122能早点到吗")["suggestion"]["text"]
    assert "仓库不能加急" in early and "客服电话" not in early, early


def test_a_record_asked_for_while_a_return_waits_is_said_even_when_no_article_is(
    service: Service,
) -> None:
    """While a return waited, "when will I get the refund?" quoted the cancellation article, and
    "帮我查一下 订单…" (read as a knowledge question) only said no article answered it and a
    colleague would be asked: the order, looked up and found, went unsaid."""
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "I want to return order 202405181001, wrong size")
    refund = service.turn(sid, "u1001", "when will I get the refund?")["suggestion"]["text"]
    assert "How long a refund takes" in refund and "cannot be cancelled" not in refund, refund
    checked = service.turn(sid, "u1001", "帮我查一下202405181001")["suggestion"]["text"]
    assert "202405181001" in checked and "已签收" in checked, checked


def test_each_order_a_turn_names_is_answered_not_only_the_first(service: Service) -> None:
    """ "我的订单A和B都到哪了" answered A only. Each named order is looked up as the first (at
    most ``tools.max_records_per_turn``) and answered after it, greeted once; another customer's
    order is not found, and nothing of it is said."""
    sid = service.open_session("u1001")["session_id"]
    out = service.turn(sid, "u1001", "我的订单202405201234和202405181001都到哪了")
    text = out["suggestion"]["text"]
    assert "202405201234" in text and "运输中" in text, text
    assert "202405181001" in text and "已签收" in text, text
    assert text.count("您好") <= 1, text
    calls = [(c["tool"], c["status"], c["result"]["order_id"]) for c in out["tool_calls"]]
    # a delivered parcel's order is looked up after it: what came after is said (calls_detail)
    assert calls == [
        ("get_shipment", "ok", "202405201234"),
        ("get_shipment", "ok", "202405181001"),
        ("get_order", "ok", "202405181001"),
    ], calls

    english = service.turn(sid, "u1001", "where are orders 202405250077 and 202405100789?")
    text = english["suggestion"]["text"]
    assert "202405250077" in text and "waiting for payment" in text, text
    # u1003's order: the same "not found" as a number that does not exist
    assert "could not find" in text.lower() and "returning" not in text.lower(), text


def test_a_request_is_made_of_the_record_named_with_it_and_the_other_is_answered(
    service: Service,
) -> None:
    """ "订单A到哪了，另外我想退货订单B" proposed a return of A — the parcel asked after — and told
    the customer it was put in for A, with B "to be handled separately". The return is of B, the
    order named with it, and A's status is answered after it."""
    sid = service.open_session("u1001", resume=False)["session_id"]
    out = service.turn(sid, "u1001", "订单202405201234到哪了，另外我想退货订单202405181001")
    [proposal] = out["proposals"]
    assert proposal["tool"] == "create_return", proposal
    assert proposal["arguments"]["order_id"] == "202405181001", proposal
    text = out["suggestion"]["text"]
    assert "订单 202405181001 提交申请" in text and "202405201234 提交" not in text, text
    assert "202405201234" in text and "运输中" in text and "单独办理" not in text, text
    calls = [(c["tool"], c["result"].get("order_id")) for c in out["tool_calls"] if c["result"]]
    assert ("get_shipment", "202405201234") in calls, calls

    sid = service.open_session("u1001", resume=False)["session_id"]
    line = "where is order 202405201234? also I want to return order 202405181001"
    english = service.turn(sid, "u1001", line)
    assert [p["arguments"]["order_id"] for p in english["proposals"]] == ["202405181001"]
    text = english["suggestion"]["text"]
    assert "order 202405181001" in text and "in transit" in text, text

    # Read as the parcel question (0.79), "订单B退货，还有A到哪了" answered A and dropped the
    # return: the request one clause makes is put forward, the question answered after it.
    sid = service.open_session("u1001", resume=False)["session_id"]
    both = service.turn(sid, "u1001", "订单202405181001退货，还有202405201234到哪了")
    assert both["intent"]["name"] == "return_exchange", both["intent"]
    assert both["intent"]["decided_by"] == "clauses", both["intent"]
    assert [p["arguments"]["order_id"] for p in both["proposals"]] == ["202405181001"]
    text = both["suggestion"]["text"]
    assert "202405181001 提交申请" in text and "202405201234 的包裹目前运输中" in text, text
    # "订单A和B帮我退货" read as their status said both and put nothing forward: the request
    # after the records is put forward for A, and B is told it needs its own
    sid = service.open_session("u1001", resume=False)["session_id"]
    after = service.turn(sid, "u1001", "订单202405181001和202405201234帮我退货")
    assert after["intent"]["name"] == "return_exchange", after["intent"]
    assert [p["arguments"]["order_id"] for p in after["proposals"]] == ["202405181001"]
    assert "202405201234 需要单独办理" in after["suggestion"]["text"], after["suggestion"]
    # a question in each clause puts nothing forward
    sid = service.open_session("u1001", resume=False)["session_id"]
    asked = service.turn(sid, "u1001", "订单202405181001能退货吗，还有202405201234到哪了")
    assert asked["proposals"] == [] and asked["intent"]["decided_by"] != "clauses", asked["intent"]
    # each clause's own question: where A is, and whether B can be returned (not where B is)
    sid = service.open_session("u1001", resume=False)["session_id"]
    two = service.turn(sid, "u1001", "订单202405201234到哪了？202405181001能退吗")
    text = two["suggestion"]["text"]
    assert "202405201234 的包裹目前运输中" in text and "七天无理由退货" in text, text
    assert "如果您没有收到" not in text, text
    # the article quoted for B has its card, as the turn's own would
    assert [card["article_id"] for card in two["knowledge"]] == ["return-policy"], two["knowledge"]
    # the refund asked of B is searched with B's clause, not A's 取消
    sid = service.open_session("u1003", resume=False)["session_id"]
    line = "订单202405231122取消，另外202405100789的退款什么时候到"
    text = service.turn(sid, "u1003", line)["suggestion"]["text"]
    head, _, rest = text.partition("订单 202405231122")
    assert "202405100789 当前状态：退货中" in head and "验收" in head and "取消" not in head, text
    assert "申请取消订单" in rest, text


def test_a_refund_asked_of_a_shipped_order_is_not_answered_by_the_address_article(
    service: Service,
) -> None:
    """ "订单…能退款吗" of a shipped order quoted how to redirect a parcel: the address article
    holds 订单 (as most articles do) and 已发货, the order's state, and 退款 nowhere."""
    sid = service.open_session("u1001")["session_id"]
    out = service.turn(sid, "u1001", "订单202405201234能退款吗")
    text = out["suggestion"]["text"]
    assert "拒收" in text and "《取消订单》" in text and "改派" not in text, text
    assert out["proposals"] == []


def test_a_return_asked_of_an_order_it_cannot_apply_to_is_told_so(service: Service) -> None:
    """ "订单…能退吗" of a cancelled order said "当前状态：已取消。已签收的商品一般都能退…";
    "can I return order …?" quoted how a shipped order is refused at the door. The articles'
    ``states`` say what they say for a cancelled or unpaid order."""
    sid = service.open_session("u1005")["session_id"]
    zh = service.turn(sid, "u1005", "订单202405211314能退吗")["suggestion"]["text"]
    assert "已取消" in zh and "不需要退货" in zh and "一般都能退" not in zh, zh
    en = service.turn(sid, "u1005", "can I return order 202405211314?")["suggestion"]["text"]
    assert "nothing to cancel or return" in en and "refuse the delivery" not in en, en
    sid = service.open_session("u1001")["session_id"]
    unpaid = service.turn(sid, "u1001", "订单202405250077能退吗")["suggestion"]["text"]
    assert "还没有付款，不需要退货" in unpaid, unpaid
    delivered = service.turn(sid, "u1001", "我的订单202405181001可以退货吗")["suggestion"]["text"]
    assert "七天无理由退货" in delivered and "不需要退货" not in delivered, delivered
    sid = service.open_session("u1001", resume=False)["session_id"]
    line = "can I get a refund for order 202405201234?"
    transit = service.turn(sid, "u1001", line)["suggestion"]["text"]
    assert "no refund has started" in transit and "refuse it at the door" in transit, transit
    sid = service.open_session("u1003", resume=False)["session_id"]
    going = service.turn(sid, "u1003", "hi, where is my return for order 202405100789?")
    text = going["suggestion"]["text"]
    assert "already being returned" in text and "Start a return" not in text, text


def test_a_refund_asked_of_a_lost_parcel_is_answered_for_the_parcel(service: Service) -> None:
    """ "能退款吗" after "…的包裹已丢失" quoted the cancellation article's "已发货…不能直接取消",
    and "我的包裹丢了，能退款吗" the damage sentence: the order said "shipped", not its parcel. A
    shipped order's parcel is looked up after it (the intent's ``kb_record_detail``) and its
    status is the one searched: the lost parcel's remedy, a free replacement or a full refund."""
    sid = service.open_session("u1004")["session_id"]
    service.turn(sid, "u1004", "我的包裹一直没到，订单202405120345")
    out = service.turn(sid, "u1004", "能退款吗")
    text = out["suggestion"]["text"]
    assert "确认包裹丢了" in text and "全额退款" in text and "不能直接取消" not in text, text
    assert [c["tool"] for c in out["tool_calls"]] == ["get_order", "get_shipment", "kb_search"]
    assert out["proposals"] == []
    # an order not shipped has no parcel to ask after
    sid = service.open_session("u1005")["session_id"]
    cancelled = service.turn(sid, "u1005", "订单202405211314能退款吗")
    assert "get_shipment" not in [c["tool"] for c in cancelled["tool_calls"]]


def test_a_wrong_address_on_a_shipped_order_is_told_what_can_be_done(service: Service) -> None:
    """ "我的订单…的地址写错了" and "能帮我改到公司吗" were answered with the parcel's status twice;
    "I put the wrong address on order …" with who pays return shipping ("a wrong … item")."""
    sid = service.open_session("u1001")["session_id"]
    wrong = service.turn(sid, "u1001", "我的订单202405201234的地址写错了")["suggestion"]["text"]
    assert "改派" in wrong and "《修改收货地址》" in wrong, wrong
    office = service.turn(sid, "u1001", "能帮我改到公司吗")["suggestion"]["text"]
    assert "改派" in office and "预计" not in office, office
    english = service.turn(sid, "u1001", "I put the wrong address on order 202405201234")
    text = english["suggestion"]["text"]
    assert "cannot change a wrong delivery address" in text and "return shipping" not in text, text
    assert english["proposals"] == []


@pytest.mark.parametrize(
    ("user", "text", "says", "not_said"),
    [("u1010", "帮我改一下收货地址 202405181212", "改派", "发货前可以修改"),
     ("u1010", "can I change the delivery address for 202405181212",
      "cannot change a wrong delivery", "before the order ships"),
     # as many words of the question in either sentence: the order's state decides
     ("u1001", "202405201234 能改地址吗", "改派", "发货前可以修改")],
)  # fmt: skip
def test_an_address_change_for_a_shipped_order_quotes_what_can_be_done_once_shipped(
    service: Service, user: str, text: str, says: str, not_said: str
) -> None:
    """Each quoted the sentence for an order not shipped yet after "…已发货" / "…is shipped"."""
    sid = service.open_session(user)["session_id"]
    said = service.turn(sid, user, text)["suggestion"]["text"]
    assert says in said and not_said not in said, said


@pytest.mark.parametrize(
    ("complaint", "question", "says"),
    [("我要投诉 你们客服态度太差了", "多久能处理", "3 个工作日内"),
     ("我要投诉 你们客服态度太差了", "多久给我回复", "24 小时内"),
     ("I want to complain, your courier threw my parcel", "how long will it take",
      "within 24 hours")],
)  # fmt: skip
def test_how_long_right_after_a_complaint_is_the_complaints_time(
    service: Service, complaint: str, question: str, says: str
) -> None:
    """ "多久能处理" after a complaint quoted the refund times, "how long will it take" the
    delivery times."""
    sid = service.open_session("u1003")["session_id"]
    service.turn(sid, "u1003", complaint)
    said = service.turn(sid, "u1003", question)["suggestion"]["text"]
    assert says in said and "退款" not in said and "refund" not in said.lower(), said


@pytest.mark.parametrize(
    ("user", "before", "says"),
    [("u1006", "hi, I was refunded for order 202405170666 but the money isn't in my account yet",
      "working days"),
     ("u1003", "I want to exchange 202405231122, wrong size", "ships within 48 hours after"),
     ("u1001", "I want to change my password", "SMS code")],
)  # fmt: skip
def test_how_long_after_a_refund_an_exchange_or_a_password_is_about_it(
    service: Service, user: str, before: str, says: str
) -> None:
    """ "how long does it take?" right after each got the delivery times."""
    sid = service.open_session(user)["session_id"]
    service.turn(sid, user, before)
    said = service.turn(sid, user, "how long does it take?")["suggestion"]["text"]
    assert says in said and "Delivery times" not in said, said


@pytest.mark.parametrize(
    ("user", "text", "says", "not_said"),
    [("u1003", "订单202405100789什么状态", "正在退货中", "已签收"),
     ("u1003", "what's the status of order 202405100789?", "is being returned", "delivered"),
     ("u1006", "what's the status of order 202405170666?", "is refunded (459", "to the shop"),
     # delivered and nothing after: the parcel's answer, as before
     ("u1001", "what's the status of order 202405181001?", "has been delivered", "refund")],
)  # fmt: skip
def test_a_delivered_orders_status_says_the_return_or_refund_that_came_after(
    service: Service, user: str, text: str, says: str, not_said: str
) -> None:
    """An order being returned got its parcel's "已签收。如果您没有收到包裹…"; a refunded one
    "returned to the shop. If you like, I will check the refund"."""
    sid = service.open_session(user)["session_id"]
    out = service.turn(sid, user, text)
    said = out["suggestion"]["text"]
    assert says in said and not_said not in said, said
    assert [c["tool"] for c in out["tool_calls"]][:2] == ["get_shipment", "get_order"]


def test_how_long_a_lost_parcels_replacement_takes_is_said(service: Service) -> None:
    """ "补发要多久" after a lost parcel got the lost-parcel article without an answer; it says
    the replacement leaves within 48 hours."""
    sid = service.open_session("u1004")["session_id"]
    lost = service.turn(sid, "u1004", "我的订单202405120345丢了怎么办")["suggestion"]["text"]
    assert "丢失" in lost, lost
    out = service.turn(sid, "u1004", "补发要多久")
    said = out["suggestion"]["text"]
    assert "48 小时内发出" in said, said
    assert out["proposals"] == []


def test_whether_the_returned_item_came_back_is_answered_with_the_orders_status(
    service: Service,
) -> None:
    """ "did you get the item back?" after "I returned order …, any news?" got the
    price-protection article; it is answered with where the order stands."""
    sid = service.open_session("u1003")["session_id"]
    service.turn(sid, "u1003", "hi, I returned order 202405100789, any news?")
    out = service.turn(sid, "u1003", "did you get the item back?")
    said = out["suggestion"]["text"]
    assert "being returned" in said and "Price protection" not in said, said
    assert out["proposals"] == []


@pytest.mark.parametrize(
    ("first", "then", "first_says", "then_says"),
    [("my coupon didn't apply to order 202405231122", "can you refund the difference?",
      "Coupons", "Price protection"),
     ("订单202405231122买完就降价了", "那帮我退差价", "价保", "价保")],
)  # fmt: skip
def test_a_difference_asked_back_is_no_return_of_the_order(
    service: Service, first: str, then: str, first_says: str, then_says: str
) -> None:
    """ "my coupon didn't apply…" got the international-shipping article ("No customs duties
    apply"), then "can you refund the difference?" put the whole order's return forward; "那帮我
    退差价" quoted the address change's "补运费差价"."""
    sid = service.open_session("u1003")["session_id"]
    said = service.turn(sid, "u1003", first)["suggestion"]["text"]
    assert first_says in said and "customs" not in said, said
    out = service.turn(sid, "u1003", then)
    assert then_says in out["suggestion"]["text"], out["suggestion"]["text"]
    assert out["proposals"] == [] and out["workflow"] is None


def test_an_exchange_asked_for_a_delivered_order_is_told_how_not_the_return_rules(
    service: Service,
) -> None:
    """ "那帮我换一个" after a faulty delivered item quoted the seven-day return rules: the
    order's status (已签收) pulled the query to the return article."""
    sid = service.open_session("u1001")["session_id"]
    service.turn(sid, "u1001", "我买的耳机202405181001用了两天就坏了，保修吗")
    out = service.turn(sid, "u1001", "那帮我换一个")
    text = out["suggestion"]["text"]
    assert "申请换货" in text and "七天无理由" not in text, text
    assert out["proposals"] == []
