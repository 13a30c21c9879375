"""The model slot channel: ask the model for JSON slots, keep only what passes the schema.

The model is the second channel (SPEC S6): deterministic extractors run first and their
format-checked values win when the two are merged (the NLU module's job). This channel only
guarantees that what it returns is a JSON object of known slots whose values each pass their
slot schema (Draft 2020-12 with formats asserted). Anything else is dropped and reported in
``rejected`` and an ``llm.slots`` event (slot names only, never values).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_desk.clock import Clock, SystemClock
from hermes_desk.errors import FailureError
from hermes_desk.events import Event, EventSink
from hermes_desk.llm.messages import Message, ResponderInput
from hermes_desk.llm.model import ChatModel
from hermes_desk.nlu.model_slots import merge_model_slots

__all__ = ["JSON_OBJECT", "ModelSlotChannel", "SlotExtraction", "validate_slots"]

JSON_OBJECT: Mapping[str, Any] = {"type": "json_object"}

_INSTRUCTIONS = {
    "zh": (
        "从客户的话中提取以下槽位，只输出一个 JSON 对象，键为槽位名，值须符合各自的 JSON Schema；"
        "没有提到的槽位不要输出，不要猜测。日期用 YYYY-MM-DD。"
    ),
    "en": (
        "Extract the slots below from the customer's words. Output one JSON object only, keys "
        "are slot names and each value must match its JSON Schema; leave out slots that were "
        "not mentioned, never guess. Dates as YYYY-MM-DD."
    ),
}


@dataclass(frozen=True, slots=True)
class SlotExtraction:
    """Model slots that passed their schema, and why the others were dropped."""

    slots: dict[str, Any] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)
    link: str = ""


def validate_slots(
    candidate: Any, schema: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, Any], dict[str, str]]:
    """Split a model's JSON into (valid slots, {slot: reason}) against ``schema``.

    The rules are the NLU module's (:func:`~hermes_desk.nlu.merge_model_slots`); ``None``
    values count as "not mentioned" and are dropped silently.
    """
    if not isinstance(candidate, Mapping):
        return {}, {"(root)": "not a JSON object"}
    accepted, refused = merge_model_slots({}, candidate, schema)
    return accepted, {r.name: r.reason for r in refused}


class ModelSlotChannel:
    """Asks a :class:`ChatModel` (usually the chain) for the intent's slots as JSON.

    Args:
        model: the model or chain; the offline link answers ``{}`` (no model slots).
        events: where ``llm.slots`` events go.
        clock: event times.
        timeout_s: the per-call limit (``None``: the model's default).
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        events: EventSink | None = None,
        clock: Clock | None = None,
        timeout_s: float | None = None,
    ) -> None:
        self._model = model
        self._events = events
        self._clock = clock or SystemClock()
        self._timeout_s = timeout_s

    async def extract(
        self,
        text: str,
        *,
        intent: str,
        schema: Mapping[str, Mapping[str, Any]],
        history: Sequence[Message] = (),
        language: str = "zh",
        request_id: str = "",
    ) -> SlotExtraction:
        """The model's slots for ``text`` under ``intent``; never raises for a bad answer."""
        if not schema:
            return SlotExtraction()
        instructions = _INSTRUCTIONS.get(language, _INSTRUCTIONS["en"])
        described = json.dumps(schema, ensure_ascii=False)
        system = f"{instructions}\nintent: {intent}\nslots: {described}"
        messages = [Message.system(system), *history, Message.user(text)]
        kwargs: dict[str, Any] = {
            "response_format": JSON_OBJECT,
            "timeout_s": self._timeout_s,
            "context": ResponderInput(intent=intent, language=language),
        }
        if request_id and _accepts_request_id(self._model):
            kwargs["request_id"] = request_id
        try:
            response = await self._model.complete(messages, **kwargs)
        except FailureError as exc:
            self._emit(request_id, "", [], {"(model)": exc.code})
            return SlotExtraction(rejected={"(model)": exc.code})
        try:
            candidate = json.loads(response.content or "")
        except ValueError:
            candidate = None
        accepted, rejected = validate_slots(candidate, schema)
        self._emit(request_id, response.link, sorted(accepted), rejected)
        return SlotExtraction(slots=accepted, rejected=rejected, link=response.link)

    def _emit(
        self, request_id: str, link: str, accepted: list[str], rejected: Mapping[str, str]
    ) -> None:
        if self._events is None:
            return
        data = {"link": link, "accepted": accepted, "rejected": dict(rejected)}
        self._events.emit(Event("llm.slots", request_id, self._clock.now(), data))


def _accepts_request_id(model: ChatModel) -> bool:
    from hermes_desk.llm.chain import ModelChain

    return isinstance(model, ModelChain)
