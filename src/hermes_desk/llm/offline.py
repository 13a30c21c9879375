"""The offline responder: the deterministic last link of every model chain.

It answers from the pack's reply templates (``replies.yaml``), the parsed intent, slots, tool
results, the failed tools' fallback replies, workflow state and memory notes. No model, no
network, no randomness: the same input always gives the same reply.

Templates are ``str.format`` strings per intent and situation::

    replies:
      order_status:
        ok: "订单 {order_id}：{get_shipment.status_text}，预计 {get_shipment.eta} 送达。"
        missing_slots: "麻烦您提供一下 12 位订单号。"
        tool_failed: "{fallback}"

Fields are slots (``{order_id}``), tool results by tool name with dotted paths
(``{get_shipment.eta}``, list items by index: ``{list_payment_methods.methods.0.label}``, all
items joined: ``{list_payment_methods.methods.*.label}``),
``{fallback}``, ``{notes}``, ``{intent}`` and ``{missing_slots}``; ``{field!t}`` shows a
back-office value through the pack's ``terms`` in the reply's language. A template with a field that
cannot be resolved is passed over for the next candidate situation; if none resolves fully, the
first one is rendered with a placeholder. A template may also be a ``{language: text}`` mapping.

An ``ok`` reply may have variants by what a tool found: ``ok_<status>`` is tried first when a
tool result's ``status`` is ``<status>`` (``ok_delivered``, ``ok_lost``), so a parcel that has
arrived, or never will, is not promised for a date (SPEC §8 R1); then ``ok_<tool>`` for each tool
that answered (``ok_get_order``: the order found when its shipment was not). Before them,
``ok_overdue`` when a record's promised date has passed while it is still on its way (the
tool's ``due``), with ``{days_overdue}``: a past date is never promised again. ``workflow_failed``
has the status variants too (``workflow_failed_refunded``: a return asked for a refunded order,
stopped by the workflow's ``expect`` before anything was put forward). ``workflow_completed``
tries them after its own template, which names every write's result: a return whose refund
was skipped (the goods are still with the customer) is said by ``workflow_completed_delivered``.
A pack's own situation has variants the same way (``answer_for_order_get_order``: a knowledge
answer about an order that was looked up), then falls back to ``ok``.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_desk.llm.messages import Message, ModelResponse, ResponderInput, Usage

__all__ = [
    "PLACEHOLDER",
    "SITUATIONS",
    "OfflineResponder",
    "situation_for",
]

PLACEHOLDER = "—"
OFFLINE = "offline"

#: Known situations, and where each one falls back to when the pack has no template for it.
SITUATIONS: dict[str, tuple[str, ...]] = {
    "ok": (),
    "missing_slots": ("ok",),
    "tool_failed": ("ok",),
    "waiting_input": ("missing_slots", "ok"),
    "workflow_completed": ("ok",),
    "workflow_failed": ("tool_failed", "ok"),
    "workflow_escalated": ("workflow_failed", "tool_failed", "ok"),
    "workflow_running": ("ok",),
    # Never fall back to "ok": an "ok" template may say the write is done, and it is not.
    "proposed": (),
    # Asked about a write put forward in an earlier turn that still waits ("退款了吗"): it is in
    # and waits — not "好的，我已提交" as if the question had asked for it.
    "still_proposed": ("proposed",),
    # …after an earlier write of the same workflow went through ("is it done?" once the return
    # is open and its refund waits): what is done (``{done}``), then what waits.
    "next_step_proposed": ("still_proposed", "proposed"),
    "not_found": (),
    # The record a turn named is not the customer's (a number only, or a report of how it
    # stands): the number to check, where an intent's not_found may speak of something else
    # (a knowledge search that found nothing).
    "record_not_found": ("not_found",),
    "refused": ("tool_failed",),
    # What the customer gave a waiting workflow was rejected: never "the code was sent" again.
    "input_rejected": (),
    # The conversation's own situations (the pack's ``conversation`` replies).
    "act_greeting": (),
    "act_thanks": (),
    "act_closing": (),
    "act_confirmation": (),
    "act_confirmation_pending": ("act_confirmation",),
    "act_correction": (),
    "act_human": (),
    "preference_noted": (),
    # The customer took back a request waiting for the agent; or an agent had decided it first:
    # never "withdrawn" then, and never "ok".
    "proposal_withdrawn": (),
    "withdraw_too_late": (),
    # A workflow that waited for the customer, taken back by them; or nothing to take back.
    "workflow_withdrawn": (),
    "nothing_to_withdraw": (),
    # "Is it done?" with nothing put in during the conversation: said so, never "好的".
    "nothing_put_in": (),
    # "Go ahead" with nothing put in or offered: said so, never "All right." (as if it would be
    # done); without a template of its own, "nothing put in".
    "nothing_to_go_ahead": ("nothing_put_in",),
    # "Go ahead" with what no tool here does ("I want to cancel order …", answered how): said
    # it is not put in here, never "tell me what you would like done" (it was just said).
    "not_put_in_here": (),
    # A remark later in a conversation that asks nothing ("找到了 在快递柜"): taken as said,
    # never "I cannot help with that one".
    "remark_noted": (),
    # Taken back again after it was withdrawn: never put forward anew, never "never put in".
    "already_withdrawn": (),
    # Taken back after an agent turned it down: it was put in, so never "never put in".
    "not_going_ahead": (),
    # Asked about after an agent turned it down (or it expired): it will not be done — never
    # "it did not go through, a colleague will follow up", which nobody was asked to.
    "turned_down": (),
    # Not received, so sent again ("收不到验证码"): said as sent anew, never the first "已发送" a
    # third time; without a template of its own, the slot's waiting reply.
    "sent_again": (),
    # The customer said how their own request stands ("退款还没到账"): its record's status,
    # by ``status_reported_<status>`` first.
    "status_reported": (),
    # …without the record's number ("退了多少钱"): asked for it, by the intent's missing_slots
    # reply when it has none of its own (a policy question's asks which policy).
    "record_missing": ("missing_slots",),
}

_WORKFLOW_SITUATION = {
    "waiting_input": "waiting_input",
    "completed": "workflow_completed",
    "failed": "workflow_failed",
    "escalated": "workflow_escalated",
    "running": "workflow_running",
    "pending": "workflow_running",
}

_GENERIC = {
    "zh": {
        "ok": "好的，我来帮您处理。请问还有什么可以帮您？",
        "missing_slots": "为了帮您处理，请提供：{missing_slots}。",
        "tool_failed": "抱歉，系统暂时无法查询，请稍后再试或转人工处理。",
        "workflow_failed": "抱歉，办理没有成功，我帮您转人工处理。",
        "workflow_escalated": "已为您转接人工客服，请稍候。",
        "proposed": "我已提交办理申请：{proposal}。客服确认后会马上为您处理。",
        "still_proposed": "您的申请（{proposal}）已经提交，正在等待确认，确认后会马上为您处理。",
        "not_found": "抱歉，没有查到相关记录，请您核对一下号码好吗？",
        "refused": "抱歉，这个操作暂时无法办理，我帮您转给专员确认。",
        "input_rejected": "抱歉，您提供的信息没有通过验证，还可以再试 {tries_left} 次。",
        "act_greeting": "您好，请问有什么可以帮您？",
        "act_thanks": "不客气，请问还有其他问题吗？",
        "act_closing": "感谢您的耐心，祝您生活愉快，再见！",
        "act_confirmation": "好的。请问还有什么可以帮您？",
        "act_correction": "抱歉，是我弄错了，请问您指的是哪一个？",
        "act_human": "您好，我是人工客服，请问有什么可以帮您？",
        "preference_noted": "好的，已为您记下：{preferences}。",
        "proposal_withdrawn": "好的，已为您撤回：{proposal}。不会办理。",
        "withdraw_too_late": "抱歉，这个申请客服已经处理，无法撤回：{proposal}。我请专员跟进。",
        "workflow_withdrawn": "好的，已为您取消，不会继续办理。请问还有什么可以帮您？",
        "nothing_to_withdraw": "好的，不会办理。这次没有为您提交过这项申请，无需撤回。",
        "nothing_put_in": "这次还没有为您提交过申请。请问需要办理什么？",
        "remark_noted": "明白了。请问还有什么可以帮您？",
        "not_put_in_here": "这项我这边没法直接为您提交，请按上面说的方式办理。",
        "already_withdrawn": "好的，这项申请已经为您撤回，不会办理。请问还有什么可以帮您？",
        "not_going_ahead": "好的，这项申请不会办理。请问还有什么可以帮您？",
        "turned_down": "抱歉，这项申请没有获得批准，这次不会办理。请问还有什么可以帮您？",
        "sent_again": "好的，已为您重新发送，请稍等查收，收到后告诉我。",
        "status_reported": "我已为您查到这笔订单，马上为您核实进度。",
    },
    "en": {
        "ok": "Sure, let me help you with that. Is there anything else I can do for you?",
        "missing_slots": "To help you with that, could you give me: {missing_slots}?",
        "tool_failed": "Sorry, the system cannot answer right now. Please try again shortly.",
        "workflow_failed": "Sorry, that did not go through; let me pass you to a colleague.",
        "workflow_escalated": "I am passing you to a human colleague, one moment please.",
        "proposed": "I have put this through for confirmation: {proposal}. "
        "It will be done as soon as it is confirmed.",
        "still_proposed": "Your request ({proposal}) is in and waiting for confirmation; "
        "it will be done as soon as it is confirmed.",
        "not_found": "Sorry, I could not find that record. Could you check the number for me?",
        "refused": "Sorry, that cannot be done right now; let me pass it to a colleague.",
        "input_rejected": "Sorry, that did not pass the check; you have {tries_left} more tries.",
        "act_greeting": "Hello! How can I help you today?",
        "act_thanks": "You are welcome. Is there anything else?",
        "act_closing": "Thank you for your patience. Have a great day, goodbye!",
        "act_confirmation": "All right. Is there anything else I can help with?",
        "act_correction": "Sorry, my mistake. Which one do you mean?",
        "act_human": "Hello, you are talking to a person. How can I help you?",
        "preference_noted": "Noted: {preferences}.",
        "proposal_withdrawn": "All right, I have withdrawn it: {proposal}. Nothing will be done.",
        "withdraw_too_late": "Sorry, that request was already decided and cannot be withdrawn:"
        " {proposal}. Let me ask a colleague to follow up.",
        "workflow_withdrawn": "All right, I have cancelled it; it will not go on. Anything else?",
        "nothing_to_withdraw": "All right, nothing will be done: no such request was put in,"
        " so there is nothing to withdraw.",
        "nothing_put_in": "Nothing has been put in for you yet. What would you like done?",
        "remark_noted": "I see. Is there anything else I can help with?",
        "not_put_in_here": "That is not something I can put in for you from here; please follow"
        " the steps above.",
        "already_withdrawn": "All right, that request is already withdrawn; nothing will be done."
        " Is there anything else?",
        "not_going_ahead": "All right, that request will not go ahead; nothing will be done."
        " Is there anything else?",
        "turned_down": "Sorry, that request was not approved, so it will not go ahead."
        " Is there anything else?",
        "sent_again": "All right, I have sent it again; please tell me once it arrives.",
        "status_reported": "I have found that order and will check how it stands for you.",
    },
}

Templates = Mapping[str, Mapping[str, Any]]


def situation_for(facts: ResponderInput) -> str:
    """The reply situation a turn is in, derived from its facts (unless forced)."""
    if facts.situation:
        return facts.situation
    if facts.workflow_state == "waiting_input" and facts.waiting_for:
        # ``waiting_<slot>`` (e.g. ``waiting_captcha_answer``), falling back to waiting_input.
        return f"waiting_{facts.waiting_for}"
    if facts.workflow_state and facts.workflow_state in _WORKFLOW_SITUATION:
        return _WORKFLOW_SITUATION[facts.workflow_state]
    if facts.failed_fallbacks:
        return "tool_failed"
    if facts.missing_slots:
        return "missing_slots"
    return "ok"


class _Unresolved(LookupError):
    pass


class _Formatter(string.Formatter):
    """``str.format`` with dotted look-ups into mappings/lists and no attribute tricks."""

    def __init__(
        self,
        fields: Mapping[str, Any],
        strict: bool,
        terms: Mapping[str, Mapping[str, str]] | None = None,
        language: str = "zh",
    ) -> None:
        self._fields = fields
        self._strict = strict
        self._terms = terms or {}
        self._language = language

    def get_field(self, field_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        value = _lookup(self._fields, field_name)
        if value is None:
            if self._strict:
                raise _Unresolved(field_name)
            return PLACEHOLDER, field_name
        return value, field_name

    def format_field(self, value: Any, format_spec: str) -> str:
        if not format_spec and isinstance(value, float) and value.is_integer():
            value = int(value)  # an amount of 129.0 reads "129", as people write it
        try:
            return format(value, format_spec)
        except (TypeError, ValueError):
            return str(value)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "t":  # a back-office term, in the reply's language
            return self._term(value)
        return value if conversion is None else super().convert_field(value, conversion)

    def _term(self, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        parts = value.split("、")
        shown = [self._one_term(p) for p in parts]
        return ("、" if self._language == "zh" else ", ").join(shown)

    def _one_term(self, text: str) -> str:
        exact = self._terms.get(text)
        if exact is not None:
            return exact.get(self._language, text)
        composed = _composed(text, self._terms, self._language)
        return text if composed is None else composed


def _composed(text: str, terms: Mapping[str, Mapping[str, str]], language: str) -> str | None:
    """A value made of terms ("招商银行储蓄卡（尾号 6217）": a bank, a card, its tail) shown piece
    by piece, the longest term first at each place; ``None`` unless every Han character is in a
    term (a half-translated value is worse than the original). Words are spaced apart."""
    if not _has_cjk(text) or language == "zh":
        return None
    keys = sorted((k for k in terms if k and k in text), key=len, reverse=True)
    pieces: list[str] = []
    at = 0
    while at < len(text):
        key = next((k for k in keys if text.startswith(k, at)), None)
        if key is not None:
            piece, at = terms[key].get(language, key), at + len(key)
        elif _has_cjk(text[at]):
            return None
        else:
            piece, at = text[at], at + 1
        if pieces and piece[:1].isalnum() and pieces[-1][-1:].isalnum() and len(piece) > 1:
            pieces.append(" ")
        pieces.append(piece)
    return " ".join("".join(pieces).split())


def _lookup(fields: Mapping[str, Any], path: str) -> Any:
    head, _, rest = path.partition(".")
    if head not in fields:
        return None
    return _resolve(fields[head], rest.split(".") if rest else [])


def _resolve(value: Any, parts: Sequence[str]) -> Any:
    """Follow a dotted path; ``*`` maps the rest of the path over a list and joins the values
    (``{list_payment_methods.methods.*.label}`` → "支付宝、微信支付")."""
    for index, part in enumerate(parts):
        if part == "*":
            if not isinstance(value, (list, tuple)):
                return None
            items = [_resolve(item, parts[index + 1 :]) for item in value]
            texts = [str(item) for item in items if item is not None]
            if not texts:
                return None
            return ("、" if any(_has_cjk(t) for t in texts) else ", ").join(texts)
        value = _step(value, part)
        if value is None:
            return None
    if value == "" or value == [] or value == {}:
        return None
    return value


def _step(value: Any, part: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(part)
    if isinstance(value, (list, tuple)):
        return value[int(part)] if part.isdigit() and int(part) < len(value) else None
    if part.startswith("_"):
        return None
    data = getattr(value, "data", None)  # a ToolResult-like object: look into its data
    if isinstance(data, Mapping) and not hasattr(value, part):
        return data.get(part)
    return getattr(value, part, None)


def _fields(facts: ResponderInput) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name, result in facts.tool_results.items():
        fields[name] = result
    fields.update(facts.slots)  # a slot and a tool never share a name in a sane pack; slots win
    fields["intent"] = facts.intent
    fields["notes"] = "；".join(facts.notes) if facts.language == "zh" else "; ".join(facts.notes)
    fields["fallback"] = facts.failed_fallbacks[0] if facts.failed_fallbacks else None
    sep = "、" if facts.language == "zh" else ", "
    fields["missing_slots"] = sep.join(facts.missing_slots) if facts.missing_slots else None
    fields["days_overdue"] = max(facts.overdue.values()) if facts.overdue else None
    return fields


class OfflineResponder:
    """Deterministic replies from templates; a :class:`~hermes_desk.llm.model.ChatModel`.

    Args:
        replies: ``{intent: {situation: template}}`` — the pack's ``replies.yaml`` content under
            ``replies``. A template is a string or a ``{language: string}`` mapping.
        default_intent: the intent whose templates are used for intents the pack does not reply
            to (``None``: the built-in generic replies).
        conversation: the pack's replies of the conversation itself (``act_thanks``,
            ``preference_noted``…), used after the intent's own template for that situation.
        terms: ``{value: {language: text}}`` for fields written ``{field!t}``.
    """

    def __init__(
        self,
        replies: Templates | None = None,
        *,
        default_intent: str | None = None,
        conversation: Mapping[str, Any] | None = None,
        terms: Mapping[str, Mapping[str, str]] | None = None,
    ):
        self._replies: Templates = replies or {}
        self._default_intent = default_intent
        self._conversation: Mapping[str, Any] = conversation or {}
        self._terms: Mapping[str, Mapping[str, str]] = terms or {}

    @property
    def name(self) -> str:
        return OFFLINE

    def reply(self, facts: ResponderInput) -> str:
        """The reply for one turn's facts.

        Order: the pack's templates for the situation and its fallbacks, fully resolved; else
        a failed tool's fallback reply; else the pack's first template with placeholders; else
        the built-in generic reply for the language.
        """
        situation = situation_for(facts)
        if situation == "sent_again" and facts.waiting_for:
            waiting = f"waiting_{facts.waiting_for}"
            order = (situation, waiting, "waiting_input", *SITUATIONS["waiting_input"])
        elif situation in SITUATIONS:
            order = (situation, *SITUATIONS[situation])
        elif situation.startswith("waiting_"):  # waiting for one slot: its own, then generic
            order = (situation, "waiting_input", *SITUATIONS["waiting_input"])
        else:  # a pack's own situation (``answer_for_order``): its variants, then ``ok``
            order = (*_status_variants(facts.tool_results, situation), situation, "ok")
        if situation == "ok":
            overdue = ("ok_overdue",) if facts.overdue else ()
            order = (*overdue, *_status_variants(facts.tool_results), *order)
        elif situation in ("workflow_failed", "not_found", "status_reported"):
            # why, when a record's status says it; what was found, when a search found nothing
            # after the record (``not_found_get_order``: the order's status, then no article)
            order = (*_status_variants(facts.tool_results, situation), *order)
        elif situation == "workflow_completed":
            # the whole outcome first (it names every write's result); when a write was skipped
            # (a return's refund waits for the goods) what the steps that ran say, by status
            order = (situation, *_status_variants(facts.tool_results, situation), *order[1:])
        fields = _fields(facts)
        pack = self._candidates(self._pack_templates(facts.intent), order, facts.language)
        pack += [
            t for t in self._candidates(self._conversation, order, facts.language) if t not in pack
        ]
        terms, language = self._terms, facts.language
        rendered = _first_rendered(pack, fields, True, terms, language)
        if rendered is not None:
            return rendered
        # A failed tool's fallback is a complete reply in itself: better than a placeholder —
        # when it speaks the customer's language.
        spoken = [f for f in facts.failed_fallbacks if _language_of(f) == facts.language]
        if spoken:
            return spoken[0]
        rendered = _first_rendered(pack, fields, False, terms, language)
        if rendered is not None:
            return rendered
        generic = _GENERIC.get(facts.language, _GENERIC["en"])
        rendered = _first_rendered(
            self._candidates(generic, order, facts.language), fields, strict=False
        )
        return rendered if rendered is not None else generic["ok"]

    def _pack_templates(self, intent: str) -> Mapping[str, Any]:
        if intent in self._replies:
            return self._replies[intent]
        if self._default_intent and self._default_intent in self._replies:
            return self._replies[self._default_intent]
        return {}

    @staticmethod
    def _candidates(source: Mapping[str, Any], order: Sequence[str], language: str) -> list[str]:
        out: list[str] = []
        for situation in order:
            template = _pick_language(source.get(situation), language)
            if template is not None and template not in out:
                out.append(template)
        return out

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        response_format: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        context: ResponderInput | None = None,
    ) -> ModelResponse:
        """Answer as a chat model would: a reply, never a tool call.

        Asked for JSON (slot extraction) it returns ``{}`` — no model slots; the deterministic
        extractors already ran.
        """
        if response_format is not None:
            content = "{}"
        elif context is not None:
            content = self.reply(context)
        else:
            language = "zh" if any(_has_cjk(m.content) for m in messages) else "en"
            content = self.reply(ResponderInput(intent="", language=language))
        return ModelResponse(
            content=content, model=OFFLINE, link=OFFLINE, usage=Usage(), finish_reason="stop"
        )


def _status_variants(results: Mapping[str, Any], situation: str = "ok") -> tuple[str, ...]:
    """``<situation>_<status>`` for each tool result that says its ``status``, then
    ``<situation>_<tool>`` for each tool, in the results' order."""
    statuses = [
        f"{situation}_{status}"
        for result in results.values()
        if isinstance(result, Mapping)
        and isinstance(status := result.get("status"), str)
        and status.isidentifier()
    ]
    return (*statuses, *(f"{situation}_{tool}" for tool in results))


def _first_rendered(
    templates: Sequence[str],
    fields: Mapping[str, Any],
    strict: bool,
    terms: Mapping[str, Mapping[str, str]] | None = None,
    language: str = "zh",
) -> str | None:
    for template in templates:
        try:
            return _Formatter(fields, strict, terms, language).format(template)
        except _Unresolved:
            continue
        except (ValueError, IndexError, KeyError, AttributeError):  # broken template: next one
            continue
    return None


def _pick_language(template: Any, language: str) -> str | None:
    if isinstance(template, str):
        return template
    if isinstance(template, Mapping) and template:
        chosen = template.get(language)
        if chosen is None:
            chosen = next(iter(template.values()))
        return chosen if isinstance(chosen, str) else None
    return None


def _language_of(text: str) -> str:
    return "zh" if _has_cjk(text) else "en"


def _has_cjk(text: str | None) -> bool:
    return bool(text) and any("\u4e00" <= ch <= "\u9fff" for ch in text or "")
