"""Stage *decide*: what the turn will look up, what it will propose, which workflow step it
moves — a pure function of the reading, the pack and the tools' declared effects.

Rules (SPEC §8):
- a customer's words never execute a write: writes become proposals for the agent (X2);
- a question about a policy or a process is answered from the knowledge base and proposes
  nothing (X4); so is a turn whose intent acts but was read under the threshold (an unsure
  reading: "my keyboard order … says lost" as a return at 0.45), after the record it names;
- a repeated complaint adds to its ticket instead of opening another (X4);
- a workflow waiting for the customer takes the slot the turn brings; a turn that brings none
  and asks something else is answered as usual (its look-ups run);
- the same request again while its workflow waits continues it (the reply asks again for what
  it waits for), or starts it again when the customer brings new details (another phone
  number) or asks for what it sent once more ("再发一次验证码", "I didn't get the code");
- a request for what no tool of the intent carries out (the intent's ``kb_requests``:
  "帮我把这个订单取消掉" where the pack has no cancellation tool), or a question whether or how it
  can be done ("能取消吗"), is answered from the knowledge base — how it is done — not with the
  record's status; "取消了吗" and "我没取消啊" still get the record. ``kb_requests: all`` sends
  every request of the intent there: "I was charged twice" is no question about the ways to pay;
- a problem no tool of the intent handles, reported or asked about (the intent's
  ``kb_problems``: "钢化膜碎了一张" during a parcel's conversation, "能补发吗"), is answered from
  the knowledge base with the turn's own words, not with the parcel's status again — after the
  record the turn itself names, looked up for the customer (another's gets the general answer,
  without its number);
- a turn that only gives the record a question of the same intent needed ("订单号…" after
  "我的退货怎么样了", "订单…" after "我的投诉处理得怎么样了") answers that question: the record,
  then the knowledge base; no write;
- a question whose intent only comes from the conversation and that lacks the slot the intent
  needs ("那一般几天能到？" after "我的快递到哪了") is answered from the knowledge base instead of
  asking for an order number;
- a write for a record the turn names waits for the record to be found for the customer when
  the intent has a ``record_check`` (a complaint about another customer's order: no ticket);
- while a write waits for the agent, or once the agent decided it, asking for what no tool
  does ("能换大一码吗" during a return, "那能换货吗" after it was turned down) is answered, not
  the write or its decision shown again;
- a go-ahead right after asking whether something may be done ("can I return order …?", then
  "great, do it") is that request;
- a bare record number with nothing asked before it in the conversation ("order …" after small
  talk) is looked up, never acted on; one after a question or a report answers that, and a
  turn read as a parcel's that says in another intent's words how the customer's request
  stands ("我的退货…到哪一步了") is that report;
- a turn never puts forward what it takes back ("我不要退货，只要退款": no return is proposed;
  what it asks is answered from the knowledge base).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from hermes_desk.actions import Proposal
from hermes_desk.assist.converse import goes_ahead
from hermes_desk.assist.records import Lookup, Plan, ProposedWrite, Reading, WorkflowMove
from hermes_desk.nlu import (
    asks_for,
    asks_for_something,
    asks_if_allowed,
    asks_if_done,
    asks_the_same_of,
    asks_when,
    asks_why,
    find_reference,
    is_short,
    is_slot_only,
    mentions,
    named,
    only_changes_to,
    reports,
    request_act,
    tells_what_happened,
)
from hermes_desk.nlu.language import detect_language
from hermes_desk.packs import IntentSpec, Pack
from hermes_desk.tools import ToolSpec
from hermes_desk.workflows import WorkflowView
from hermes_desk.workflows.machine import APPROVAL_PREFIX

__all__ = ["KB_INTENT", "asks_what_no_tool_does", "decide", "reports_a_status", "value_for_schema"]

#: The intent that answers questions from the knowledge base.
KB_INTENT = "kb_question"
_KB_TOOL = "kb_search"
_TICKET_TOOL = "create_ticket"
_TICKET_NOTE_TOOL = "add_ticket_note"
# Asking again for what a waiting workflow sent ("再发一次", "I didn't get the code").
_AGAIN = re.compile(
    r"再发|重发|重新发|重新获取|再来一[个条次]|没收到|收不到|没有收到|还没收到"
    r"|resend|send\s+(?:it|me|the\s+code|a\s+new\s+code|another(?:\s+one)?)?\s*again"
    r"|new\s+code|another\s+code|did\s*n[o']?t\s+(?:i\s+)?(?:get|receive)"
    r"|have\s*n[o']?t\s+(?:i\s+)?(?:got|gotten|received)|never\s+(?:got|received)|not\s+received"
    r"|\bno\s+(?:sms|code|text|message)",
    re.IGNORECASE,
)
#: A turn that asks to change what the waiting workflow runs with ("换个手机号", "use my new
#: number"); without it, another phone in the turn was said in passing.
_CHANGE = re.compile(
    r"换(?:个|成|到|一个|用)?(?:新的?)?(?:手机|号|电话)|改(?:成|用|为|到)|用\s*\d{6,}|"
    r"用(?:这个|新的?|另一个|另外一个|我的新)(?:手机|号|电话)|发到|"
    r"instead|change\s+(?:it|my|the)?\s*(?:phone|number|mobile)?\s*to|switch\s+to|"
    r"use\s+(?:this|my\s+new|my\s+other|another|the\s+other|a\s+different)|send\s+(?:it|the\s+code)\s+to",
    re.IGNORECASE,
)


#: A question about the waiting write's own approval, when or whether it came ("什么时候能处理
#: 好", "通过了吗", "has it been approved yet?"): the waiting write is its answer, not an article.
_ABOUT_APPROVAL = re.compile(
    r"处理|批|审核|通过|办理|办好|确认|受理|\b(?:approv|process|handl|confirm|review|accept)",
    re.IGNORECASE,
)
_YET = re.compile(
    r"了吗|了没|了嘛|好没|没有(?=[?？。]|$)|\byet\b|\b(?:has|have|is|was)\s+it\b", re.I
)


# The record named inside the words ("my refund for order 202405181001 hasn't arrived"): taken
# out before the pack's phrases are looked for, which name no record.
_RECORD_NAMED = re.compile(
    r"\s*(?:\b(?:for|of|on|from)\s+(?:(?:my|the)\s+)?(?:order\s+)?(?:no\.?\s*|number\s+|#)?)?\d{6,}",
    re.IGNORECASE,
)
# How far a request has got ("我的投诉处理得怎么样了", "any update on my complaint?").
_HOW_FAR = re.compile(
    r"怎么样了|进度|到哪一步|处理得|处理到|有结果|any (?:news|update)|status of|how is (?:it|my)"
    r"|what'?s happening with|where are (?:you|we) with",
    re.IGNORECASE,
)


def decide(reading: Reading, pack: Pack, tools: Mapping[str, ToolSpec], *, user: str) -> Plan:
    """The plan for one customer turn."""
    go_ahead = _asked_for(reading, pack, tools)
    if isinstance(go_ahead, Plan):
        return go_ahead
    told_to = go_ahead is not reading  # the go-ahead is the request asked of before
    reading = go_ahead
    done = _asked_if_done(reading, pack)
    if done is not None:
        return done
    follow_up = _after_a_problem(reading, pack, tools, user=user)
    if follow_up is not None:
        return follow_up
    intent = reading.intent
    waiting = reading.waiting
    if waiting is not None and waiting.waiting_for:
        plan = _continue_waiting(reading, pack, tools, waiting.waiting_for, user=user)
        if plan is not None:
            return plan
    if intent.out_of_scope:
        return Plan(intent.name, "out of scope: no tool runs")
    acts = _acts(intent, tools)
    if acts and _asks_nothing_yet(reading) and is_slot_only(reading.text):
        looked_up = _looks_the_record_up(reading, pack, tools)
        if looked_up is not None:  # "order 202405181001" after small talk: a return was put
            plan = decide(replace(reading, intent=looked_up), pack, tools, user=user)
            return replace(plan, conversation_intent=plan.conversation_intent or looked_up.name)
    # A turn that only gives the record's number goes on with the report it was asked for by
    # ("我的退款还没到账", then "202405181001": a return was put forward).
    said = (_turn_before(reading) if is_slot_only(reading.text) else None) or reading.text
    if intent.status_reports and _reports_how_it_stands(said, intent, acts):
        report = _status_report(reading, pack, tools, user=user)
        if report is not None:
            return report
    other = _reported_of_another(said, reading, pack, tools)
    if other is not None:
        report = _status_report(replace(reading, intent=other), pack, tools, user=user)
        if report is not None:
            return replace(report, conversation_intent=other.name)
    # A question about an intent that acts — or a reading too unsure to put a write forward
    # ("my keyboard order … says lost": a return at 0.45) — is answered, not acted on; so is
    # the record a question asked for ("我的退货怎么样了", then "订单号…"): no return put forward.
    question = _question_before(reading) if acts else None
    if acts and (reading.act == "question" or reading.unsure or question) and _has_kb(pack, tools):
        # Asked for what none of the tools does ("那能换货吗" after the return was turned down):
        # not a question about the decided request, whose outcome would be said again.
        beyond = intent.kb_requests and _beyond_the_tools(reading) is not None
        decided = None if beyond else _decided_workflow(reading)
        if decided is not None:
            return Plan(
                intent.name,
                "a question about the customer's own request, decided earlier: its outcome is "
                "shown, nothing proposed",
                workflow=WorkflowMove("show", decided[0], decided[1]),
            )
        still = _still_waiting(reading, tools)
        asked = _YET.search(reading.text) or _HOW_FAR.search(reading.text)
        if still is not None and reading.act == "question" and asked:
            return Plan(
                intent.name,
                "asked whether its write is done while it waits for the agent: it is in and "
                "waits, nothing looked up or proposed",
                situation="still_proposed",
                recall=(still,),
            )
        return Plan(
            KB_INTENT,
            "a question about a policy or a process: answered from the knowledge base (after "
            "the record it names, when the intent has a kb_record), nothing proposed",
            lookups=_kb_lookups(reading, pack, tools, question or reading.text, user=user),
            recall=_carried_out(reading, tools),
        )
    query = _beyond_the_tools(reading) if intent.kb_requests and _has_kb(pack, tools) else None
    if query is not None:
        return Plan(
            KB_INTENT,
            "a request for what no tool of the intent carries out, or how it is done: answered "
            "from the knowledge base, nothing proposed",
            lookups=_kb_lookups(reading, pack, tools, query, user=user),
            recall=_made_before(reading, tools),
        )
    other = (
        _beyond_another(reading, pack) if acts and not told_to and _has_kb(pack, tools) else None
    )
    if other is not None:
        asked_of = replace(reading, intent=other)
        return Plan(
            KB_INTENT,
            "a request for what no tool carries out, of another intent than the turn read as: "
            "answered from the knowledge base, nothing proposed",
            lookups=_kb_lookups(asked_of, pack, tools, reading.text, user=user),
            conversation_intent=other.name,
        )
    if acts and _turns_down(reading, pack, tools) and _has_kb(pack, tools):
        return Plan(
            KB_INTENT,
            "the turn says the customer does not want what the intent would put forward: the "
            "rest is answered from the knowledge base, nothing proposed",
            lookups=_kb_lookups(reading, pack, tools, reading.text, user=user),
        )
    problem = _problem(reading) if intent.kb_problems and _has_kb(pack, tools) else None
    if problem is not None:
        # the record the turn names is looked up first (its owner checked, its status said;
        # "my parcel <another's> shows delivered but…" answered "About order <it>: …"); its
        # status does not join the query. One named earlier is not looked up again.
        named = reading.found
        return Plan(
            KB_INTENT,
            "a problem no tool of the intent handles: answered from the knowledge base with the "
            "turn's words, nothing proposed",
            lookups=_kb_lookups(reading, pack, tools, problem, user=user, slots=named, status=None),
        )
    if intent.name == KB_INTENT and _has_kb(pack, tools):
        gave = _its_outcome_asked(reading, pack, tools)
        if gave is not None:
            return gave
        plan = _record_question(reading, pack, tools, user=user)
        if plan is not None:
            return plan
    if intent.workflow:
        done = _after_it_went_through(reading)
        return done if done is not None else _start_workflow(reading, pack)
    missing = tuple(s for s in intent.required_slots if s not in reading.slots)
    carried = reading.carried and reading.previous_intent == intent.name
    if (
        missing
        and carried
        and reading.act == "question"
        and not _of_another_record(reading.text)
        and _has_kb(pack, tools)
    ):
        return Plan(
            KB_INTENT,
            "a question read in the conversation, without the record it would need: answered "
            "from the knowledge base",
            lookups=(_kb_search(reading, pack, tools, reading.text, user=user),),
        )
    if missing:
        return Plan(intent.name, "required slots missing", missing_slots=missing)
    if _says_nothing_of_it(reading, pack, tools):
        about = [s for s in (_turned_down_last(reading), _said_before(reading, pack)) if s]
        if not about:
            return Plan(
                intent.name,
                "a request that says nothing of what it is about: asked what happened, nothing "
                "proposed",
                missing_slots=_text_arguments(intent, pack, tools),
            )
        reading = replace(reading, text=" / ".join([*about, reading.text]))
    # Arguments that come from the turn, not from slots (the pack's ``arguments``).
    context = pack.turn_arguments(user=user, text=reading.text, language=reading.language)
    lookups: list[Lookup] = []
    writes: list[ProposedWrite] = []
    for name in intent.calls:
        spec = tools.get(name)
        if spec is None:
            continue
        if name == _KB_TOOL:  # every knowledge search is built one way: its query, its language
            lookups.append(_kb_search(reading, pack, tools, reading.text, user=user))
            continue
        arguments = _arguments(spec, reading.slots, context)
        if spec.effect == "read":
            lookup = Lookup(name, arguments, _instead(intent, name, tools, reading, context))
            lookups.append(_with_detail(lookup, intent.calls_detail, tools, arguments))
        else:
            writes.append(_write(name, arguments, reading, tools))
    check = _record_check(intent, tools, reading, context) if writes else None
    if check is not None:  # the record the write names is the customer's, or nothing is put
        lookups.insert(0, check)
        writes = [replace(write, requires=check.tool) for write in writes]
    rule = "look up what the intent calls" if lookups else "propose the intent's write"
    if check is not None:
        rule = "propose the intent's write once its record is found for the customer"
    return Plan(intent.name, rule, lookups=tuple(lookups), writes=tuple(writes))


def _asked_if_done(reading: Reading, pack: Pack) -> Plan | None:
    """ "好了吗", "登记了吗", "is it done?" and nothing else, after a request — or "why not?" after
    an agent turned it down, or "那怎么办" right after it was put forward and while it waits for
    the agent: whether the session's newest write went through, whatever intent the few words
    read as ("好了吗" read as small talk said an executed return still waited; "is
    it done?" as a parcel's intent asked for an order number). Its workflow is shown, or the
    write recalled: done, waiting for the agent, or turned down. None while a workflow waits
    for the customer (it asks again), when the turn names a record or another intent's subject
    ("退款好了吗" after a complaint), or when nothing was put forward."""
    slot = reading.waiting.waiting_for if reading.waiting is not None else None
    if slot and not slot.startswith(APPROVAL_PREFIX):
        return None
    if reading.found:
        return None
    newest = next((p for p in reversed(reading.proposals) if p.status != "withdrawn"), None)
    if newest is None:
        return None
    # "why not?" right after an agent turned it down asks about that too
    asked = asks_if_done(reading.text) or (newest.turned_down and asks_why(reading.text))
    what_now = not asked and newest.pending and _asks_what_now(reading.text)
    if not (asked or what_now):
        return None
    workflow = str(newest.why.get("workflow") or "")
    starter = pack.starter(workflow) if workflow else None
    if workflow and starter is None:
        return None  # a workflow no intent of the pack starts: not this conversation's
    name = starter.name if starter is not None else str(newest.why.get("intent") or "")
    if name not in pack.intents:
        return None
    asked_of_it = reading.intent.name in (name, KB_INTENT) or reading.intent.out_of_scope
    if what_now and (reading.previous_intent != name or not asked_of_it):
        # "那怎么办" right after the return was put forward asks what happens now: it waits (a
        # knowledge search found nothing); after a parcel's status since, or read surely as the
        # lost parcel's ("那现在怎么办" after a complaint about it), it asks of the parcel
        return None
    others = tuple(
        word for other, spec in pack.intents.items() if other != name for word in spec.topic_phrases
    )
    if mentions(reading.text, others):
        return None
    rule = "asked whether the session's newest write is done: its outcome, nothing proposed"
    waits = "still_proposed" if newest.pending else None
    # what the same request ran before it is recalled too: a note added to a ticket is answered
    # with the ticket's number ("工单号 —" when only the note was)
    ran = tuple(
        p.id for p in reading.proposals
        if p.status == "executed" and p.id != newest.id and p.why.get("intent") == name
    )  # fmt: skip
    shown = newest.workflow_id if workflow else None
    return Plan(
        name, rule, workflow=WorkflowMove("show", workflow, shown) if shown else None,
        situation=waits, recall=(*ran, newest.id), conversation_intent=name,
    )  # fmt: skip


def _record_check(
    intent: IntentSpec, tools: Mapping[str, ToolSpec], reading: Reading, context: Mapping[str, Any]
) -> Lookup | None:
    """The look-up of the record the intent's write names (``record_check``), when the turn's
    slots name one ("我要投诉 订单…"); None when the intent checks none or none is named."""
    if intent.record_check is None:
        return None
    return _read_lookup(tools, intent.record_check, reading.slots, context, complete=True)


def _says_nothing_of_it(reading: Reading, pack: Pack, tools: Mapping[str, ToolSpec]) -> bool:
    """The turn only asks for the intent's write ("我要投诉", "can you file a complaint for
    me"; the intent's ``bare_requests``) and no write of the intent waits for the agent: a
    ticket whose summary is "我要投诉" tells the back office nothing."""
    intent = reading.intent
    if not intent.bare_requests or not pack.acts.only_says(reading.text, intent.bare_phrases):
        return False
    writes = _writes(intent, tools)
    return not any(p.pending and p.tool in writes for p in reading.proposals)


def _turned_down_last(reading: Reading) -> str | None:
    """What an agent just turned down, when it is the conversation's last request, the turn
    before was of its intent and the turn names no other record ("那我要投诉" after the return
    was not approved: the ticket says about what — "为什么不行 / 那我要投诉" told the back office
    nothing); else None."""
    if not reading.proposals:
        return None
    last = max(reading.proposals, key=lambda p: p.created_at)
    if not last.turned_down or reading.previous_intent != last.why.get("intent"):
        return None
    named = reading.slots.get("order_id")
    if named and last.arguments.get("order_id") not in (None, named):
        return None
    if reading.language == "zh":
        return f"未获批准：{last.explanation}"
    return f"not approved: {last.explanation}"


def _said_before(reading: Reading, pack: Pack) -> str | None:
    """The customer's turn before, when it said something in scope that the bare request is
    about ("快递三天没动了", then "我要投诉"); None after a greeting or a thanks (the
    conversation's intent outlives them: "谢谢" would have been the ticket's summary), another
    bare request, or nothing."""
    before = reading.previous_text
    previous = pack.intents.get(reading.previous_intent or "")
    if not before or previous is None or previous.out_of_scope:
        return None
    acts = pack.acts
    if acts.read(before).only or acts.only_fillers(before):
        return None
    return None if acts.only_says(before, reading.intent.bare_phrases) else before


def _text_arguments(
    intent: IntentSpec, pack: Pack, tools: Mapping[str, ToolSpec]
) -> tuple[str, ...]:
    """The arguments of the intent's writes that carry the customer's words (``summary``)."""
    texts = {name for name, source in pack.arguments.items() if source == "text"}
    writes = _writes(intent, tools)
    return tuple(
        dict.fromkeys(
            key
            for name in intent.calls
            if name in writes
            for key in tools[name].parameters.get("properties", {})
            if key in texts
        )
    )


def goes_on_across_contacts(intent: IntentSpec) -> bool:
    """Does the intent go on from what an earlier contact did (its ticket)? A complaint made
    again in a new contact adds to the ticket opened before (X4), and "any news on my
    complaint?" is answered with its number: the turn reads the customer's earlier writes. Other
    intents' turns do not (a look-up a turn would not use)."""
    return _TICKET_TOOL in intent.tools


def _writes(intent: IntentSpec, tools: Mapping[str, ToolSpec]) -> set[str]:
    """The write tools the intent calls."""
    return {name for name in intent.calls if name in tools and tools[name].effect == "write"}


def _asked_for(reading: Reading, pack: Pack, tools: Mapping[str, ToolSpec]) -> Reading | Plan:
    """A go-ahead ("great, do it") after asking whether something may be done ("can I return
    order …?", answered from the knowledge base) read as that request: its intent, its words,
    the conversation's slots. After asking it of what no tool here does ("can I get the
    difference?", answered with the price-protection article), the plan that says it is not
    put in here ("ok please do it" was searched for and found nothing). Any other turn as it
    is."""
    offered = functools.partial(reports_a_status, pack=pack)  # asked only of a go-ahead
    if not goes_ahead(reading, pack.acts, offered) or reading.previous_intent not in pack.intents:
        return reading
    intent = pack.intents[reading.previous_intent]
    before = reading.previous_text
    if before is None:
        return reading
    if not _acts(intent, tools):
        if not asks_if_allowed(before):
            return reading
        return Plan(
            reading.intent.name,
            "told to go ahead with what no tool here does: said it is not put in here, nothing "
            "proposed",
            situation="not_put_in_here",
        )
    slots = {**reading.previous_slots, **reading.slots}  # the turn itself names nothing
    # After the offer the report's words are no request ("I was told…" would be reported
    # again): the go-ahead is, with the report's record.
    text = before if asks_if_allowed(before) else reading.text
    return replace(
        reading, intent=intent, text=text, act="request", carried=True, unsure=False,
        slots=slots,
    )  # fmt: skip


def reports_a_status(text: str, pack: Pack) -> bool:
    """Did ``text`` say how the customer's own record stands, in one of the pack's intents that
    answer so (its ``status_reports``, or what was done, promised or is under way)? The reply
    offered that intent's action ("I can put in a return for you if you like")."""
    said = _RECORD_NAMED.sub("", text)
    return any(_reports_status(said, spec) for spec in pack.intents.values() if spec.status_reports)


def asks_what_no_tool_does(text: str, intent: str | None, *, pack: Pack) -> bool:
    """Whether ``text`` asks of the intent named ``intent`` what none of its tools does (its
    ``kb_requests`` phrases, as a request): "I want to cancel order …" where no tool cancels.
    A knowledge question asks it of any intent, as a request or a question of how ("how do I
    change my delivery address?": no tool changes one)."""
    if intent == KB_INTENT:
        if request_act(text) not in ("request", "question"):
            return False
        specs = [s for s in pack.intents.values() if isinstance(s.kb_requests, dict)]
        return any(asks_for(text, spec.kb_phrases) for spec in specs)
    spec = pack.intents.get(intent or "")
    if spec is None or not isinstance(spec.kb_requests, dict):
        return False
    return request_act(text) == "request" and asks_for(text, spec.kb_phrases)


def _acts(intent: IntentSpec, tools: Mapping[str, ToolSpec]) -> bool:
    """The intent does something: it starts a workflow or calls a write."""
    return bool(intent.workflow) or any(
        tools[name].effect == "write" for name in intent.calls if name in tools
    )


def _turns_down(reading: Reading, pack: Pack, tools: Mapping[str, ToolSpec]) -> bool:
    """The turn takes back what its intent would put forward ("我不要退货，只要退款": the return)
    — with nothing of it waiting, or beside the withdrawal of what waited. Read as usual, it put
    that very request forward ("我已为订单…提交申请")."""
    declined = pack.acts.takes_back(reading.text, switches=reading.act != "question")
    if declined is None:
        return False
    intent = reading.intent
    puts_forward = _writes(intent, tools)
    if intent.workflow:
        puts_forward.add(intent.workflow)
    return not declined or bool(declined & puts_forward)


def _beyond_the_tools(reading: Reading) -> str | None:
    """The knowledge-base query when the turn asks of its intent what none of the intent's tools
    does (``kb_requests``), else None.

    A turn that only gives a value ("订单是…") answers the turn before and is read with its
    words, and so is a request of a few words right after a write of its intent was put forward
    ("I want the right one sent" after "I got the wrong item"). Under ``all`` (a problem, not a
    named request) a turn that goes on with the intent
    of the turn before ("多扣的钱什么时候退给我" after "银行卡被扣了两次钱") is searched with
    both turns' words. Never across languages: the passage is quoted in the query's language."""
    intent = reading.intent
    text, act = reading.text, reading.act
    slot_only = is_slot_only(text)
    before = _turn_before(reading) if slot_only or intent.kb_requests == "all" else None
    if slot_only:
        if before is None:
            return None
        text, act = before, request_act(before)
    if intent.kb_requests != "all":
        if asks_for(text, intent.kb_phrases, act=act):
            # a few words that lean on the turn whose write waits for the agent ("I want the
            # right one sent" after "I got the wrong item" put a return forward: the refund
            # article, by "sent") are searched with it
            leans = not slot_only and _write_waits(reading) and is_short(text, words=6)
            said = _turn_before(reading) if leans else None
            return f"{said} {text}" if said and said != text else text
        return _after_a_kb_request(reading) if reading.carried and not slot_only else None
    if act != "request":
        return None
    return f"{before} {text}" if before and text != before else text


def _beyond_another(reading: Reading, pack: Pack) -> IntentSpec | None:
    """For a few words read as an intent that acts, which ask for what another intent's
    ``kb_requests`` say no tool does and name nothing of their own intent's subject ("能帮我催一下
    吗" read as a return: a return was put forward; "can you speed it up?" after a complaint was
    added to its ticket): that intent, the first of the pack. None otherwise."""
    intent = reading.intent
    if reading.carried:
        return None  # read in the conversation's intent: "send a new one" in a reset is a code
    if not is_short(reading.text, cjk_chars=10, words=6):
        return None  # a complaint tells what happened ("上次改地址改了三次都失败…"): its own
    if mentions(reading.text, intent.topic_phrases):
        return None  # "我要退货，顺便催一下": the return's own
    for spec in pack.intents.values():
        if spec is not intent and asks_for(reading.text, spec.kb_phrases, act=reading.act):
            return spec
    return None


def _write_waits(reading: Reading) -> bool:
    """A workflow of the turn's intent waits for the agent to approve its write."""
    waiting = reading.waiting
    return (
        waiting is not None
        and waiting.name == reading.intent.workflow
        and (waiting.waiting_for or "").startswith(APPROVAL_PREFIX)
    )


def _after_a_kb_request(reading: Reading) -> str | None:
    """A turn read as its intent only by the conversation ("it hasn't arrived yet" after "I want
    to exchange it for a bigger size", which no tool carries out) goes on with that request: the
    query is both turns' words, and the intent's write ("open a return"), which nobody asked
    for, is not put forward. None when the turn before asked for nothing of the kind."""
    before = _turn_before(reading)
    if before is None or before == reading.text:
        return None
    if not asks_for(before, reading.intent.kb_phrases, act=request_act(before)):
        return None
    return f"{before} {reading.text}"


def _question_before(reading: Reading) -> str | None:
    """The question this turn answers by only giving a value ("订单号…" after "我的退货怎么样了",
    "it's …" after "where is my refund?", "订单…" after "我的投诉处理得怎么样了"), when the turn
    before asked about a state or a time of the same intent.

    Not a question whether it may be done ("能换吗", "can I return them?" then the number: a
    request in question form, acted on as before), nor for a workflow that looks no record up
    for questions (no ``kb_record``): a phone number after "I forgot my password and can't log
    in" is what the reset needs."""
    intent = reading.intent
    if (intent.workflow and not intent.kb_record) or not is_slot_only(reading.text):
        return None
    before = _turn_before(reading)
    if before is None or request_act(before) != "question" or asks_if_allowed(before):
        return None
    return before


def _problem(reading: Reading) -> str | None:
    """The knowledge-base query when the turn reports a problem of the intent's
    ``kb_problems`` (or its remedy), else None: its own words, after the turn before when that
    reported one too ("能补发吗" after "钢化膜碎了一张": a replacement for what broke), or when this
    one only asks what to do now ("那怎么办" after "少发了一件"); the turn before's words alone
    when this one only gives the record's number."""
    phrases = reading.intent.problem_phrases
    before = _turn_before(reading)
    if before is None or before == reading.text or not reports(before, phrases):
        return reading.text if reports(reading.text, phrases) else None
    # "那怎么办" after "少发了一件": what to do about the problem just reported.
    if _asks_what_now(reading.text) or reports(reading.text, phrases):
        return f"{before} {reading.text}"
    # "202405181001" after "快递被压坏了": the number of the problem's record (its status, said
    # again, answered nothing of the damage)
    return before if is_slot_only(reading.text) else None


# Asking what to do now, without naming what about; or whether to do it again ("要不要再付一
# 次", "should I pay again?" after a payment the order does not show).
_WHAT_NOW = re.compile(
    r"怎么办|咋办|怎么处理|如何处理|怎么弄|what (?:should|do|can|shall) i do|what now|then what"
    r"|what happens now|what can you do|what are my options"
    r"|要不要再|需不需要再|用不用再|还要再|要再\S{0,4}吗|需要再\S{0,4}吗"
    r"|\b(?:should|do|must) i (?:\w+ ){0,2}again\b|\bdo i (?:need|have) to (?:\w+ ){0,2}again\b",
    re.IGNORECASE,
)


def _after_a_problem(
    reading: Reading, pack: Pack, tools: Mapping[str, ToolSpec], *, user: str
) -> Plan | None:
    """A few words that ask what to do now, or whether to do it again, right after a turn that
    reported a problem of its intent ("我付了钱…还显示待付款", then "要不要再付一次" — the
    order's status said "付款后会尽快为您发货"; "should I pay again?" read as the payment
    methods listed them): answered as the problem, whatever intent the few words read as. Not
    a turn that names a record, nor one of the problem's own intent (``_problem`` has it)."""
    before = pack.intents.get(reading.previous_intent or "")
    said = _previous_in_language(reading)
    if before is None or said is None or before.name == reading.intent.name:
        return None
    if reading.found or not _asks_what_now(reading.text) or not _has_kb(pack, tools):
        return None
    if not reports(said, before.problem_phrases):
        return None
    asked = replace(reading, intent=before)
    return Plan(
        KB_INTENT,
        "what to do now about the problem the turn before reported: answered from the knowledge "
        "base with both turns' words, nothing proposed",
        lookups=_kb_lookups(asked, pack, tools, f"{said} {reading.text}", user=user, status=None),
        conversation_intent=before.name,
    )


def _asks_what_now(text: str) -> bool:
    """A few words that only ask what to do now ("那怎么办", "what now?", "要不要再付一次")."""
    return _WHAT_NOW.search(text) is not None and is_short(text, cjk_chars=10, words=6)


def _turn_before(reading: Reading) -> str | None:
    """The customer's turn before this one when it was of the same intent and language."""
    if reading.previous_intent != reading.intent.name:
        return None
    return _previous_in_language(reading)


def _previous_in_language(reading: Reading) -> str | None:
    """The customer's turn before this one when it was in the same language, of any intent."""
    before = reading.previous_text
    if not before:
        return None
    return before if detect_language(before, reading.language) == reading.language else None


def _record_question(
    reading: Reading, pack: Pack, tools: Mapping[str, ToolSpec], *, user: str
) -> Plan | None:
    """A knowledge question that names its record ("订单…的地址写错了，能改吗"), or a turn that
    only gives it after the question ("订单号…" after "我地址写错了，能改吗") or only says what to
    change to ("改成北京市…" after "我想改一下收货地址"): searched with the question's words,
    after the record (the intent's ``kb_record``), whose status the answer says. The status
    does not join the query here: a policy question is not about a status ("运费怎么算" for a
    shipped order found the address article); it chooses the passage of the article found
    ("帮我改一下收货地址" for a shipped order quoted how to change it before shipping). Only a
    record the turn itself names: an order named earlier is not looked up for every policy
    question after it — unless the question asks when, and a write of this session went
    through for it (the return just opened: the time depends on it). None: the intent's own
    calls."""
    elliptical = (
        is_slot_only(reading.text)
        or only_changes_to(reading.text)
        or asks_the_same_of(reading.text)  # "and for 202405181001?" after "refund policy?"
    )
    before = _turn_before(reading) if elliptical else None
    named: Mapping[str, Any] = reading.found
    if not named and asks_when(reading.text):
        # "when will I get the money" right after the agent opened the return: its record,
        # which says what the time depends on (the goods coming back), not the general times;
        # so is "when will the refund come" of the order the conversation is about (being
        # returned: "A refunded order's refund is sent…" was quoted)
        named = _written_for(reading) or _status_tells_when(reading, pack)
    lookups = _kb_lookups(
        reading,
        pack,
        tools,
        before or reading.text,
        user=user,
        slots=named,
        status="about",
    )
    if before is None and len(lookups) == 1:
        return None
    return Plan(
        KB_INTENT,
        "a knowledge question about the record the turn names: answered from the knowledge "
        "base after the record (the intent's kb_record)",
        lookups=lookups,
    )


def _status_tells_when(reading: Reading, pack: Pack) -> dict[str, Any]:
    """The conversation's record, when the question names the subject of another intent that
    looks the same record up for its questions (``kb_record``: a refund's time depends on
    whether the order is being returned or refunded); else nothing."""
    record = reading.intent.kb_record
    if record is None:
        return {}
    for spec in pack.intents.values():
        named = spec is not reading.intent and spec.kb_record == record
        if named and mentions(reading.text, spec.topic_phrases):
            return {k: v for k, v in reading.slots.items() if k in reading.intent.slots}
    return {}


def _written_for(reading: Reading) -> dict[str, Any]:
    """The conversation's slots that name a record a write of this session ran for (an agent
    approved it and it went through)."""
    written = {
        str(value)
        for p in reading.proposals
        if p.status == "executed"
        for value in p.arguments.values()
    }
    return {name: value for name, value in reading.slots.items() if str(value) in written}


def _read_lookup(
    tools: Mapping[str, ToolSpec],
    name: str,
    slots: Mapping[str, Any],
    context: Mapping[str, Any],
    *,
    complete: bool = False,
) -> Lookup | None:
    """A look-up of the read tool ``name``; None when there is no such read tool, or (with
    ``complete``) when a required argument is not known."""
    spec = tools.get(name)
    if spec is None or spec.effect != "read":
        return None
    arguments = _arguments(spec, slots, context)
    if complete and any(key not in arguments for key in spec.parameters.get("required", ())):
        return None
    return Lookup(spec.name, arguments)


def _kb_lookups(
    reading: Reading,
    pack: Pack,
    tools: Mapping[str, ToolSpec],
    query: str,
    *,
    user: str,
    slots: Mapping[str, Any] | None = None,
    status: Literal["query", "about"] | None = "query",
) -> tuple[Lookup, ...]:
    """The knowledge search, after the record it is about when the turn names it (the
    intent's ``kb_record``: "cancel it" is answered for a shipped order as for a shipped one).
    ``slots``: where the record's arguments come from (default: the conversation's);
    ``status``: the record's status joins the query, only chooses the passage (``about``), or
    is left out (None)."""
    record = _kb_record(reading, pack, tools, query, user=user, slots=slots)
    if record is None:
        return (_kb_search(reading, pack, tools, query, user=user),)
    record = _with_detail(record, reading.intent.kb_record_detail, tools, record.arguments)
    search = _kb_search(
        reading, pack, tools, query, user=user, status_of=record.tool if status else None
    )
    return record, replace(search, status_in=status) if status == "about" else search


def _kb_record(
    reading: Reading,
    pack: Pack,
    tools: Mapping[str, ToolSpec],
    text: str,
    *,
    user: str,
    slots: Mapping[str, Any] | None = None,
) -> Lookup | None:
    """The look-up of the intent's ``kb_record`` with its arguments from ``slots`` (default:
    the conversation's); None when one of them is not known."""
    context = pack.turn_arguments(user=user, text=text, language=reading.language)
    known = reading.slots if slots is None else slots
    return _read_lookup(tools, reading.intent.kb_record or "", known, context, complete=True)


def _with_detail(
    record: Lookup,
    closer: Mapping[str, str],
    tools: Mapping[str, ToolSpec],
    arguments: Mapping[str, Any],
) -> Lookup:
    """``record`` with the look-ups that tell its status more closely (``closer``, the intent's
    ``kb_record_detail`` or ``calls_detail``), each made with the record's own arguments."""
    detail = [
        (status, lookup)
        for status, name in closer.items()
        if (lookup := _read_lookup(tools, name, arguments, {}, complete=True)) is not None
    ]
    return replace(record, detail=tuple(detail)) if detail else record


def _kb_search(
    reading: Reading,
    pack: Pack,
    tools: Mapping[str, ToolSpec],
    query: str,
    *,
    user: str,
    status_of: str | None = None,
) -> Lookup:
    """The knowledge search for ``query``, with the pack's other turn arguments the search takes
    (``arguments``: the language to quote in — an English turn naming a Chinese status, "the app
    shows 待付款 but i paid", gets the English passage). The query is ``query`` whatever the
    pack maps to it."""
    context = pack.turn_arguments(user=user, text=query, language=reading.language)
    arguments = {
        **_arguments(tools[_KB_TOOL], {}, context),
        "query": _own_words(reading, _on_topic(reading, pack, query)),
    }
    return Lookup(_KB_TOOL, arguments, status_of=status_of)


def _own_words(reading: Reading, query: str) -> str:
    """The clause the turn's record sits in, for a turn whose records each sit in a clause of
    their own ("订单A取消，另外B的退款什么时候到": B's question alone — A's 取消 found the
    cancellation article for B's refund); else ``query``."""
    if query != reading.text or not reading.clauses:
        return query
    current = {v for v in reading.found.values() if isinstance(v, str)}  # not a list of dates
    own = [c.text for c in reading.clauses if c.value in current]
    return own[0] if len(own) == 1 else query


def _on_topic(reading: Reading, pack: Pack, query: str) -> str:
    """The words of a question of time, joined by what the conversation is about when they
    name no subject ("多久能处理" right after a complaint got the refund-timing article, "how
    long will it take" the delivery times): the ``kb_context`` of the previous intent, for a
    knowledge question, or of the turn's own intent answered from the knowledge base ("when
    will someone call me" read as the complaint's got the hacked-account article's "someone
    will contact you within 24 hours"), in the turn's language. Only a question of when or
    how long: each subject's times differ, and other questions say what they are about in
    words of their own ("what are your hours").

    A knowledge question after an intent with no ``kb_context`` (a return's times are of
    refunds and of exchanges) takes the subject the previous turn named of that intent's
    ``kb_topic``, of any intent's after a knowledge question ("I was refunded … the money isn't
    here", "I want to change my password", "can I return it?", then "how long does it take?"
    got the delivery times)."""
    if query != reading.text:
        return query
    asked = reading.intent
    about = asked if asked.name != KB_INTENT else pack.intents.get(reading.previous_intent or "")
    if about is None or not asks_when(query) or mentions(query, pack.topic_phrases):
        return query
    language = reading.language or ""
    word = about.kb_context.get(language)
    if word is None and asked.name == KB_INTENT and reading.previous_text:
        own = about.name != KB_INTENT  # else a knowledge question's: of any subject
        topics = about.kb_topic.get(language, ()) if own else pack.topic_phrases
        word = named(reading.previous_text, topics)
    return query if word is None else f"{word} {query}"


def _instead(
    intent: IntentSpec,
    name: str,
    tools: Mapping[str, ToolSpec],
    reading: Reading,
    context: Mapping[str, Any],
) -> Lookup | None:
    """The look-up the intent makes when ``name`` finds nothing (``if_not_found``), if any."""
    return _read_lookup(tools, intent.if_not_found.get(name, ""), reading.slots, context)


def _continue_waiting(
    reading: Reading, pack: Pack, tools: Mapping[str, ToolSpec], slot: str, *, user: str
) -> Plan | None:
    waiting = reading.waiting
    assert waiting is not None
    owner = (pack.starter(waiting.name) or reading.intent).name
    if slot.startswith(APPROVAL_PREFIX):
        # Waiting for the agent: asking for the same thing again shows it, it does not restart,
        # and so does asking when it will be approved, whatever intent the question reads as
        # ("多久能批下来": not the complaints article). Asking for what no tool does ("能换大一码
        # 吗", "还是换货吧"), or when or how long otherwise ("那退款什么时候到"), is answered.
        approval = (
            reading.act == "question"
            and _ABOUT_APPROVAL.search(reading.text) is not None
            and (asks_when(reading.text) or _YET.search(reading.text) is not None)
        )
        if approval and _about_the_waiting(reading, owner, waiting):
            return Plan(
                owner, "asked about the write waiting for the agent", workflow=_show(waiting)
            )
        beyond = reading.intent.kb_requests and _beyond_the_tools(reading) is not None
        when = reading.act == "question" and asks_when(reading.text) and not approval
        # "when do I get the money?" read as a knowledge question, of the request that waits
        asked_of_it = reading.intent.workflow == waiting.name or (
            reading.intent.name == KB_INTENT
            and _about_the_waiting(reading, owner, waiting)
            and mentions(reading.text, (*pack.intents[owner].topic_phrases, *_MONEY))
        )
        if not asked_of_it or beyond:
            return None
        write = _waiting_write(reading, waiting)
        if (
            reading.act == "question"
            and write is not None
            and _names_its_outcome(reading, write, tools)
        ):
            # "what's the temporary password?" got the self-service steps: it is in and waits
            return Plan(
                owner,
                "asked about what the write waiting for the agent gives: it is in and waits, "
                "nothing looked up or proposed",
                situation="still_proposed",
                recall=(write.id,),
            )
        if when and _has_kb(pack, tools):
            # About the request's process, not its record: the order's status ("已签收") would
            # pull the query to what a delivered order can do, and "being returned" to goods
            # on their way back (a lost parcel's refund waits for the agent, nothing comes
            # back). That it still waits is said first: the times run once it is confirmed.
            query = reading.text
            word = None if write is None else _subject_of(write, pack, owner, reading.language)
            if word is not None and not mentions(query, pack.topic_phrases):
                query = f"{word} {query}"  # "钱什么时候到" while a refund waits: of refunds
            return Plan(
                KB_INTENT,
                "a question of when, while the write waits for the agent: that it waits, then "
                "the knowledge base's answer",
                lookups=(_kb_search(reading, pack, tools, query, user=user),),
                waits_first=None if write is None else write.id,
            )
        if reading.intent.workflow != waiting.name:
            return None
        amend = _amendment(reading, pack, waiting)
        if amend is not None:
            return Plan(
                owner,
                "a detail of the write given while it waits for the agent (its reason): the "
                "waiting proposal takes it; the agent approves what it says",
                workflow=_show(waiting),
                amend=amend,
            )
        return Plan(owner, "the workflow waits for the agent's approval", workflow=_show(waiting))
    value = reading.found.get(slot)
    if value is None:
        value = value_for_schema(reading.text, _slot_schema(pack, slot))
    if value is not None:
        return Plan(
            owner,
            "the waiting workflow takes the slot this turn brings",
            workflow=WorkflowMove("feed", waiting.name, waiting.id, {slot: value}),
        )
    if reading.intent.workflow == waiting.name and not reading.found and _problem(reading):
        # "这个号码停机了收不到": what to do instead, not the same code again. One that names a
        # number ("我以前那个号码…早就停用了") speaks of another phone: said in passing.
        return None
    if reading.intent.workflow == waiting.name:
        return _asked_again(reading, pack, owner)
    # A turn the reader is unsure of that brings nothing ("怎么还不对" right after a wrong code,
    # read as a parcel's question at 0.38, was asked for an order number) is about what waits.
    if reading.intent.out_of_scope or (reading.unsure and not reading.found):
        return Plan(
            owner,
            "the workflow still waits for the customer",
            workflow=_show(waiting),
            conversation_intent=None if reading.intent.out_of_scope else owner,
        )
    return None  # something else asked meanwhile: answered as usual


#: A step argument that is one workflow input as is (``$inputs.reason``).
_INPUT_AS_IS = re.compile(r"\$inputs\.([A-Za-z_][A-Za-z0-9_]*)")


def _amendment(
    reading: Reading, pack: Pack, waiting: WorkflowView
) -> tuple[str, dict[str, Any]] | None:
    """The waiting proposal's id and the arguments this turn gives it: a detail the customer
    had not given when it was put forward ("尺码太小了" after "我要退货 …": the return's reason
    was the default "客户申请退货"). Only an input the workflow runs with its default, passed
    as is to the write; never a record's id (a listed slot: another order needs a request of its
    own) and never one the customer already gave (a remark in passing does not overwrite it)."""
    proposal = next(
        (p for p in reversed(reading.proposals) if p.pending and p.workflow_id == waiting.id),
        None,
    )
    definition = pack.workflows.get(waiting.name)
    if proposal is None or proposal.step is None or definition is None:
        return None
    changes: dict[str, Any] = {}
    for argument, template in definition.step(proposal.step).arguments.items():
        passed = _INPUT_AS_IS.fullmatch(template) if isinstance(template, str) else None
        name = passed.group(1) if passed else ""
        spec = definition.inputs.get(name)
        if spec is None or waiting.inputs.get(name, spec.default) != spec.default:
            continue
        rule = pack.slot_rules.get(name)
        value = reading.found.get(name)
        if value is None or (rule is not None and rule.listed):
            continue
        if proposal.arguments.get(argument) == spec.default != value:  # not amended before
            changes[argument] = value
    return (proposal.id, changes) if changes else None


#: Words of money, for a question of when read as a knowledge question ("when do I get the
#: money?") while a refund waits for the agent.
_MONEY = ("钱", "到账", "money")


def _waiting_write(reading: Reading, waiting: WorkflowView) -> Proposal | None:
    """The workflow's write that waits for the agent."""
    return next(
        (p for p in reversed(reading.proposals) if p.pending and p.workflow_id == waiting.id),
        None,
    )


#: Two words of four letters or more running together, or three Chinese characters.
_OUTCOME_TERM = re.compile(r"(?=(\b[a-z]{4,} [a-z]{4,}\b|[\u4e00-\u9fff]{3}))")


def _names_its_outcome(reading: Reading, write: Proposal, tools: Mapping[str, ToolSpec]) -> bool:
    """The question names what the write does in the words of its tool's ``explain`` ("临时密码"
    of "把临时密码通过短信发送…", "temporary password" of "send a temporary password by SMS…");
    never in the words of its arguments (a return's reason, said by the customer)."""
    spec = tools.get(write.tool)
    if spec is None:
        return False
    said = spec.explained_words()
    return any(term in said for term in _OUTCOME_TERM.findall(reading.text.lower()))


def _subject_of(write: Proposal, pack: Pack, owner: str, language: str) -> str | None:
    """The word of its intent's ``kb_topic`` that a write's explanation names ("退款" of "为订单
    … 退款 198 元"), in the turn's language when it has one."""
    topic = pack.intents[owner].kb_topic
    return named(write.explanation, tuple(topic.get(language, ()))) or named(
        write.explanation, pack.intents[owner].topic_phrases
    )


def _about_the_waiting(reading: Reading, owner: str, waiting: WorkflowView) -> bool:
    """The turn may be about the workflow waiting for the agent: it reads as its intent, a
    knowledge question or nothing in scope, and names no record the workflow does not hold."""
    if reading.intent.name not in (owner, KB_INTENT) and not reading.intent.out_of_scope:
        return False
    held = {str(value) for value in waiting.inputs.values()}
    return all(str(value) in held for value in reading.found.values())


def _asked_again(reading: Reading, pack: Pack, owner: str) -> Plan:
    """The waiting workflow's own request again: restart it with the new details the turn
    brings, or when the customer asks for what it sent once more; else it continues."""
    waiting = reading.waiting
    assert waiting is not None
    definition = pack.workflows[waiting.name]
    changed = {
        name: value
        for name, value in reading.found.items()
        if name in definition.inputs
        and not _same(waiting.inputs.get(name, reading.previous_slots.get(name)), value, name)
    }
    if changed and not reading.carried and _CHANGE.search(reading.text):
        return Plan(
            owner,
            "the same request with new details: the workflow starts again with them",
            workflow=WorkflowMove("restart", waiting.name, waiting.id, changed),
        )
    if changed:
        # Another phone said in passing, or asked about ("这个号也能收到吗？"): the workflow
        # keeps the details it runs with; only a request for it again changes them.
        return Plan(
            owner,
            "new details said in passing: the waiting workflow continues with its own",
            workflow=_show(waiting),
        )
    if _AGAIN.search(reading.text):
        return Plan(
            owner,
            "asked again for what the workflow sent: it starts again",
            workflow=WorkflowMove("restart", waiting.name, waiting.id),
        )
    return Plan(
        owner, "the same request again: the waiting workflow continues", workflow=_show(waiting)
    )


def _same(previous: Any, value: Any, name: str) -> bool:
    """Whether ``value`` is what the waiting workflow runs with. Its view shows a phone masked
    (``*********00``, ``138****8000``): the same phone said again in full is no new detail."""
    if previous == value:
        return True
    if not (isinstance(previous, str) and isinstance(value, str) and "*" in previous):
        return False
    return len(previous) == len(value) and all(
        p in ("*", v) for p, v in zip(previous, value, strict=True)
    )


def _decided_workflow(reading: Reading) -> tuple[str, str] | None:
    """The newest workflow of the turn's intent whose write the agent decided in this session
    (name, id): "did it work?" after an approved reset asks about it, not about a policy. A
    write the customer took back was decided by no one: a question after it is answered (the
    workflow's "did not go through" would say it failed)."""
    name = reading.intent.workflow
    if name is None:
        return None
    for proposal in reversed(reading.proposals):
        if (
            proposal.workflow_id
            and proposal.status not in ("proposed", "withdrawn")
            and proposal.why.get("workflow") == name
        ):
            return name, proposal.workflow_id
    return None


def _carried_out(reading: Reading, tools: Mapping[str, ToolSpec]) -> tuple[str, ...]:
    """The newest write of the turn's intent in this session (its id) when an agent decided it:
    approved and run with a record as its answer ("我的投诉处理得怎么样了", "what is my ticket
    number" after the ticket was opened are answered with its number too), or turned down
    (rejected, or expired undecided: the answer says it will not be done, not how complaints
    are handled as if one were open). None while it waits, or after the customer withdrew it."""
    newest = _newest_write(reading, tools)
    if newest is None:
        return ()
    if (newest.status == "executed" and isinstance(newest.result, dict)) or newest.turned_down:
        return (newest.id,)
    return ()


def _made_before(reading: Reading, tools: Mapping[str, ToolSpec]) -> tuple[str, ...]:
    """ "I complained yesterday and nobody called me back": the ticket opened then (this
    contact's, or an earlier one's) is recalled with the answer, when the turn names the
    intent's subject and the intent goes on across contacts."""
    if not goes_on_across_contacts(reading.intent):
        return ()
    if not mentions(reading.text, reading.intent.topic_phrases):
        return ()
    return _carried_out(reading, tools)


def _newest_write(reading: Reading, tools: Mapping[str, ToolSpec]) -> Proposal | None:
    """The newest proposal in this session of one of the turn's intent's writes; with none,
    the newest that ran in an earlier contact (the ticket opened yesterday)."""
    writes = _writes(reading.intent, tools)
    return next(
        (p for p in (*reversed(reading.proposals), *reversed(reading.earlier)) if p.tool in writes),
        None,
    )


def _status_report(
    reading: Reading, pack: Pack, tools: Mapping[str, ToolSpec], *, user: str
) -> Plan | None:
    """The customer says how their own request stands ("202405181001 的退款还没到账"): nothing
    is put forward (a return was, for a delivered order nobody asked to return). A workflow of
    the intent an agent decided is shown; else the record is looked up and its status said;
    without the record's number, it is asked for. None when the record cannot be looked up
    (no such read tool served): the turn is decided as usual."""
    decided = _decided_workflow(reading)
    record = _kb_record(reading, pack, tools, reading.text, user=user)
    if decided is not None and (record is None or not _went_through(reading, decided[1])):
        return Plan(
            reading.intent.name,
            "a report of how the customer's own request stands, decided earlier: its outcome "
            "is shown, nothing proposed",
            workflow=WorkflowMove("show", decided[0], decided[1]),
        )
    # A write of it that went through: the record says how it stands now, which the outcome
    # no longer may ("我寄回去了" after the return was opened was told to send the item back).
    intent = reading.intent
    if record is None:
        # the record's own number when the intent needs none to answer ("退了多少钱" asked of
        # the knowledge base: only the order says)
        spec = tools.get(intent.kb_record or "")
        needed = spec.parameters.get("required", ()) if spec is not None else ()
        wanted = (*intent.required_slots, *(s for s in needed if s in intent.slots))
        missing = tuple(s for s in dict.fromkeys(wanted) if s not in reading.slots)
        if not missing:
            return None
        return Plan(
            intent.name,
            "a report of how a request stands, without its record",
            missing_slots=missing,
            situation="record_missing",
        )
    return Plan(
        intent.name,
        "a report of how the customer's own request stands: the record is looked up and its "
        "status said, nothing proposed",
        lookups=(record,),
        if_found="status_reported",
    )


def _asks_nothing_yet(reading: Reading) -> bool:
    """Nothing in the conversation asked for anything: no intent, no proposal, no workflow."""
    return reading.previous_intent is None and not reading.proposals and reading.waiting is None


def _looks_the_record_up(
    reading: Reading, pack: Pack, tools: Mapping[str, ToolSpec]
) -> IntentSpec | None:
    """For a turn that only gives a record's number with no request before it in the
    conversation (it opens it, or follows small talk): the first intent of the pack that only
    looks such a record up (it needs the number, writes nothing, starts no workflow, answers
    no knowledge question) — a bare number asks for nothing to be done, whatever the model
    reads into it ("order 202405181001" after "when are you open?" put a return forward)."""
    named = set(reading.found)
    for spec in pack.intents.values():
        if (
            spec.name != KB_INTENT
            and not spec.out_of_scope
            and spec.required_slots
            and set(spec.required_slots) <= named
            and not _acts(spec, tools)
        ):
            return spec
    return None


def _reports_how_it_stands(said: str, intent: IntentSpec, acts: bool) -> bool:
    """Does ``said`` report how the customer's own request of ``intent`` stands, and only that
    (:func:`_only_reports`)?"""
    return _reports_status(_RECORD_NAMED.sub("", said), intent) and _only_reports(
        said, intent, acts
    )


def _only_reports(said: str, intent: IntentSpec, acts: bool) -> bool:
    """A report that does not also ask what the knowledge base answers, tell a problem it
    answers first ("I returned it and got refunded but it's 30 less than I paid": the
    shortfall, not the order's status), or ask for something to be done."""
    return (
        not asks_for(said, intent.kb_phrases, act=request_act(said))
        and not reports(said, intent.problem_phrases)
        and not (acts and _asks_to_act(said))
    )


def _reported_of_another(
    said: str, reading: Reading, pack: Pack, tools: Mapping[str, ToolSpec]
) -> IntentSpec | None:
    """For a turn read as an intent that neither acts nor hears reports ("我的退货…到哪一步了"
    read as a parcel's, at 0.51) that names its record and not the intent's subject (its
    ``kb_topic``): the first intent of the pack in whose ``status_reports`` phrases it says how
    the customer's own request stands — so the record's status is said ("正在退货中：仓库收到
    商品并验收后会发起退款…"), not the outbound parcel's ("已签收。如果您没有收到，我马上帮您核实").
    None for any other turn."""
    intent = reading.intent
    if intent.status_reports or _acts(intent, tools) or not reading.found:
        return None  # a turn naming no record reads as asked ("多扣的钱什么时候退给我")
    if mentions(said, intent.topic_phrases):
        return None  # "我的包裹…被退回去了" is the parcel's, sent back by the courier
    bare = _RECORD_NAMED.sub("", said)
    for spec in pack.intents.values():
        if (
            spec.status_reports
            and reports(bare, spec.status_phrases)  # its phrases, not any telling of events
            and _only_reports(said, spec, _acts(spec, tools))
        ):
            return spec
    return None


def _went_through(reading: Reading, workflow_id: str) -> bool:
    """Did an agent approve a write of the workflow, and did it run?"""
    return any(p.workflow_id == workflow_id and p.status == "executed" for p in reading.proposals)


def _reports_status(text: str, intent: IntentSpec) -> bool:
    """Does the turn say how the customer's own record stands: in the intent's phrases ("退款还没
    到账"), or by telling what was done, promised or is under way with it ("I exchanged it last
    week", "客服答应给我退款", "refund pending for two weeks"; a return was put forward)? When
    told with a question of time ("I already sent it back, when do I get refunded?") it is the
    time that is asked: the knowledge base answers (LABELS.md, *How long, or already too long*)."""
    if reports(text, intent.status_phrases):
        return True
    return tells_what_happened(text) and not asks_when(text)


def _asks_to_act(text: str) -> bool:
    """Does the turn ask for something to be done besides what it reports ("退款还没到账 我要
    退货": the return, asked for)? Asking to be told ("帮我查一下") is no such request."""
    return asks_for_something(text) and request_act(text) == "request"


def _still_waiting(reading: Reading, tools: Mapping[str, ToolSpec]) -> str | None:
    """The newest write of the turn's intent in this session (its id) when it still waits for
    the agent and belongs to no workflow ("登记了吗" while the ticket waits): a workflow's
    waiting write is shown with its workflow."""
    newest = _newest_write(reading, tools)
    if newest is None or not newest.pending or newest.workflow_id:
        return None
    return newest.id


def _of_another_record(text: str) -> bool:
    """Does the turn ask of a record besides the one named ("where is my other order?")? Its
    record is asked for, not searched for in the knowledge base."""
    reference = find_reference(text)
    return reference is not None and reference.kind == "other" and reference.names_a_record


def _has_kb(pack: Pack, tools: Mapping[str, ToolSpec]) -> bool:
    return KB_INTENT in pack.intents and _KB_TOOL in tools


def _show(waiting: Any) -> WorkflowMove:
    return WorkflowMove("show", waiting.name, waiting.id)


def _after_it_went_through(reading: Reading) -> Plan | None:
    """A turn of the intent that asks for nothing, after its workflow's write went through in
    this contact ("it says my password is wrong still", "临时密码还是登不上" after the reset an
    agent approved asked for the phone again, to start another): the workflow is shown as it
    came out (the temporary password sent, to which phone). A request ("reset it again") starts
    another; None then."""
    decided = _decided_workflow(reading)
    if decided is None or not _went_through(reading, decided[1]):
        return None
    # a value of the intent's own (a phone) is for another; another intent's is none of its
    # business ("it's not working" gave a return's reason, "not working", and began a reset)
    if asks_for_something(reading.text) or set(reading.found) & set(reading.intent.slots):
        return None
    return Plan(
        reading.intent.name,
        "a report after the customer's own request went through: its outcome is shown, nothing "
        "proposed",
        workflow=WorkflowMove("show", decided[0], decided[1]),
    )


def _its_outcome_asked(reading: Reading, pack: Pack, tools: Mapping[str, ToolSpec]) -> Plan | None:
    """A knowledge question that names what a write of this contact gave, in its explanation's
    words, after an agent approved it and it ran ("where do I find the temporary password?"
    after the reset went through got the self-service steps): its workflow as it came out."""
    if reading.act != "question":
        return None
    for proposal in reversed(reading.proposals):
        name = proposal.why.get("workflow")
        if proposal.status != "executed" or not proposal.workflow_id or not name:
            continue
        starter = pack.starter(name)
        if starter is None or not _names_its_outcome(reading, proposal, tools):
            return None  # the newest write only: an older one's outcome may be stale
        return Plan(
            starter.name,
            "a question naming what the customer's own request gave, after it went through: "
            "its outcome is shown, nothing proposed",
            workflow=WorkflowMove("show", name, proposal.workflow_id),
        )
    return None


def _start_workflow(reading: Reading, pack: Pack) -> Plan:
    intent = reading.intent
    assert intent.workflow is not None
    definition = pack.workflows[intent.workflow]
    missing = tuple(
        name
        for name, spec in definition.inputs.items()
        if spec.required and name not in reading.slots and spec.generate is None
    )
    if missing:
        return Plan(intent.name, "the workflow needs more from the customer", missing_slots=missing)
    inputs = {name: reading.slots[name] for name in definition.inputs if name in reading.slots}
    return Plan(
        intent.name,
        "an explicit request: the workflow starts; its writes wait for the agent",
        workflow=WorkflowMove("start", intent.workflow, inputs=inputs),
    )


def _write(
    name: str, arguments: dict[str, Any], reading: Reading, tools: Mapping[str, ToolSpec]
) -> ProposedWrite:
    if name != _TICKET_TOOL:
        return ProposedWrite(name, arguments, "a request: the write is proposed to the agent")
    topic = f"{name}:{reading.slots.get('order_id') or '-'}"
    # A complaint made before any order was named is the same complaint once one is ("我要投诉",
    # then "订单…"): its ticket takes the order, no second ticket is put forward.
    unnamed = f"{name}:-"
    # A bare value ("订单…") says which order, not more of the complaint.
    said = "" if is_slot_only(reading.text) else reading.text
    for proposal in reversed(reading.proposals):
        if proposal.topic not in (topic, unnamed):
            continue
        ticket = proposal.result.get("ticket_id") if isinstance(proposal.result, dict) else None
        if proposal.status == "executed" and ticket and _TICKET_NOTE_TOOL in tools:
            return _note_to(
                ticket, arguments, reading, tools,
                "the same complaint again: added to its ticket, no second ticket",
            )  # fmt: skip
        if proposal.pending:
            summary = f"{proposal.arguments.get('summary', '')} / {said}".strip(" /")
            return ProposedWrite(
                name,
                {**arguments, "summary": summary[:2000]},
                "the same complaint again: the pending ticket proposal is updated",
                topic=proposal.topic,
            )
    earlier = _earlier_ticket(reading, topic)
    if earlier is not None and _TICKET_NOTE_TOOL in tools:
        return _note_to(
            earlier.result["ticket_id"], arguments, reading, tools,
            "the same complaint as in an earlier contact: added to the ticket opened then, no "
            "second ticket",
        )  # fmt: skip
    return ProposedWrite(name, arguments, "a complaint: a ticket is proposed", topic=topic)


def _note_to(
    ticket: str,
    arguments: Mapping[str, Any],
    reading: Reading,
    tools: Mapping[str, ToolSpec],
    rule: str,
) -> ProposedWrite:
    """The turn's words as a note to ``ticket`` (the customer's own, opened before)."""
    note = {"ticket_id": ticket, "user_id": arguments.get("user_id"), "note": reading.text}
    return ProposedWrite(
        _TICKET_NOTE_TOOL,
        _fit(tools[_TICKET_NOTE_TOOL], note),
        rule,
        topic=f"{_TICKET_NOTE_TOOL}:{ticket}",
    )


def _earlier_ticket(reading: Reading, topic: str) -> Proposal | None:
    """The ticket an earlier contact opened that this complaint goes on with: the newest about
    the same order (or, like this one, about none); when this one names none, the only ticket
    opened (two are two subjects: which one is the agent's to say, a new ticket is put
    forward for them to reject)."""
    tickets = [
        p for p in reading.earlier
        if p.tool == _TICKET_TOOL and isinstance(p.result, dict) and p.result.get("ticket_id")
    ]  # fmt: skip
    same = [p for p in tickets if p.topic == topic]
    if same:
        return same[-1]
    unnamed = topic == f"{_TICKET_TOOL}:-"
    return tickets[0] if unnamed and len(tickets) == 1 else None


def _arguments(
    spec: ToolSpec, slots: Mapping[str, Any], context: Mapping[str, Any]
) -> dict[str, Any]:
    properties = spec.parameters.get("properties", {})
    return {
        key: slots[key] if key in slots else context[key]
        for key in properties
        if key in slots or key in context
    }


def _fit(spec: ToolSpec, arguments: Mapping[str, Any]) -> dict[str, Any]:
    properties = spec.parameters.get("properties", {})
    return {k: v for k, v in arguments.items() if k in properties and v is not None}


def _slot_schema(pack: Pack, slot: str) -> Mapping[str, Any] | None:
    for intent in pack.intents.values():
        if slot in intent.slots:
            return intent.slots[slot]
    return None


def value_for_schema(text: str, schema: Mapping[str, Any] | None) -> str | None:
    """The token of ``text`` that satisfies a slot's anchored ``pattern`` (a code the customer
    reads out: "验证码是 123456", "it says X7K2"), for the slot a workflow is waiting for.

    Code-like tokens (with a digit, or in capitals) come first; else the last match, since a
    code is read out after the words that announce it ("the code is abcd")."""
    if not schema or "pattern" not in schema:
        return None
    pattern = re.compile(str(schema["pattern"]))
    tokens: list[str] = re.findall(r"[A-Za-z0-9]+", text)
    matches = [token for token in tokens if pattern.fullmatch(token)]
    coded = [t for t in matches if t.isupper() or any(ch.isdigit() for ch in t)]
    if coded:
        return coded[0]
    return matches[-1] if matches else None
