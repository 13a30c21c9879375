"""``hermes-desk bench replies``: whole labelled conversations through the running chain, the
suggested replies checked automatically (SPEC §8 R1).

Each conversation of the pack's ``replies_eval.jsonl`` (see the pack's ``LABELS.md``, *Reply
checks*) runs in a session of its own against the demo back office; no agent approves anything,
so no write ever executes. Scored per customer turn:

- **intent** — the intent the turn is handled under equals the label;
- **slots** — each labelled slot has the labelled value;
- **language** — the reply speaks the customer's language (:func:`detect_language` of the reply,
  with the customer's own words that the reply quotes left out);
- **no false "done"** — no reply claims that a write was done (a refund issued, a ticket
  opened, a password reset) while none executed;
- **verification failures named** — a turn that gave a wrong code gets a reply that says so;
- **closings closed** — a closing gets a reply that closes, not "I cannot help with that";
- **negative acknowledged** — a negative turn gets a reply that opens with an apology or
  acknowledgement;
- **preferences kept** — a stated contact preference opens no ticket and promises no call.

The checks are markers in the reply text, in Chinese and English, kept here and not in the pack
so that a pack cannot pass them by changing its own words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_desk.nlu.language import detect_language

__all__ = ["CHECKS", "check_turn", "load_conversations", "run_replies", "score", "summarise"]

#: The checks, in the order they are reported.
CHECKS = (
    "intent",
    "slots",
    "language",
    "no_false_done",
    "rejection_named",
    "closing_closed",
    "negative_acknowledged",
    "preference_kept",
)

_DONE = re.compile(
    r"已办理完成|办理成功|已(?:为您)?(?:重置|退款|登记投诉|取消订单)|已经为您办好|退款单号|工单号"
    r"|密码已重置|(?:is|are|has been|have been) (?:done|reset|refunded|cancelled|logged \(ticket)"
    r"|\bticket [A-Z0-9-]{4,}|\brefund (?:id|number)\b|\bsuccessfully\b",
    re.IGNORECASE,
)
_REJECTED = re.compile(
    r"不正确|错误|不对|没有通过|未通过|not right|incorrect|wrong|did not (?:pass|match)"
    r"|didn't (?:pass|match)|invalid",
    re.IGNORECASE,
)
_CLOSED = re.compile(r"再见|祝您|goodbye|bye\b|have a (?:great|nice|good) day", re.IGNORECASE)
_CANNOT = re.compile(r"无法帮您|暂时无法|cannot help|can't help", re.IGNORECASE)
_EMPATHY = re.compile(
    r"^(?:[^。.!！]{0,20})(?:抱歉|对不起|理解您|sorry|apologi[sz]e|understand)", re.IGNORECASE
)
_CALL_PROMISE = re.compile(r"回电|致电|给您打电话|电话联系|call you|phone you|ring you", re.I)
_QUOTED = re.compile(r"[（(：:][^）)]*[）)]")

Turn = Mapping[str, Any]
RunTurn = Callable[[str, str, str], Awaitable[dict[str, Any]]]


def load_conversations(path: str | Path) -> list[dict[str, Any]]:
    """The labelled conversations of a JSONL file, refusing lines without turns."""
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not isinstance(row, dict) or not row.get("turns") or "user" not in row:
            raise ValueError(f"{path}:{number}: a conversation needs a user and turns")
        rows.append(row)
    return rows


def _reply_language(reply: str, customer: str) -> str:
    """The reply's language, without the parts that quote the customer or the back office (a
    proposal's summary in brackets, the customer's own words)."""
    shown = _QUOTED.sub(" ", reply).replace(customer, " ")
    return detect_language(shown, None)


def check_turn(
    label: Turn, outcome: Mapping[str, Any], *, language: str, executed: bool
) -> dict[str, bool | None]:
    """Each check's verdict for one customer turn (``None``: the check does not apply).

    Args:
        label: the labelled turn (``text``, ``intent``, ``slots``, ``act``, ``expect``…).
        outcome: the turn's outcome as the API answers it.
        language: the customer's language for this turn.
        executed: whether any write of the session has executed by now.
    """
    reply = str((outcome.get("suggestion") or {}).get("text") or "")
    intent = (outcome.get("intent") or {}).get("name")
    slots = label.get("slots") or {}
    got = outcome.get("slots") or {}
    tools = [c.get("tool") for c in outcome.get("proposals") or []]
    return {
        "intent": intent == label.get("intent"),
        "slots": all(got.get(k) == v for k, v in slots.items()) if slots else None,
        "language": _reply_language(reply, str(label.get("text", ""))) == language,
        "no_false_done": executed or not _DONE.search(reply),
        "rejection_named": bool(_REJECTED.search(reply))
        if label.get("expect") == "rejected"
        else None,
        "closing_closed": bool(_CLOSED.search(reply)) and not _CANNOT.search(reply)
        if label.get("act") == "closing"
        else None,
        "negative_acknowledged": bool(_EMPATHY.search(reply)) if label.get("negative") else None,
        "preference_kept": "create_ticket" not in tools and not _CALL_PROMISE.search(reply)
        if label.get("preference")
        else None,
    }


async def score(
    conversations: Sequence[Mapping[str, Any]],
    run_turn: RunTurn,
    *,
    open_session: Callable[[str], Awaitable[str]],
    close_session: Callable[[str, str], Awaitable[None]],
    sms_code: Callable[[str], Awaitable[str | None]],
) -> dict[str, Any]:
    """Run every conversation and check every turn; the figures and the failures.

    Args:
        conversations: the labelled conversations.
        run_turn: ``(user, session_id, text) -> outcome`` (the API's turn response).
        open_session / close_session: a fresh session per conversation, closed at its end.
        sms_code: the latest code the back office sent to a phone (for ``{code}``).
    """
    per_turn: list[dict[str, Any]] = []
    for conversation in conversations:
        user = str(conversation["user"])
        session_id = await open_session(user)
        phone: str | None = None
        executed = False
        try:
            for index, label in enumerate(conversation["turns"]):
                text = str(label["text"])
                phone = (label.get("slots") or {}).get("phone") or phone
                if "{code}" in text:
                    code = await sms_code(phone) if phone else None
                    text = text.replace("{code}", code or "000000")
                outcome = await run_turn(user, session_id, text)
                executed = executed or any(
                    p.get("status") == "executed" for p in outcome.get("proposals") or []
                )
                language = str(label.get("lang") or conversation.get("lang") or "zh")
                verdicts = check_turn(
                    {**label, "text": text}, outcome, language=language, executed=executed
                )
                per_turn.append(
                    {
                        "conversation": conversation.get("id"),
                        "turn": index,
                        "lang": language,
                        "text": text,
                        "reply": (outcome.get("suggestion") or {}).get("text"),
                        "intent": (outcome.get("intent") or {}).get("name"),
                        "verdicts": verdicts,
                    }
                )
        finally:
            await close_session(user, session_id)
    return summarise(per_turn, conversations=len(conversations))


def summarise(per_turn: Sequence[Mapping[str, Any]], *, conversations: int) -> dict[str, Any]:
    """Pass rates per check, overall and per language, and every failed turn."""
    figures: dict[str, Any] = {"conversations": conversations, "turns": len(per_turn)}
    for group in ("all", "zh", "en"):
        rows = [r for r in per_turn if group == "all" or r["lang"] == group]
        block: dict[str, Any] = {"turns": len(rows)}
        for check in CHECKS:
            verdicts = [r["verdicts"][check] for r in rows if r["verdicts"][check] is not None]
            block[check] = {
                "n": len(verdicts),
                "passed": sum(1 for v in verdicts if v),
                "rate": round(sum(1 for v in verdicts if v) / len(verdicts), 4)
                if verdicts
                else None,
            }
        figures[group] = block
    figures["failures"] = [
        {**{k: r[k] for k in ("conversation", "turn", "text", "reply", "intent")}, "failed": bad}
        for r in per_turn
        if (bad := [c for c, v in r["verdicts"].items() if v is False])
    ]
    return figures


async def run_replies(
    settings: Any, data: str | Path | None = None, *, tenant: str = "default"
) -> dict[str, Any]:
    """Score the pack's labelled conversations on a runtime built from ``settings`` (its back
    office must be the demo one: codes are read from its SMS outbox)."""
    import httpx

    from hermes_desk.packs import load_pack
    from hermes_desk.runtime import build_runtime

    source = Path(data) if data else load_pack(settings.service.pack).root / "replies_eval.jsonl"
    conversations = load_conversations(source)
    runtime = build_runtime(settings)
    await runtime.start()
    backend = str(settings.service.backend_url).rstrip("/")
    try:
        async with httpx.AsyncClient(timeout=30) as client:

            async def open_session(user: str) -> str:
                return (await runtime.sessions.create(tenant, user)).id

            async def close_session(user: str, session_id: str) -> None:
                await runtime.sessions.close(tenant, user, session_id)

            async def run_turn(user: str, session_id: str, text: str) -> dict[str, Any]:
                return (await runtime.assistant.turn(tenant, user, session_id, text)).to_dict()

            async def sms_code(phone: str) -> str | None:
                response = await client.get(f"{backend}/sms/outbox/{phone}")
                return str(response.json().get("code")) if response.status_code == 200 else None

            figures = await score(
                conversations,
                run_turn,
                open_session=open_session,
                close_session=close_session,
                sms_code=sms_code,
            )
    finally:
        await runtime.stop()
    figures["data"] = source.name
    return figures
