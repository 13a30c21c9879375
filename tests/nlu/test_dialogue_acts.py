"""Dialogue acts read from the pack's phrases: what the turn does, and whether that is all."""

from __future__ import annotations

import pytest

from hermes_desk.errors import PackError
from hermes_desk.nlu.dialogue_acts import ActPhrases
from hermes_desk.packs import load_pack

ACTS = load_pack("ecommerce").acts


@pytest.mark.parametrize(
    ("text", "act"),
    [
        ("谢谢，没别的问题了", "closing"),
        ("Thanks, that's all", "closing"),
        ("bye!", "closing"),
        ("知道了，拜拜", "closing"),
        ("ok never mind, bye", "closing"),
        ("不用了，谢谢", "closing"),
        ("算了不用了", "closing"),
        ("明白了", "confirmation"),
        ("谢谢你们的帮助", "thanks"),
        ("thank you so much for your help", "thanks"),
        ("好的谢谢", "thanks"),
        ("好的", "confirmation"),
        ("嗯嗯好的", "confirmation"),
        ("yes please", "confirmation"),
        ("ok", "confirmation"),
        ("不是这个，是另一个", "correction"),
        ("No, the other one", "correction"),
        ("你好", "greeting"),
        ("hi", "greeting"),
        ("帮我转人工", "human"),
        ("你们是机器人吗", "human"),
        ("你好，转人工", "human"),
        ("I want to talk to a real person", "human"),
        ("can I speak to a human please", "human"),
        ("are you a bot?", "human"),
        # "现在是智能客服吗" got "抱歉，这个问题我暂时无法帮您处理"
        ("是智能客服吗", "human"),
        ("are you an AI?", "human"),
    ],
)
def test_a_turn_that_is_only_an_act(text: str, act: str) -> None:
    reading = ACTS.read(text)
    assert reading.act == act
    assert reading.only


@pytest.mark.parametrize(
    ("text", "act"),
    [
        ("你好，我的订单202405201234到哪了", "greeting"),
        ("Hello, my order hasn't arrived", "greeting"),
        ("谢谢，另外退款多久到账？", "thanks"),
        ("我要投诉，转人工", "human"),
    ],
)
def test_an_act_next_to_a_question_is_reported_but_not_all(text: str, act: str) -> None:
    reading = ACTS.read(text)
    assert reading.act == act
    assert not reading.only


@pytest.mark.parametrize(
    "text",
    [
        "可以退货吗",
        "银行卡能用吗",
        "this is bad",
        "对不起我说错了地址",
        "It has been 10 days",
        "人工费多少",
        "I want a refund",
        "can I change the address",
    ],
)
def test_words_inside_other_words_are_no_act(text: str) -> None:
    assert ACTS.read(text).act is None


def test_negative_turns_and_apologies() -> None:
    assert ACTS.is_negative("It has been 10 days already and I am really upset")
    assert ACTS.is_negative("太差劲了")
    assert not ACTS.is_negative("thanks, all good")
    assert ACTS.opens_with_apology("非常抱歉给您带来不好的体验。我已…")
    assert not ACTS.opens_with_apology("Sorry, I could not find order 1. Could you check?")


def test_a_latin_phrase_is_found_as_whole_words_only() -> None:
    acts = ActPhrases(phrases=(), negative=("upset", "c++ bug", "差"))
    assert acts.is_negative("I am UPSET.") and acts.is_negative("a c++ bug again")
    assert not acts.is_negative("the upsetting news") and not acts.is_negative("unupset")
    assert acts.is_negative("服务很差") and not acts.is_negative("all fine")


def test_unknown_acts_and_unquoted_yes_are_refused() -> None:
    with pytest.raises(PackError, match="unknown dialogue act"):
        ActPhrases.from_dict({"acts": {"insult": {"en": ["idiot"]}}})
    with pytest.raises(PackError, match=r"acts\.confirmation\.en"):
        ActPhrases.from_dict({"acts": {"confirmation": {"en": [True, "sure"]}}})


def test_a_withdrawal_says_what_it_takes_back() -> None:
    """``withdrawals_of`` phrases name their request's tools and workflows; ``withdrawals``
    phrases take back whatever waits (an empty set); anything else takes back nothing."""
    acts = ActPhrases.from_dict({
        "withdrawals": {"zh": ["撤回申请"], "en": ["cancel the request"]},
        "withdrawals_of": [
            {"takes_back": ["create_return"], "zh": ["不退了"], "en": ["i'll keep it"]},
            {"takes_back": ["create_ticket"], "zh": ["不投诉了"]},
        ],
    })  # fmt: skip
    assert acts.takes_back("算了，不投诉了") == frozenset({"create_ticket"})
    assert acts.takes_back("Never mind, I'll keep it.") == frozenset({"create_return"})
    assert acts.takes_back("不退了，也不投诉了") == frozenset({"create_return", "create_ticket"})
    assert acts.takes_back("please cancel the request") == frozenset()
    assert acts.takes_back("我要退货") is None and acts.takes_back("I'll keepit") is None
    assert acts.without_withdrawals("算了，不退了").strip(" ，") == "算了"


@pytest.mark.parametrize(
    ("text", "bare"),
    [
        ("我要投诉", True),
        ("我要投诉！！！", True),
        ("你好，我要投诉你们", True),
        ("投诉", True),
        ("hi, can you file a complaint for me please", True),
        ("I want to file a complaint.", True),
        ("我要投诉你们的售后", False),
        ("快递员态度太差了，我要投诉", False),
        ("我要投诉 订单202405201234", False),
        ("I want to complain about the driver", False),
        ("nobody has followed up on my complaint", False),
        ("你好", False),
    ],
)
def test_a_turn_that_only_says_a_phrase_and_acts(text: str, bare: bool) -> None:
    """ "我要投诉" says nothing of what happened; "我要投诉你们的售后" does. The phrases are
    passed the longest first, so "我要投诉" is taken out whole."""
    phrases = ("file a complaint", "我要投诉", "complaint", "complain", "投诉")
    assert ACTS.only_says(text, phrases) is bare


def test_a_decline_is_only_declines_thanks_and_fillers() -> None:
    acts = ActPhrases.from_dict({
        "acts": {"closing": {"zh": ["算了", "不用了", "再见"], "en": ["never mind", "bye"]},
                 "thanks": {"zh": ["谢谢"]}, "confirmation": {"zh": ["好的"]}},
        "fillers": {"zh": ["吧", "了"], "en": ["oh"]},
        "declines": {"zh": ["算了", "不用了"], "en": ["never mind"]},
    })  # fmt: skip
    for text in ("算了不用了", "算了吧，不用了", "Oh, never mind.", "不用了", "不用了，谢谢"):
        assert acts.only_declines(text), text
    for text in (
        "再见",
        "谢谢",
        "好的，不用了",
        "算了，再见",
        "never mind, bye",
        "不用了我自己查",
        "nevermind",
    ):
        assert not acts.only_declines(text), text


@pytest.mark.parametrize(
    ("text", "act"),
    [
        ("ok thanks for the info", "thanks"),
        ("搞定了 谢谢你", "thanks"),
        ("found it, thanks!", "thanks"),
        ("好 我再等等", "confirmation"),
        ("好了 改成功了", "confirmation"),
        ("哦 懂了", "confirmation"),
        ("ok I'll check with my bank", "confirmation"),
        ("great, im in", "confirmation"),
        ("你好请问有人吗", "greeting"),
        ("算了 不说了", "closing"),
        # What opens with no courtesy has none: small talk, a one-character opening before
        # more words ("好冷啊" is "so cold"), a question.
        ("好冷啊今天", None),
        ("今天天气好冷啊", None),
        ("what's the weather like in hangzhou today lol", None),
        ("一个礼拜了还没到 到底还要等多久", None),
        ("请问包裹丢了怎么办", None),
    ],
)
def test_the_courtesy_a_turn_carries_beside_other_words(text: str, act: str | None) -> None:
    assert ACTS.courtesy(text) == act


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("got it, thanks. what's the temporary password?", "what's the temporary password?"),
        ("好的谢谢，临时密码是多少？", "临时密码是多少？"),
        ("ok. thanks! can you check order 202405181001?", "can you check order 202405181001?"),
        # nothing opened with a courtesy, or nothing said after it
        ("what's the temporary password?", None),
        ("well, when will it come?", None),
        ("thanks for the info", None),
        ("ok thanks", None),
    ],
)
def test_what_a_turn_says_after_its_courtesies(text: str, rest: str | None) -> None:
    assert ACTS.after_courtesy(text) == rest


def test_a_withdrawal_group_without_names_is_refused() -> None:
    with pytest.raises(PackError, match=r"withdrawals_of\[0\].*takes_back"):
        ActPhrases.from_dict({"withdrawals_of": [{"zh": ["不退了"]}]})
    with pytest.raises(PackError, match="withdrawals_of"):
        ActPhrases.from_dict({"withdrawals_of": {"takes_back": ["x"]}})


@pytest.mark.parametrize(
    ("text", "asks"),
    [("hello, I'd like to speak to a human", True), ("能不能帮我转人工", True),
     ("你们是人工还是机器人", True), ("现在是智能客服吗", True), ("where is my order", False),
     ("a humane company", False)],
)  # fmt: skip
def test_asking_for_a_person_anywhere_in_the_turn(text: str, asks: bool) -> None:
    assert ACTS.asks_for_a_person(text) is asks
