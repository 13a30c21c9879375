"""Build the prompt for one turn: rules, the turn's facts, notes, trimmed context, gated tools.

The prompt carries only what the turn needs: the (already trimmed) conversation, the customer's
notes, what the deterministic path already knows (intent, slots, tool results, failed tools'
fallbacks) and only the tools the intent allows. Conversation roles map to the model's view:
the customer is ``user`` and the human agent the model drafts for is ``assistant``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hermes_desk.llm.messages import Message, ResponderInput

__all__ = ["DEFAULT_RULES", "Prompt", "TurnLike", "build_prompt", "tool_name"]

#: The system rules when the pack gives none (``pack.yaml`` → ``rules``); a pack says what
#: its business is and what a reply must never invent.
DEFAULT_RULES = {
    "zh": (
        "你是客服坐席的助手，为坐席起草下一句回复。只依据下面给出的事实、查询结果和客户备注"
        "作答，不要编造记录、数据或金额信息。需要查询时只调用提供的工具，参数必须严格符合其"
        "JSON Schema；信息不足时先询问缺少的信息。回复简洁、礼貌，使用中文。"
    ),
    "en": (
        "You assist a customer-service agent by drafting the agent's next reply. Use only the "
        "facts, look-up results and customer notes below; never invent records, figures or "
        "amounts. When a look-up is needed call only the tools provided, with arguments that "
        "match their JSON Schema exactly; when information is missing, ask for it. Be brief "
        "and polite."
    ),
}

_LABELS = {
    "zh": {
        "intent": "当前意图",
        "slots": "已识别信息",
        "missing": "还缺少",
        "notes": "客户备注",
        "results": "已查询结果",
        "fallbacks": "无法查询时的兜底话术",
        "workflow": "流程状态",
        "tool": "工具",
        "situation": "实际情况",
        "overdue": "已过承诺日期（今天 {today}）：不要再承诺这个日期，如实说明已超期并致歉",
        "days": "天",
    },
    "en": {
        "intent": "Intent",
        "slots": "Known slots",
        "missing": "Still missing",
        "notes": "Customer notes",
        "results": "Look-up results",
        "fallbacks": "Fallback replies of tools that could not answer",
        "workflow": "Workflow state",
        "tool": "tool",
        "situation": "What actually happened",
        "overdue": "Past the promised date (today is {today}): never promise that date again;"
        " say it is late and apologise",
        "days": "days late",
    },
}

# What a reply must say in the situations that tell the truth about outcomes (SPEC §8 R1).
_SITUATIONS = {
    "zh": {
        "proposed": "操作已提交，等待坐席批准，尚未执行：不要说已经办好",
        "not_found": "没有查到这条记录（或它不属于该客户）：请客户核对",
        "record_not_found": "客户给的订单号没有查到（或不属于该客户）：请客户核对，不要回答别的",
        "proposal_withdrawn": "客户撤回了等待批准的申请，已撤回、不会办理：如实确认",
        "withdraw_too_late": "客户想撤回申请，但客服已经处理，无法撤回：如实说明，不要说已撤回",
        "workflow_withdrawn": "客户不再需要正在等他提供信息的办理（如重置密码），"
        "已取消、不会继续：如实确认",
        "nothing_to_withdraw": "客户说不办了，但这次对话没有提交过这项申请："
        "确认不会办理，不要索要订单号，不要说已撤回",
        "nothing_put_in": "客户问办好了没有，但这次对话还没有提交过任何申请：如实说明，"
        "询问需要办理什么，不要说已经办好",
        "remark_noted": "客户随口说了一句，没有提问也没有要求办理：简短回应，询问还需要什么帮助，"
        "不要说无法处理",
        "nothing_to_go_ahead": "客户让我们去办，但这次对话没有提交过、也没有提出过任何申请："
        "如实说明还没有提交，询问需要办理什么，不要说好的会办",
        "not_put_in_here": "客户让我们去办刚才说的事，但这件事这里没有办法提交"
        "（上一轮已说明怎么办）：如实说明这里无法提交，请客户按上面说的方式办理，不要说好的会办",
        "already_withdrawn": "客户再次说不办了，这项申请之前已经撤回：确认已撤回、不会办理，"
        "不要重新提交",
        "not_going_ahead": "客户说不办了，这项申请客服之前已经驳回（或已过期）：确认不会办理，"
        "不要说没有提交过，不要说已撤回，不要重新提交",
        "turned_down": "客户问起的申请客服已经驳回（或已过期）：如实说明没有获得批准、不会办理，"
        "不要说已经办好，不要承诺有人跟进",
        "refused": "业务系统拒绝了这个操作：如实说明，不要说已经办好",
        "input_rejected": "客户提供的验证码不正确：明确说出来，并告知剩余次数（tries_left）",
        "preference_noted": "客户说明了联系方式偏好：确认已记下，不要创建工单，不要承诺回电",
        "act_closing": "客户在结束对话：礼貌道别",
        "act_thanks": "客户在道谢：礼貌回应",
        "act_greeting": "客户在打招呼：问候并询问需要什么帮助",
        "act_confirmation": "客户表示同意：确认，不要新建任何操作",
        "act_confirmation_pending": "客户表示同意，但操作仍在等待坐席批准：如实说明",
        "act_correction": "客户说刚才弄错了对象：道歉并询问是哪一个",
        "act_human": "客户要求人工或问是不是机器人：如实说明正在与人工客服（坐席本人）对话，"
        "询问需要什么帮助",
    },
    "en": {
        "proposed": "the action is put forward and waits for the agent's approval; it has NOT run:"
        " never say it is done",
        "not_found": "no such record for this customer: ask them to check it",
        "record_not_found": "the order number the customer gave is not on their account: ask"
        " them to check it; answer nothing else",
        "proposal_withdrawn": "the customer took back a request that waited for approval: it is"
        " withdrawn and will not be done; confirm that",
        "withdraw_too_late": "the customer wants to take a request back, but an agent had already"
        " decided it: say so; never say it is withdrawn",
        "workflow_withdrawn": "the customer no longer wants what waited for their input (a password"
        " reset): it is cancelled and will not go on; confirm that",
        "nothing_to_withdraw": "the customer takes back a request that was never put in during this"
        " conversation: confirm nothing will be done; ask for no order number; never say"
        " something was withdrawn",
        "nothing_put_in": "the customer asks whether it is done, but nothing was put in during"
        " this conversation: say so and ask what they want done; never say something is done",
        "remark_noted": "the customer made a remark that asks nothing and asks for nothing:"
        " answer briefly and ask what else they need; never say you cannot help",
        "nothing_to_go_ahead": "the customer tells you to go ahead, but nothing was put in or"
        " offered during this conversation: say nothing is in yet and ask what they want done;"
        " never say it will be done",
        "not_put_in_here": "the customer tells you to go ahead with what they just asked for,"
        " which cannot be put in from here (the last reply said how it is done): say so and"
        " point to those steps; never say it will be done",
        "already_withdrawn": "the customer takes back again a request already withdrawn: confirm"
        " it stays withdrawn and nothing will be done; never put it in again",
        "not_going_ahead": "the customer takes back a request an agent turned down (or that"
        " expired): confirm nothing will be done; never say it was never put in or that it was"
        " withdrawn; never put it in again",
        "turned_down": "the request the customer asks about was turned down by an agent (or"
        " expired): say it was not approved and will not go ahead; never say it is done, never"
        " promise that someone will follow up",
        "refused": "the back office refused the action: say so, never say it is done",
        "input_rejected": "the code the customer gave is wrong: say so and give the tries left"
        " (tries_left)",
        "preference_noted": "the customer stated how to be contacted: confirm it is noted; open"
        " no ticket, promise no call",
        "act_closing": "the customer is closing the conversation: say goodbye politely",
        "act_thanks": "the customer is thanking you: answer politely",
        "act_greeting": "the customer greets you: greet back and ask how to help",
        "act_confirmation": "the customer agrees: acknowledge; start nothing new",
        "act_confirmation_pending": "the customer agrees, but the action still waits for the"
        " agent's approval: say so",
        "act_correction": "the customer says you picked the wrong one: apologise and ask which",
        "act_human": "the customer asks for a person, or whether this is a bot: say truthfully"
        " they are talking to a person (the agent), and ask how to help",
    },
}


class TurnLike(Protocol):
    """A conversation turn (``hermes_desk.sessions.Turn`` fits): role and text."""

    @property
    def role(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Prompt:
    """Everything one model call needs; pass it to :meth:`ModelChain.complete`."""

    messages: tuple[Message, ...]
    tools: tuple[Mapping[str, Any], ...] = ()
    context: ResponderInput | None = None
    response_format: Mapping[str, Any] | None = field(default=None)


def tool_name(schema: Mapping[str, Any]) -> str:
    """The name in an OpenAI function schema (or a bare ``{"name": ...}`` one)."""
    function = schema.get("function")
    if isinstance(function, Mapping):
        return str(function.get("name", ""))
    return str(schema.get("name", ""))


def build_prompt(
    facts: ResponderInput,
    *,
    query: str | None = None,
    history: Sequence[TurnLike | Message] = (),
    tools: Sequence[Mapping[str, Any]] = (),
    allowed_tools: Collection[str] | None = None,
    rules: str | Mapping[str, str] | None = None,
    intent_description: str | None = None,
) -> Prompt:
    """The prompt for one turn.

    Args:
        facts: the turn's structured facts (also handed to the offline link).
        query: the customer's utterance of this turn (appended unless ``history`` ends with it).
        history: the trimmed conversation, oldest first.
        tools: function schemas of the candidate tools (``ToolRegistry.model_schemas()``).
        allowed_tools: the intent's tool list; ``None`` keeps every given tool, empty keeps none.
        rules: the system rules, one text or one per language (the pack's ``rules``; default
            :data:`DEFAULT_RULES` for the language).
        intent_description: the pack's description of the intent.
    """
    language = facts.language if facts.language in _LABELS else "en"
    labels = _LABELS[language]
    if isinstance(rules, Mapping):
        rules = rules.get(facts.language) or rules.get(language)
    lines = [rules or DEFAULT_RULES[language], ""]
    intent = facts.intent + (f"（{intent_description}）" if intent_description else "")
    lines.append(f"{labels['intent']}: {intent}")
    if facts.slots:
        lines.append(f"{labels['slots']}: {_json(facts.slots)}")
    if facts.missing_slots:
        lines.append(f"{labels['missing']}: {', '.join(facts.missing_slots)}")
    if facts.workflow_state:
        lines.append(f"{labels['workflow']}: {facts.workflow_state}")
    situation = _SITUATIONS[language].get(facts.situation or "")
    if situation:
        lines.append(f"{labels['situation']}: {situation}")
    if facts.overdue:
        lines.append(labels["overdue"].format(today=facts.today or "—") + ":")
        lines.extend(f"- {name}: {days} {labels['days']}" for name, days in facts.overdue.items())
    if facts.notes:
        lines.append(f"{labels['notes']}:")
        lines.extend(f"- {note}" for note in facts.notes)
    if facts.tool_results:
        lines.append(f"{labels['results']}:")
        lines.extend(f"- {name}: {_json(_plain(r))}" for name, r in facts.tool_results.items())
    if facts.failed_fallbacks:
        lines.append(f"{labels['fallbacks']}:")
        lines.extend(f"- {text}" for text in facts.failed_fallbacks)
    messages = [Message.system("\n".join(lines))]
    messages.extend(_message(turn, labels["tool"]) for turn in history)
    if query is not None and not (
        messages[-1].role == "user" and messages[-1].content == query and len(messages) > 1
    ):
        messages.append(Message.user(query))
    chosen = (
        tuple(tools)
        if allowed_tools is None
        else tuple(t for t in tools if tool_name(t) in allowed_tools)
    )
    return Prompt(messages=tuple(messages), tools=chosen, context=facts)


def _message(turn: TurnLike | Message, tool_label: str) -> Message:
    if isinstance(turn, Message):
        return turn
    role = turn.role
    if role == "user":
        return Message.user(turn.text)
    if role == "system":
        return Message.system(turn.text)
    name = getattr(turn, "name", None)
    if role == "tool":  # a past look-up, as context (native tool messages need their call)
        return Message.assistant(f"[{tool_label} {name or ''}] {turn.text}".strip())
    if getattr(turn, "tool_call_id", None):
        return Message.assistant(f"[{tool_label} {name or ''}({turn.text})]")
    return Message.assistant(turn.text)


def _plain(value: Any) -> Any:
    data = getattr(value, "result", None) if hasattr(value, "status") else None
    return data if data is not None else value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
