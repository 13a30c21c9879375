"""What happened in a contact, gathered from its record, and the offline summary written from it.

The facts come from what the service stored — the (masked) transcript with each customer turn's
intent and slots, the tool calls, the proposals and their decisions, the workflows — so a summary
never holds a clear personal number, whoever writes it. The offline summary is deterministic:
the same contact gives the same text, in the conversation's language (Chinese or English).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from hermes_desk.actions import Proposal
from hermes_desk.packs import Pack, PackLabels
from hermes_desk.sessions import Session
from hermes_desk.workflows import WorkflowView
from hermes_desk.workflows.machine import APPROVAL_PREFIX

__all__ = ["ContactFacts", "SummaryKind", "gather", "offline_summary", "outcome_of"]

SummaryKind = Literal["after_contact", "transfer"]

_QUESTION_INTENTS = frozenset({"kb_question", "payment_methods"})
_ACTIVE_WORKFLOW = frozenset({"pending", "running", "waiting_input"})
# How a summary names the usual slots (first, in this order); the pack's other slots follow,
# named by its labels.yaml.
_SLOT_NAMES: dict[str, dict[str, str]] = {
    "order_id": {"zh": "订单号", "en": "order"},
    "phone": {"zh": "手机号", "en": "phone"},
    "amount": {"zh": "金额", "en": "amount"},
    "date": {"zh": "日期", "en": "date"},
    "reason": {"zh": "原因", "en": "reason"},
}
_STATUS_NAMES: dict[str, dict[str, str]] = {
    "proposed": {"zh": "待批准", "en": "awaiting approval"},
    "executing": {"zh": "已批准，执行中", "en": "approved, running"},
    "approved": {"zh": "已批准", "en": "approved"},
    "executed": {"zh": "已执行", "en": "executed"},
    "failed": {"zh": "执行失败", "en": "failed"},
    "rejected": {"zh": "已拒绝", "en": "rejected"},
    "expired": {"zh": "已过期", "en": "expired"},
    "withdrawn": {"zh": "客户已撤回", "en": "withdrawn by the customer"},
    "completed": {"zh": "已完成", "en": "completed"},
    "succeeded": {"zh": "已完成", "en": "completed"},
    "escalated": {"zh": "已升级", "en": "escalated"},
    "waiting_input": {"zh": "等待客户", "en": "waiting for the customer"},
    "waiting_approval": {"zh": "等待坐席确认", "en": "waiting for the agent's approval"},
    "running": {"zh": "进行中", "en": "running"},
    "pending": {"zh": "进行中", "en": "running"},
    "cancelled": {"zh": "已取消", "en": "cancelled"},
    "ok": {"zh": "成功", "en": "ok"},
}
_WAITING_NAMES: dict[str, dict[str, str]] = {
    "sms_code": {"zh": "短信验证码", "en": "SMS code"},
    "order_id": {"zh": "订单号", "en": "order number"},
    "phone": {"zh": "手机号", "en": "phone number"},
}
_SENTIMENT_NAMES = {
    "negative": {"zh": "负面", "en": "negative"},
    "neutral": {"zh": "中性", "en": "neutral"},
    "positive": {"zh": "正面", "en": "positive"},
}


@dataclass(slots=True)
class ContactFacts:
    """What happened, in the words a summary uses.

    Attributes:
        language: the conversation's language (``zh`` / ``en``).
        customer_turns: how many times the customer spoke.
        intents: the customer's intents in the order they came up (labels in ``language``).
        slots: key slots (masked where personal), by their names in ``language``.
        lookups: read tools called, each ``{"tool", "status"}``.
        actions: writes proposed, each ``{"tool", "status", "explanation"}``.
        workflows: each ``{"name", "status", "waiting_for"}``.
        open_items: what is still waiting (a proposal, a workflow, the customer).
        sentiment: the customer turns' sentiment labels, in order (empty when not known).
        last_customer: the customer's last words (masked), for a transfer.
    """

    language: str
    customer_turns: int = 0
    intents: list[str] = field(default_factory=list)
    intent_ids: list[str] = field(default_factory=list)
    slots: dict[str, str] = field(default_factory=dict)
    lookups: list[dict[str, str]] = field(default_factory=list)
    actions: list[dict[str, str]] = field(default_factory=list)
    workflows: list[dict[str, Any]] = field(default_factory=list)
    open_items: list[str] = field(default_factory=list)
    sentiment: list[str] = field(default_factory=list)
    last_customer: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _language(session: Session) -> str:
    said = [t for t in session.turns if t.role == "user"]
    marked = [t.meta.get("language") for t in said if t.meta and t.meta.get("language")]
    if marked:
        zh = sum(1 for lang in marked if lang == "zh")
        return "zh" if zh * 2 >= len(marked) else "en"
    text = "".join(t.text for t in said)
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    letters = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return "zh" if cjk * 3 >= letters or not text else "en"


def _intent_label(pack: Pack, name: str, language: str) -> str:
    spec = pack.intents.get(name)
    if spec is None or not spec.description:
        return name
    zh, _, en = spec.description.partition(" / ")
    label = (zh if language == "zh" else en or zh).strip()
    # The description's first clause names the intent; the rest explains it.
    for stop in ("（", "(", " — ", "，", ","):
        label = label.split(stop, 1)[0]
    return label.strip() or name


def _sentiment_label(meta: dict[str, Any] | None) -> str | None:
    value = (meta or {}).get("sentiment")
    if isinstance(value, dict):
        value = value.get("label")
    return value if isinstance(value, str) and value in _SENTIMENT_NAMES else None


def _tool_status(text: str) -> str:
    try:
        payload = json.loads(text)
    except ValueError:
        return "ok"
    if isinstance(payload, dict) and set(payload) == {"status"}:
        return str(payload["status"])
    return "ok"


def gather(
    session: Session,
    pack: Pack,
    *,
    proposals: Sequence[Proposal] = (),
    workflows: Sequence[WorkflowView] = (),
    labels: PackLabels | None = None,
) -> ContactFacts:
    """The facts of ``session`` (its stored, masked record) and what it led to; ``labels``
    name the pack's own slots."""
    language = _language(session)
    facts = ContactFacts(language=language)
    writes = {p.tool for p in proposals}
    for turn in session.turns:
        if turn.role == "user":
            facts.customer_turns += 1
            facts.last_customer = turn.text
            intent = (turn.meta or {}).get("intent")
            if isinstance(intent, str) and intent != "oos" and intent not in facts.intent_ids:
                facts.intent_ids.append(intent)
                facts.intents.append(_intent_label(pack, intent, language))
            label = _sentiment_label(turn.meta)
            if label is not None:
                facts.sentiment.append(label)
        elif turn.role == "tool" and turn.name and turn.name not in writes:
            lookup = {"tool": turn.name, "status": _tool_status(turn.text)}
            if lookup not in facts.lookups:  # the same look-up again adds nothing to tell
                facts.lookups.append(lookup)
    for name in _summary_slots(pack):
        value = session.slots.get(name)
        if value not in (None, ""):
            said = _SLOT_NAMES.get(name, {}).get(language)
            facts.slots[said or (labels.label("slots", name, language) if labels else name)] = str(
                value
            )
    for proposal in proposals:
        facts.actions.append(
            {
                "tool": proposal.tool,
                "status": proposal.status,
                "explanation": proposal.explanation,
            }
        )
        if proposal.status == "proposed":
            facts.open_items.append(_open_proposal(proposal, language))
    # A workflow that ended because the customer took it back (its write, or itself while it
    # waited for them) did not fail; nor did one whose write an agent turned down: it reads
    # as that decision (rejected, expired), not "执行失败".
    withdrawn = {p.workflow_id for p in proposals if p.status == "withdrawn" and p.workflow_id}
    decided = {p.workflow_id: p.status for p in proposals if p.turned_down and p.workflow_id}
    for view in workflows:
        taken_back = view.withdrawn or view.id in withdrawn
        status = view.status
        if view.status == "failed" and taken_back:
            status = "withdrawn"
        elif view.status == "failed" and (view.turned_down or view.id in decided):
            status = decided.get(view.id, "rejected")
        facts.workflows.append(
            {"name": view.name, "status": status, "waiting_for": view.waiting_for}
        )
        asked = any(p.pending and p.workflow_id == view.id for p in proposals)
        if view.status in _ACTIVE_WORKFLOW and not asked:  # a pending proposal says it already
            facts.open_items.append(_open_workflow(view, pack, language))
    return facts


def _summary_slots(pack: Pack) -> list[str]:
    """The slots a summary tells: the usual ones, then every other slot the pack's intents
    declare — but not one read only while a workflow waits for it (``extractor: none``: a code)."""
    declared = {
        name: schema.get("extractor")
        for spec in pack.intents.values()
        for name, schema in spec.slots.items()
    }
    rest = [n for n, extractor in declared.items() if extractor != "none" and n not in _SLOT_NAMES]
    return [*_SLOT_NAMES, *rest]


def _open_proposal(proposal: Proposal, language: str) -> str:
    what = proposal.explanation or proposal.tool
    return f"待坐席批准：{what}" if language == "zh" else f"awaiting the agent's approval: {what}"


def _open_workflow(view: WorkflowView, pack: Pack, language: str) -> str:
    name = _workflow_label(view, pack, language)
    waiting = view.waiting_for
    if waiting and waiting.startswith("approval:"):
        return (
            f"{name}等待坐席批准" if language == "zh" else f"{name} waits for the agent's approval"
        )
    if waiting:
        said = _WAITING_NAMES.get(waiting, {}).get(language, waiting)
        if language == "zh":
            return f"{name}等待客户提供{said}"
        return f"{name} waits for the customer's {said}"
    return f"{name}进行中" if language == "zh" else f"{name} still running"


def _workflow_label(view: WorkflowView, pack: Pack, language: str) -> str:
    for name, spec in pack.intents.items():
        if spec.workflow == view.name:
            return _intent_label(pack, name, language)
    return view.name


def outcome_of(facts: ContactFacts, kind: SummaryKind) -> str:
    """What the contact came to, as one of the pack dispositions' ``when`` outcomes."""
    if kind == "transfer":
        return "transferred"
    if any(w["status"] == "escalated" for w in facts.workflows):
        return "escalated"
    if facts.open_items:
        return "pending_customer"
    done = [a for a in facts.actions if a["status"] == "executed"]
    done += [w for w in facts.workflows if w["status"] in ("completed", "succeeded")]
    failed = [a for a in facts.actions if a["status"] in ("failed", "rejected", "expired")]
    failed += [
        w for w in facts.workflows if w["status"] in ("failed", "cancelled", "rejected", "expired")
    ]
    if failed and not done:
        return "unresolved"
    if done or any(x["status"] == "ok" for x in facts.lookups):
        return "resolved"
    if facts.customer_turns == 0 or set(facts.intent_ids) <= _QUESTION_INTENTS:
        return "informational"
    return "resolved"


def _status(status: str, language: str) -> str:
    return _STATUS_NAMES.get(status, {}).get(language, status)


def _trend(labels: Sequence[str], language: str) -> str:
    names = [_SENTIMENT_NAMES[label][language] for label in labels]
    if len(names) == 1:
        return names[0]
    return f"{names[0]} → {names[-1]}"


def offline_summary(facts: ContactFacts, kind: SummaryKind, *, disposition: str) -> str:
    """The deterministic summary of ``facts``, in ``facts.language``; ``disposition`` is the
    proposed disposition's label."""
    zh = facts.language == "zh"
    sep, end = ("；", "。") if zh else ("; ", ".")
    parts: list[str] = []
    if kind == "transfer":
        parts.append("转接摘要" if zh else "Handover")
    if facts.intents:
        topics = "，".join(facts.intents) if zh else "; ".join(facts.intents)
        parts.append(f"客户诉求：{topics}" if zh else f"Customer asked about: {topics}")
    elif facts.customer_turns:
        parts.append("客户诉求未能识别" if zh else "The customer's request was not recognised")
    else:
        parts.append("客户未发言" if zh else "The customer said nothing")
    if facts.slots:
        shown = (sep if zh else ", ").join(f"{k} {v}" for k, v in facts.slots.items())
        parts.append(f"关键信息：{shown}" if zh else f"Key details: {shown}")
    if facts.lookups:
        looked = ", ".join(
            f"{x['tool']}（{_status(x['status'], 'zh')}）" if zh else f"{x['tool']} ({x['status']})"
            for x in facts.lookups
        )
        parts.append(f"查询：{looked}" if zh else f"Look-ups: {looked}")
    if facts.actions:
        acted = (sep if zh else "; ").join(
            f"{a['explanation'] or a['tool']}（{_status(a['status'], 'zh')}）"
            if zh
            else f"{a['explanation'] or a['tool']} ({_status(a['status'], 'en')})"
            for a in facts.actions
        )
        parts.append(f"操作：{acted}" if zh else f"Actions: {acted}")
    flows = [w for w in facts.workflows if not facts.actions or w["status"] != "completed"]
    if flows:
        moved = ", ".join(
            f"{w['name']}（{_workflow_status(w, 'zh')}）"
            if zh
            else f"{w['name']} ({_workflow_status(w, 'en')})"
            for w in flows
        )
        parts.append(f"流程：{moved}" if zh else f"Workflows: {moved}")
    if facts.open_items:
        items = (sep if zh else "; ").join(facts.open_items)
        parts.append(f"未决事项：{items}" if zh else f"Open items: {items}")
    if facts.sentiment:
        trend = _trend(facts.sentiment, facts.language)
        parts.append(f"客户情绪：{trend}" if zh else f"Customer sentiment: {trend}")
    if kind == "transfer" and facts.last_customer:
        last = facts.last_customer[:120]
        parts.append(f"客户最后说：「{last}」" if zh else f'Last said by the customer: "{last}"')
    parts.append(f"建议结案类型：{disposition}" if zh else f"Proposed disposition: {disposition}")
    return (end if zh else ". ").join(parts) + end


def _workflow_status(workflow: dict[str, Any], language: str) -> str:
    """A workflow's status; one that waits for an approval waits for the agent, not the
    customer."""
    status = workflow["status"]
    if status == "waiting_input" and str(workflow.get("waiting_for") or "").startswith(
        APPROVAL_PREFIX
    ):
        status = "waiting_approval"
    return _status(status, language)
