"""The model-written summary, with the offline one as its fallback.

With a model chain configured, the model is given the contact's facts (already masked) and the
offline draft, and asked for a short summary in the conversation's language. The offline summary
is kept when the chain answers from its offline link, fails, times out or returns nothing usable;
whatever the model writes is masked again before it is kept.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_desk.errors import HermesError
from hermes_desk.llm.messages import Message, ResponderInput
from hermes_desk.llm.model import ChatModel
from hermes_desk.summary.facts import ContactFacts, SummaryKind

__all__ = ["SummaryWriter"]

_INSTRUCTIONS = {
    "zh": (
        "你是客服系统的小结助手。根据下面的会话事实，用中文写一段不超过 150 字的{what}，"
        "包括客户诉求、关键信息、已做的查询和操作、未决事项和客户情绪。只写事实，不要编造，"
        "不要写出完整的手机号、证件号、银行卡号或邮箱。只输出小结正文。"
    ),
    "en": (
        "You write contact summaries for a customer-service desk. From the facts below, write "
        "a {what} of at most 80 words in English: what the customer wanted, key details, "
        "look-ups and actions done, open items and the customer's sentiment. Facts only, invent "
        "nothing, never write a full phone, ID-card or bank-card number or e-mail address. "
        "Output the summary text only."
    ),
}
_WHAT = {
    ("zh", "after_contact"): "结束后小结",
    ("zh", "transfer"): "转接给其他坐席的交接摘要",
    ("en", "after_contact"): "after-contact summary",
    ("en", "transfer"): "handover summary for the agent taking over",
}


class SummaryWriter:
    """Asks ``model`` (the chain) for the summary; ``None``: the offline summary only.

    Args:
        model: the model chain (its offline link answers with the offline summary's fallback).
        timeout_s: the limit of one summary call.
        max_chars: longer answers are cut.
    """

    def __init__(
        self, model: ChatModel | None, *, timeout_s: float = 15.0, max_chars: int = 1_200
    ) -> None:
        self._model = model
        self._timeout_s = timeout_s
        self._max_chars = max_chars

    @property
    def uses_model(self) -> bool:
        return self._model is not None

    async def write(
        self,
        facts: ContactFacts,
        kind: SummaryKind,
        *,
        draft: str,
        disposition: str,
        request_id: str = "",
    ) -> tuple[str, str]:
        """``(text, source)``: the model's summary (source ``model:<link>``) or ``draft``
        (source ``offline``)."""
        if self._model is None:
            return draft, "offline"
        language = facts.language if facts.language in _INSTRUCTIONS else "en"
        what = _WHAT[(language, kind)]
        system = _INSTRUCTIONS[language].format(what=what)
        document: dict[str, Any] = {
            "facts": facts.to_dict(),
            "proposed_disposition": disposition,
            "draft": draft,
        }
        messages = [
            Message.system(system),
            Message.user(json.dumps(document, ensure_ascii=False, default=str)),
        ]
        kwargs: dict[str, Any] = {
            "timeout_s": self._timeout_s,
            "context": ResponderInput(intent="summary", language=language),
        }
        if request_id and _takes_request_id(self._model):
            kwargs["request_id"] = request_id
        try:
            response = await self._model.complete(messages, **kwargs)
        except HermesError:
            return draft, "offline"
        text = (response.content or "").strip()
        if response.offline or not text:
            return draft, "offline"
        if len(text) > self._max_chars:
            text = text[: self._max_chars - 1] + "…"
        return text, f"model:{response.link}"


def _takes_request_id(model: ChatModel) -> bool:
    from hermes_desk.llm.chain import ModelChain

    return isinstance(model, ModelChain)
