"""Stage *read*: the customer's words in their conversation — intent, slots, dialogue act, and
the state the decision needs (a waiting workflow, the session's proposals)."""

from __future__ import annotations

import time
from typing import Literal

from hermes_desk.actions import ActionService
from hermes_desk.assist.records import Reading
from hermes_desk.llm.slots import ModelSlotChannel
from hermes_desk.masking import is_masked
from hermes_desk.nlu import OOS, DialogueState, SlotExtractor, TurnReader, merge_model_slots
from hermes_desk.nlu import request_act as read_act
from hermes_desk.nlu.language import detect_language
from hermes_desk.packs import Pack
from hermes_desk.sessions import Session
from hermes_desk.workflows import WorkflowService

__all__ = ["TurnReaderStage", "language_of"]


def language_of(text: str, previous: str | None = None) -> str:
    """The turn's language (:func:`hermes_desk.nlu.language.detect_language`)."""
    return detect_language(text, previous)


class TurnReaderStage:
    """Reads one customer utterance; I/O only to find what waits in the session."""

    def __init__(
        self,
        *,
        pack: Pack,
        intents: TurnReader,
        slots: SlotExtractor,
        workflows: WorkflowService | None,
        actions: ActionService,
        oos_threshold: float,
        model_slots: ModelSlotChannel | None = None,
    ) -> None:
        self.pack = pack
        self.intents = intents
        self.slots = slots
        self.workflows = workflows
        self.actions = actions
        self.oos_threshold = oos_threshold
        self.model_slots = model_slots

    async def read(self, session: Session, text: str) -> Reading:
        perf = time.perf_counter()
        state = _state_of(session, self.oos_threshold)
        resolved = self.intents.read(text, state)
        intent = self.pack.intent(resolved.intent)
        found = self.slots.extract(text)
        nlu_ms = (time.perf_counter() - perf) * 1000
        language = detect_language(text, session.language, default=_default_language(self.pack))
        if self.model_slots is not None and intent.slots and not intent.out_of_scope:
            # Second channel: the model's slots, each checked against the intent's schema;
            # deterministic, format-checked values win.
            proposed = await self.model_slots.extract(
                text,
                intent=intent.name,
                schema=intent.slots,
                language=language,
                request_id=session.id,
            )
            found, _refused = merge_model_slots(found, proposed.slots, intent.slots)
        state.update_slots(found)
        waiting = (
            await self.workflows.find_waiting(session.id) if self.workflows is not None else None
        )
        proposals = await self.actions.for_session(
            session.id, tenant=session.tenant, user=session.user
        )
        # The ranking shown is the one of the model that decided: the context model when the
        # pack trained one, else the classifier.
        ranked = resolved.in_context or resolved.prediction
        return Reading(
            text=text,
            language=language,
            intent=intent,
            confidence=resolved.confidence,
            carried=resolved.carried,
            ranking=list(ranked.ranking[:3]),
            ranking_model="context" if resolved.in_context is not None else "classifier",
            act=read_act(text),
            found=dict(found),
            # A masked value carried from an earlier turn (139****5678) is no slot value.
            slots={k: v for k, v in state.slots_for(intent.slots).items() if not is_masked(v)},
            state=state,
            nlu_ms=nlu_ms,
            waiting=waiting,
            proposals=proposals,
            dialogue_act=self.pack.acts.read(text),
        )


def _default_language(pack: Pack) -> Literal["zh", "en"]:
    first = pack.manifest.languages[0] if pack.manifest.languages else "zh"
    return "en" if first == "en" else "zh"


def _state_of(session: Session, threshold: float) -> DialogueState:
    last_intent = next(
        (
            t.meta["intent"]
            for t in reversed(session.turns)
            if t.role == "user" and t.meta and t.meta.get("intent") not in (None, OOS)
        ),
        None,
    )
    user_turns = [t for t in session.turns if t.role == "user"]
    return DialogueState(
        threshold=threshold,
        intent=last_intent,
        slots=dict(session.slots),
        turns=len(user_turns),
        last_text=user_turns[-1].text if user_turns else None,
    )
