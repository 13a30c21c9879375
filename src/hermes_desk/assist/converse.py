"""The conversation's own moves, settled before the business decision (stage *decide*).

A turn that takes back a request still waiting ("算了不退了", "never mind, I'll keep it", "不用重置
了") withdraws what it names: the agent can no longer approve what the customer no longer wants,
and a workflow waiting for the customer ends; with nothing waiting, the reply says nothing was put
in. What else the turn says is answered after it (:func:`with_the_rest`). A turn that is only a
dialogue act ("谢谢，没别的问题了", "yes please", "不是这个，是另一个") is answered as that act: no
look-up, nothing proposed, and never "I cannot help with that" — but a go-ahead right after asking
whether something may be done ("great, do it", :func:`goes_ahead`) is that request, for decide. So
is an out-of-scope turn that thanks, agrees, greets or says goodbye beside other words and asks
for nothing ("ok thanks for the info", "好 我再等等": :meth:`ActPhrases.courtesy`). A
turn that only states how the customer wants to be contacted ("以后不要给我打电话，发短信就行") is
noted and answered as such: it opens no ticket and promises no call. Anything else goes to
:func:`hermes_desk.assist.decide.decide`. Pure: same reading, same plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from hermes_desk.assist.records import Plan, Reading
from hermes_desk.memory.fact import CandidateFact
from hermes_desk.nlu import asks_for_something, asks_if_allowed, asks_if_done
from hermes_desk.nlu.dialogue_acts import ActPhrases

__all__ = [
    "PREFERENCE_PREFIX", "after_the_withdrawal", "conversation_plan", "goes_ahead",
    "is_preference", "with_the_rest",
]  # fmt: skip

#: Key-fact keys that hold a contact preference (the pack's ``keyfacts.yaml``).
PREFERENCE_PREFIX = "contact_preference_"

#: What an agent approved: too late for the customer to take back.
_APPROVED = frozenset({"approved", "executing", "executed", "failed"})

_HAN = re.compile(r"[\u4e00-\u9fff]")
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")

_CLAUSES = re.compile(r"[,，.。!！?？;；、~～\n]+")

#: What is left of a withdrawal once its phrase and values are out ("我", "这个订单", "my order").
_LEFT_OVER = re.compile(
    r"[我这那个订单号的了吧啊呀呢哦就还是先真想起来说]+"
    r"|(?:(?:i|my|the|this|that|it|order|number|one|just|remember|now|after|all|said)\s*)+"
)

Extract = Callable[[str], Sequence[CandidateFact]]


def is_preference(candidate: CandidateFact) -> bool:
    return candidate.key.startswith(PREFERENCE_PREFIX) and candidate.is_key_fact


def conversation_plan(
    reading: Reading,
    acts: ActPhrases,
    extract: Extract,
    workflows: Mapping[str, str | None] | None = None,
    offered: Callable[[str], bool] | None = None,
    beyond: Callable[[str, str | None], bool] | None = None,
) -> Plan | None:
    """The plan of a turn that is only a dialogue act or only a stated preference, else None.

    Args:
        reading: the turn as read.
        acts: the pack's dialogue-act phrases.
        extract: the key-fact extraction for a piece of text (in the turn's intent).
        workflows: the workflow each intent starts (a decline takes back the one its
            conversation's intent started).
        offered: whether a turn's reply offered its intent's action (:func:`goes_ahead`).
        beyond: whether a turn asked of an intent (by name) what none of its tools does
            ("I want to cancel order …"): a go-ahead after it is told this is not put in here.
    """
    withdrawal = _withdrawal_plan(reading, acts) or _decline_plan(reading, acts, workflows)
    if withdrawal is not None:
        return withdrawal
    put_in = any(p.status != "withdrawn" for p in reading.proposals)
    if put_in and asks_if_done(reading.text):
        return None  # "好了吗" after a request asks whether it is done (decide), not "好"
    waiting = reading.waiting
    waits_for_customer = waiting is not None and _waits_for_customer(waiting.waiting_for)
    if (
        not reading.proposals
        and reading.intent.out_of_scope
        and not waits_for_customer
        and asks_if_done(reading.text)
    ):
        # "好了吗" with nothing ever put in got "好的。请问还有什么可以帮您？" (read as "好"):
        # nothing was put in, and what is wanted is asked
        return Plan(
            reading.intent.name,
            "asked whether it is done, with nothing put forward in this session: said so",
            situation="nothing_put_in",
        )
    if reading.found:  # an order number, a code…: the turn is about business
        # …but a day alone ("好 我明天打", "ok tomorrow then") is no business of its own
        only_days = all(_is_day(value) for value in reading.found.values())
        return _courtesy_plan(reading, acts, waits_for_customer) if only_days else None
    act = reading.dialogue_act
    if act.only and act.act is not None:
        if waits_for_customer and act.act in ("confirmation", "correction"):
            return None  # the waiting workflow asks again for what it needs
        if goes_ahead(reading, acts, offered):
            return None  # "great, do it" after "can I return it?": the request (decide)
        if act.act == "confirmation" and any(p.pending for p in reading.proposals):
            return Plan(
                reading.intent.name,
                "a confirmation while a proposal waits for the agent: nothing new is proposed",
                situation="act_confirmation_pending",
            )
        if act.act == "confirmation" and _nothing_to_go_ahead_with(reading, acts):
            # "ok go ahead" after a policy or a remedy was told ("…we send a replacement or
            # refund it"): "All right." said it would be done, and nothing was put in
            before = reading.previous_text
            if before and beyond is not None and beyond(before, reading.previous_intent):
                # "ok do it" after "I want to cancel order …", which no tool here does: "tell
                # me what you would like done" asked for what was just said
                return Plan(
                    reading.intent.name,
                    "told to go ahead with what no tool here does: said it is not put in here, "
                    "nothing proposed",
                    situation="not_put_in_here",
                )
            return Plan(
                reading.intent.name,
                "told to go ahead with nothing put in or offered: said so, nothing proposed",
                situation="nothing_to_go_ahead",
            )
        return Plan(
            reading.intent.name,
            f"a dialogue act ({act.act}): answered as such, nothing looked up or proposed",
            situation=f"act_{act.act}",
        )
    if _only_preferences(reading.text, acts, extract):
        return Plan(
            reading.intent.name,
            "a stated contact preference: noted; nothing looked up or proposed",
            situation="preference_noted",
        )
    return (
        _do_it_for_me(reading, acts, beyond)
        or _urged(reading, waits_for_customer, put_in)
        or _courtesy_plan(reading, acts, waits_for_customer)
        or _remark_plan(reading, waits_for_customer)
    )


#: Asking us to be quick ("麻烦尽快", "尽快处理吧", "please hurry").
_URGE = re.compile(
    r"尽快|快点|抓紧|赶紧|赶快|\b(?:asap|hurry|quickly|right away|as soon as possible)\b", re.I
)


def _urged(reading: Reading, waits_for_customer: bool, put_in: bool) -> Plan | None:
    """A few words read as nothing in scope that ask us to be quick ("好的 麻烦尽快", "行那你们
    尽快处理吧") got "抱歉，这个问题我暂时无法帮您处理": with a request waiting for the agent, it is
    in and goes ahead once confirmed; with nothing put in, nothing is, and what to do is asked
    (no promise of speed for what nobody asked). After a request was decided, None."""
    if (
        not reading.intent.out_of_scope
        or waits_for_customer
        or reading.found
        or _says_much(reading.text)
        or _URGE.search(reading.text) is None
    ):
        return None
    if any(p.pending for p in reading.proposals):
        situation = "act_confirmation_pending"
    elif not put_in:
        situation = "nothing_to_go_ahead"
    else:
        return None
    return Plan(
        reading.intent.name,
        "asked to be quick: what waits is said, or that nothing is in; nothing looked up or "
        "proposed",
        situation=situation,
    )


def _do_it_for_me(
    reading: Reading, acts: ActPhrases, beyond: Callable[[str, str | None], bool] | None
) -> Plan | None:
    """A few words that ask us to do it, right after the customer asked what no tool here does,
    or asking it themselves (answered how it is done): told it is not put in here. Read as
    nothing in scope ("行 那你帮我取消吧": "抱歉，这个问题我暂时无法帮您处理", after the way to do
    it had just been given), or telling us to go ahead in the same intent as the question with the
    value to use ("ok do it, new address is 上海…" after how to change the address: the
    account-security article, found by its words)."""
    before, intent = reading.previous_text, reading.previous_intent
    if beyond is None or before is None or _says_much(reading.text):
        return None
    if reading.intent.out_of_scope:
        if reading.found or not asks_for_something(reading.text):
            return None
    elif not (
        acts.goes_ahead(reading.text)
        and reading.act != "question"  # "how do I do that": asked how, not told to
        and reading.intent.name == intent
        and not reading.intent.workflow
    ):
        return None
    if not (beyond(reading.text, intent) or beyond(before, intent)):
        return None
    return Plan(
        reading.intent.name,
        "asked to do what no tool here does, right after how it is done: said it is not put in "
        "here, nothing proposed",
        situation="not_put_in_here",
    )


def _nothing_to_go_ahead_with(reading: Reading, acts: ActPhrases) -> bool:
    """The turn tells the agent to go ahead ("ok go ahead", "好的，就这么办") in a conversation
    where nothing was ever put forward and no workflow waits: there is nothing to go ahead
    with. (Once something was put in, "好的" after it is a plain confirmation.)"""
    return acts.goes_ahead(reading.text) and not reading.proposals and reading.waiting is None


def _says_much(text: str) -> bool:
    """More than a courtesy's few words: over 20 Chinese characters or 10 Latin words."""
    return len(_HAN.findall(text)) > 20 or len(_WORD.findall(text)) > 10


def _is_day(value: object) -> bool:
    """A calendar day as the date slots hold it (``2026-12-07``)."""
    return isinstance(value, str) and _DAY.fullmatch(value) is not None


def _courtesy_plan(reading: Reading, acts: ActPhrases, waits_for_customer: bool) -> Plan | None:
    """An out-of-scope turn that thanks, agrees, greets or says goodbye beside other words
    ("ok thanks for the info", "好 我再等等", "你好请问有人吗", "算了 不说了") is answered as that
    courtesy, not "I cannot help with that": it asks us for nothing ("行 那你帮我取消吧" and "ok
    cancel it then" do: "All right." would say it is done) and, unless it thanks, says little
    else (at most 20 Chinese characters or 10 words). Not while a workflow waits for the
    customer: it asks again."""
    if not reading.intent.out_of_scope or waits_for_customer:
        return None
    if acts.asks_for_a_person(reading.text) and not _says_much(reading.text):
        # "hello, I'd like to speak to a human": asking for a person is that act, not a
        # request we cannot help with — a person is answering.
        return Plan(
            reading.intent.name,
            "out of scope, asking for a person: answered as such, nothing looked up or proposed",
            situation="act_human",
        )
    if asks_for_something(reading.text):
        return None
    act = acts.courtesy(reading.text)
    if act is None or (act != "thanks" and _says_much(reading.text)):
        return None  # "你好，我上个月…这个能免费修吗？": more than a greeting to answer
    if act == "confirmation" and any(p.pending for p in reading.proposals):
        situation = "act_confirmation_pending"
    else:
        situation = f"act_{act}"
    return Plan(
        reading.intent.name,
        f"out of scope, with a courtesy ({act}): answered as such, nothing looked up or proposed",
        situation=situation,
    )


def _remark_plan(reading: Reading, waits_for_customer: bool) -> Plan | None:
    """An out-of-scope remark later in a conversation that neither asks nor asks for anything
    and says little ("找到了 在快递柜", "那我再考虑考虑", "finally an answer", "I was home all
    day") is taken as said: "I cannot help with that one. Anything about orders…?" could not
    be sent to a customer who has been talking about their order. A question, a request or a
    longer text keeps that answer (it says what this service does)."""
    text = reading.text
    if (
        not reading.intent.out_of_scope
        or waits_for_customer
        or reading.previous_text is None
        or reading.act == "question"
        or asks_for_something(text)
        or _says_much(text)
    ):
        return None
    return Plan(
        reading.intent.name,
        "an out-of-scope remark in a conversation: taken as said, nothing looked up or proposed",
        situation="remark_noted",
    )


def goes_ahead(
    reading: Reading, acts: ActPhrases, offered: Callable[[str], bool] | None = None
) -> bool:
    """The turn is only a confirmation that tells the agent to go ahead ("great, do it", "那就办
    吧"), right after the customer asked whether something may be done ("can I return order
    …?") or after a turn whose reply offered it (``offered``: "I was told I'd get a refund for
    …", answered "…I can put in a return for you if you like"), with nothing waiting: it asks
    for that. Whether that intent acts is decide's to say."""
    act = reading.dialogue_act
    before = reading.previous_text
    return (
        act.only
        and act.act == "confirmation"
        and acts.goes_ahead(reading.text)
        and before is not None
        and reading.waiting is None
        and not any(p.pending for p in reading.proposals)
        and (asks_if_allowed(before) or (offered is not None and offered(before)))
    )


def _withdrawal_plan(reading: Reading, acts: ActPhrases) -> Plan | None:
    """The plan of a turn that takes a request back, else None.

    What it takes back: the proposals waiting for the agent that its phrases may take back
    ("不投诉了": the ticket's, not the return's) and that hold a value it names ("订单…不退了"),
    and a workflow of those waiting for the customer ("不用重置了" while the reset waits for the
    code). A turn that says more than the withdrawal ("不退了，我要换货"; a switch, "算了还是换货
    吧", unless asked as a question) has the rest answered too (``answers_rest``). With none
    waiting, the last such proposal an agent approved: it is not withdrawn, and the reply says
    it went ahead already; the last turned down by an agent (or expired), that it will not be
    done. With nothing in this contact, a turn that says nothing else is told that what an
    earlier contact had done stands, or else that nothing was put in — it is not asked for an
    order to return; one that says more is read as usual."""
    targets = acts.takes_back(reading.text, switches=reading.act != "question")
    if targets is None:
        return None
    only = _only_withdrawal(reading, acts)
    named = _named_with_it(reading, acts, only)
    chosen = [
        p
        for p in reading.proposals
        if (not targets or p.tool in targets)
        and (not named or named & set(map(str, p.arguments.values())))
    ]
    pending = tuple(p.id for p in chosen if p.pending)
    waiting = reading.waiting
    workflow = (
        waiting.id
        if waiting is not None
        and _waits_for_customer(waiting.waiting_for)
        and (not targets or waiting.name in targets)
        else None
    )
    if pending or workflow:
        return Plan(
            reading.intent.name,
            "the customer withdrew a request still waiting: withdrawn, nothing proposed",
            withdraw=pending,
            withdraw_workflow=workflow,
            # "不退了，我要换货", "算了还是换货吧": the rest of the turn is answered too
            answers_rest=not only,
        )
    approved = [p for p in chosen if p.status in _APPROVED]
    if approved:
        return Plan(
            reading.intent.name,
            "the customer withdrew a request an agent had decided: it stands, nothing proposed",
            withdraw=(approved[-1].id,),
        )
    if only and chosen and chosen[-1].status == "withdrawn":
        # "我说了不退了" after "不退了": read as usual it put the return forward again (the
        # last of them: one an agent rejected since was not withdrawn)
        return Plan(
            reading.intent.name,
            "the customer takes back again what they withdrew: it stays withdrawn, nothing "
            "proposed",
            situation="already_withdrawn",
        )
    if only and chosen and chosen[-1].turned_down:
        # "不退了" after an agent rejected the return (or it expired): it was put in, so "never
        # put in" would be untrue; it will not be done
        return Plan(
            reading.intent.name,
            "the customer takes back what an agent turned down: it will not be done, nothing "
            "proposed",
            situation="not_going_ahead",
        )
    if not only:
        return None
    # "不投诉了" in the contact after the one whose ticket an agent opened: that ticket stands
    # ("nothing was put in" would be untrue of it)
    ran = [
        p for p in reading.earlier
        if (not targets or p.tool in targets)
        and (not named or named & set(map(str, p.arguments.values())))
    ]  # fmt: skip
    if ran:
        return Plan(
            reading.intent.name,
            "the customer withdrew a request an agent decided in an earlier contact: it stands, "
            "nothing proposed",
            withdraw=(ran[-1].id,),
        )
    return Plan(
        reading.intent.name,
        "the customer took back a request that was never put in: nothing to withdraw",
        situation="nothing_to_withdraw",
    )


def _decline_plan(
    reading: Reading, acts: ActPhrases, workflows: Mapping[str, str | None] | None
) -> Plan | None:
    """The plan of a turn that only turns down ("算了不用了", "never mind") what the
    conversation's intent put in and still waits: the proposals it put forward for the agent
    ("我要投诉…", then "算了不用了": the ticket) and the workflow it started that waits for the
    customer (the reset waiting for the code). None otherwise: it closes the conversation
    (nothing of that intent waits), or it answers something else."""
    before = reading.previous_intent
    if before is None or reading.found or not acts.only_declines(reading.text):
        return None
    pending = tuple(p.id for p in reading.proposals if p.pending and p.why.get("intent") == before)
    waiting = reading.waiting
    workflow = (
        waiting.id
        if waiting is not None
        and _waits_for_customer(waiting.waiting_for)
        and (workflows or {}).get(before) == waiting.name
        else None
    )
    if not pending and workflow is None:
        return None
    return Plan(
        reading.intent.name,
        "the customer turned down the request still waiting: withdrawn, nothing proposed",
        withdraw=pending,
        withdraw_workflow=workflow,
    )


def after_the_withdrawal(reading: Reading, withdrawal: Plan, acts: ActPhrases) -> Reading:
    """The reading as the rest of the turn sees it: its own words without the withdrawal's (a
    switch, "还是换货", stays); without the proposals it withdraws, the workflow they (or it)
    belong to, and the values only they held (the order of the return taken back, unless the
    turn names it). "actually I'll keep it, what are your hours?" with a return waiting showed
    the waiting return again, and the question was not answered."""
    gone = [p for p in reading.proposals if p.id in withdrawal.withdraw]
    ended = {p.workflow_id for p in gone} | {withdrawal.withdraw_workflow}
    held = {str(v) for p in gone for v in p.arguments.values()}
    waiting = reading.waiting
    rest = acts.without_withdrawals(reading.text).strip(" ，,。.!！")
    return replace(
        reading,
        text=rest or reading.text,
        slots={k: v for k, v in reading.slots.items() if k in reading.found or str(v) not in held},
        proposals=[p for p in reading.proposals if p.id not in withdrawal.withdraw],
        waiting=None if waiting is not None and waiting.id in ended else waiting,
    )


def with_the_rest(withdrawal: Plan, rest: Plan) -> Plan:
    """A withdrawal with the plan for the rest of its turn ("不退了，我要换货": the exchange
    answered from the knowledge base) — when the rest only looks things up. A rest that would
    propose a write, or start or show a workflow ("算了，不投诉了，我要退货…"), is not followed: the
    withdrawal alone is answered, and the customer can ask again."""
    if rest.writes or rest.workflow is not None or not rest.lookups:
        return replace(withdrawal, answers_rest=False)
    return replace(
        rest,
        rule=f"{withdrawal.rule}; then {rest.rule}",
        withdraw=withdrawal.withdraw,
        withdraw_workflow=withdrawal.withdraw_workflow,
        answers_rest=True,
    )


def _waits_for_customer(waiting_for: str | None) -> bool:
    """A workflow waits for the customer (a slot), not for an agent (``approval:<step>``)."""
    return waiting_for is not None and waiting_for != "" and ":" not in waiting_for


def _named_with_it(reading: Reading, acts: ActPhrases, only: bool) -> set[str]:
    """The values that say which request is taken back: those in a clause with the withdrawal
    ("订单…不退了"), or any the turn names when it says nothing else ("订单…，不退了"). A value
    named for something else ("算了不退了，另外订单…到哪了") picks nothing."""
    values = {str(v) for v in reading.found.values()}
    if only or not values:
        return values
    clauses = [c for c in _CLAUSES.split(reading.text.lower()) if acts.takes_back(c) is not None]
    return {v for v in values if any(v.lower() in c for c in clauses)}


def _only_withdrawal(reading: Reading, acts: ActPhrases) -> bool:
    """The turn says nothing but the withdrawal, the values it names, dialogue acts and
    fillers ("算了，我不退了", "订单…不退了"); "不退了，我要换货" says more."""
    rest = acts.without_withdrawals(reading.text)
    for value in reading.found.values():
        rest = rest.replace(str(value).lower(), " ")
    for clause in (c.strip() for c in _CLAUSES.split(rest)):
        if clause and not (
            _LEFT_OVER.fullmatch(clause) or acts.read(clause).only or acts.only_fillers(clause)
        ):
            return False
    return True


def _only_preferences(text: str, acts: ActPhrases, extract: Extract) -> bool:
    """Every clause states a contact preference or is only a dialogue act / fillers."""
    said = False
    for clause in (c.strip() for c in _CLAUSES.split(text)):
        if not clause:
            continue
        if any(is_preference(c) for c in extract(clause)):
            said = True
            continue
        if acts.read(clause).only or acts.only_fillers(clause):
            continue
        return False
    return said
