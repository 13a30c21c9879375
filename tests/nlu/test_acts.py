"""The dialogue act of a customer turn (SPEC §8 X4): the cases the labelling guide settles."""

from __future__ import annotations

import pytest

from hermes_desk.nlu import (
    asks_for,
    asks_for_something,
    asks_if_allowed,
    asks_if_done,
    asks_when,
    asks_why,
    reports,
    request_act,
    tells_what_happened,
)

QUESTIONS = [
    # policy and process, Chinese
    "退货运费谁承担？",
    "投诉一般多久处理？",
    "怎么重置密码？",
    "拆封了还能退吗",
    "退款退到哪里",
    # asking whether, even about their own item ("能…吗" without a helper verb)
    "买大了能换小一码吗",
    # asking to be told, in a request's words
    "我想问一下退货运费谁出",
    "帮我查一下退款到哪了",
    # an order number does not make a request
    "订单202405181001的退款多久到账？",
    # the state of their own record
    "我的投诉有结果了吗",
    "忘记密码了怎么办",
    # English
    "how long does a refund take?",
    "who pays return shipping",
    "do I need the original box",
    "can I exchange it for a different colour?",
    "I'd like to know who pays for returns",
    "can you tell me how long refunds take",
    "can you check whether my refund went through",
    "has my refund gone through?",
    # why it was not done: a reproach, not a request ("不给我" asks for nothing)
    "为什么不给我登记",
    "你们为什么不帮我处理",
    # 给我 after a verb is where it goes, not a request ("钱什么时候退给我" put a return forward)
    "钱什么时候退给我 202405181001",
    "什么时候补发给我",
    # how a record stands, named as a thing ("refund status …" put a return forward)
    "refund status 202405181001",
    "退款进度 202405100789",
    # a record's number first opens the sentence the question starts after (a return was put
    # forward for each)
    "202405181001 is this eligible for a return",
    "202405181001 can it still be returned",
    "202405181001 refund timeline",
    "202411030861 is the order shipped?",
    # checking on it, following it up: asked to be told (a return was put forward)
    "just checking on the refund for 202405181001",
    "following up on 202405181001",
    # mixed
    "refund 要多久到账",
    # "did the …" and "was my …" open a question ("did the refund … go through" put a return
    # forward)
    "did the refund for 202405181001 go through",
    "was my return for 202405181001 approved",
    "ok. was it refunded",
]

REQUESTS = [
    # desire and imperative
    "我要退货，订单202405181001",
    "帮我把这个退了",
    "I want to return order 202405181001",
    "please refund order 202405181001",
    "I'd like to exchange it",
    # polite requests phrased as questions: a helper verb
    "能帮我退一下吗",
    "可以给我换个新的吗",
    "能给点补偿吗",
    "能不能帮我退一下",
    "可不可以给我换一个",
    "can you refund order 202405181001?",
    "could you open a complaint?",
    # a request next to a question: the request wins
    "我要退货，退款多久到账？",
    "I want to return order 202405181001, how long will the refund take?",
    # a problem of their own, stated; a bare slot value
    "东西坏了",
    "忘记密码了登不上去",
    "the refund amount is wrong",
    "202405181001",
    # "can't" opens no question ("can" then "'t" read as "can …?")
    "I forgot my password and can't log in",
    "can't log in, says wrong password",
    # complaints that look like questions
    "怎么这么慢！我要投诉",
    "你们这什么服务啊",
    "202405181001 can you refund it",
    "202411030861 is the order",  # what the number is: a value given
    # a demand stated ("把钱退给我"), not asked when
    "把钱退给我 202405181001",
    # mixed
    "帮我 refund 一下",
    # "was" after "and" goes on with a statement
    "the courier keeps calling me at 7am and was super rude when I asked him to come later",
    "please do the exchange",
]


@pytest.mark.parametrize("text", QUESTIONS)
def test_questions_about_a_policy_a_process_or_a_record(text: str) -> None:
    assert request_act(text) == "question"


@pytest.mark.parametrize("text", REQUESTS)
def test_requests_for_an_action(text: str) -> None:
    assert request_act(text) == "request"


def test_the_act_depends_on_the_words_not_on_spacing_or_case() -> None:
    assert request_act("  HOW LONG does a refund take  ") == "question"
    assert request_act("我要\n退货") == request_act("我要 退货") == "request"
    assert request_act("") == "request"  # nothing asked: a bare statement


_BROKEN = ("碎了", "坏了", "破损", "补发", "broken", "damaged", "send a new one")


@pytest.mark.parametrize(
    ("text", "reported"),
    [
        ("钢化膜碎了一张", True),
        ("快递被压坏了", True),  # a passive reports it too
        ("东西已经碎了怎么办", True),  # so does a question about it
        ("能补发吗", True),
        ("the mug was broken when it came", True),
        ("can you send a new one?", True),
        ("外包装没有破损", False),  # it did not happen
        ("东西没坏，就是慢", False),
        ("it wasn't damaged, just late", False),
        ("where is my parcel", False),
        ("brokenness", False),  # Latin phrases as whole words
    ],
)
def test_a_problem_is_reported_unless_negated_right_before_it(text: str, reported: bool) -> None:
    assert reports(text, _BROKEN) is reported
    assert reports(text, ()) is False


_EXCHANGE = ("换货", "换个", "replacement", "exchange")


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("我要换货，不要退款", True),
        ("帮我换个大一号", True),
        ("I need a replacement, this one doesn't charge", True),
        ("不要换货，直接退款", False),  # negated right before
        ("我不想换货了", False),  # not wanted
        ("我要退换货", False),  # 退换货: a return or an exchange, not an exchange asked for
        ("I don't want a replacement, I want my money back", False),
        ("I refuse the replacement, just refund me", False),
    ],
)
def test_an_exchange_is_asked_for_unless_not_wanted(text: str, asked: bool) -> None:
    assert asks_for(text, _EXCHANGE) is asked


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("can I exchange it for blue?", True),
        # "just" between: the question asks for it all the same (it was shown the waiting return)
        ("actually can I just exchange it for blue?", True),
        ("can we just exchange them?", True),
        ("did you exchange it?", False),  # whether it happened, not whether it may be done
    ],
)
def test_a_question_whether_it_may_be_done_asks_for_it(text: str, asked: bool) -> None:
    assert asks_for(text, _EXCHANGE, act="question") is asked


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("能让快递员送之前给我打电话吗", True),  # whether someone named can do it
        ("can the courier call me?", True),
        ("did the courier call me?", False),  # whether it happened
        ("快递员没给我打电话", False),  # it did not
    ],
)
def test_whether_someone_named_can_do_it_asks_for_it(text: str, asked: bool) -> None:
    assert asks_for(text, ("给我打电话", "call me"), act="question") is asked


@pytest.mark.parametrize(
    ("text", "allowed"),
    [
        ("我买的鞋子小了一码 能换吗", True),
        ("我这个才用两周 能不能直接退", True),
        ("可以寄回吗", True),
        ("can I return them?", True),
        ("so i can exchange it?", True),
        ("is it possible to send it back", True),
        ("退货什么时候能好", False),  # a time, not a permission
        ("退款什么时候到账啊 申请好几天了", False),
        ("我的退货怎么样了", False),
        ("退货申请被驳回了 为什么", False),
        ("where's my refund", False),
        ("can you tell me where my refund is", False),  # asking to be told
        ("I can't find my refund", False),
    ],
)
def test_a_question_whether_it_may_be_done_is_told_from_one_about_a_state(
    text: str, allowed: bool
) -> None:
    """ "能换吗" then an order number is a return asked for; "我的退货怎么样了" then the number
    asks for the return's state (decide: no return put forward)."""
    assert asks_if_allowed(text) is allowed


@pytest.mark.parametrize(
    ("text", "when"),
    [("那退款什么时候到", True), ("多久能批下来", True), ("退款几个工作日到账", True),
     ("how long will the refund take?", True), ("when will it be approved?", True),
     ("退货申请通过了吗", False), ("运费谁出", False), ("has it been approved yet?", False),
     ("whenever", False)],
)  # fmt: skip
def test_a_question_of_when_is_told_apart(text: str, when: bool) -> None:
    assert asks_when(text) is when


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("行 那你帮我取消吧", True),
        ("好 帮我查一下", True),
        ("ok cancel it then", True),
        ("好 那取消吧", True),
        ("ok please refund me", True),
        ("please refund 202405181001, you promised", True),
        ("refund order 202405181001", True),
        # What the customer will do themselves, or only acknowledges, asks nothing of us.
        ("ok I'll send my ID photo. thanks", False),
        ("好的 那我自己寄吧", False),
        ("行 那我去取消了", False),
        ("好 那就等着发货吧", False),
        ("ok thanks for the info", False),
        ("你好请问有人吗", False),
        # help given before is thanked for, not asked for
        ("谢谢你们上次帮我处理的退货 很满意", False),
        ("谢谢之前帮我办的退货", False),
        ("上次帮我查的订单再帮我看看", True),
    ],
)
def test_asking_us_for_something_is_told_from_a_courtesy(text: str, asks: bool) -> None:
    assert asks_for_something(text) is asks


@pytest.mark.parametrize(
    ("text", "told"),
    [
        # the customer's own step, a promise, a decision, a wait: what happened, told
        ("i exchanged 202405181001 last week", True),
        ("I was told I'd get a refund", True),
        ("you promised me a refund", True),
        ("the refund was supposed to come yesterday", True),
        ("i cancelled the return", True),
        ("my return was approved but no money yet", True),
        ("refund pending for two weeks", True),
        ("客服说可以退款", True),
        ("上次客服答应给我退款", True),
        ("换过货了", True),
        ("我已经退了", True),
        ("退款一直在处理中", True),
        ("我寄回去了", True),
        ("我已经把货寄回了", True),
        # what is wanted now, or asked
        ("要我把坏的寄回去吗", False),
        ("寄回去了吗", False),
        ("怎么寄回", False),
        ("i want to exchange it", False),
        ("please refund me", False),
        ("我要退货", False),
        ("能换吗", False),
        ("东西坏了", False),
        ("the blender broke after two days", False),
    ],
)
def test_what_happened_is_told_apart_from_what_is_wanted(text: str, told: bool) -> None:
    assert tells_what_happened(text) is told


@pytest.mark.parametrize(
    "text",
    ["上次客服答应给我退款", "之前已经给我退过一次了", "你说会给我换的"],
)
def test_a_promise_told_is_no_request(text: str) -> None:
    """给我 after 答应, 已经 or 会 is what was promised or done, not "please"."""
    assert not asks_for_something(text)


@pytest.mark.parametrize(
    ("text", "done"),
    [("好了吗", True), ("重置好了吗", True), ("登记了没", True), ("办好了没有", True),
     ("那好了吗？", True), ("批下来了吗", True), ("怎么样了", True), ("is it done?", True),
     ("done yet?", True), ("did it go through", True), ("has it been approved?", True),
     ("any update?", True), ("thanks, all done?", True),
     ("so is it changed?", True), ("has it been updated?", True), ("地址改了吗", True),
     # "ok", "OK?", another question, or more than whether it is done
     ("好了", False), ("好吗", False), ("发货了吗", False), ("退款什么时候到", False),
     ("is it done by friday?", False), ("is it ok?", False), ("thanks", False),
     ("I changed my address", False)],
)  # fmt: skip
def test_whether_it_is_done_is_told_from_other_questions(text: str, done: bool) -> None:
    assert asks_if_done(text) is done


@pytest.mark.parametrize(
    ("text", "why"),
    [("为什么不行", True), ("凭什么啊", True), ("那为啥不给退", True), ("why not?", True),
     ("but why?", True), ("为什么还没发货", False), ("why is my parcel late", False)],
)  # fmt: skip
def test_a_bare_why_is_told_from_a_question_of_its_own(text: str, why: bool) -> None:
    assert asks_why(text) is why
