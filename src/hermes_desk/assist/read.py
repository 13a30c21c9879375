"""Stage *read*: the customer's words in their conversation — intent, slots, dialogue act, and
the state the decision needs (a waiting workflow, the session's proposals).

A workflow waiting for the customer frames the turn: a turn that brings the slot it waits for
("验证码是 123456") is read as that workflow's request, whatever the classifier makes of it, and
so is a turn the classifier alone is sure asks for that request again ("我忘记密码了" at 0.99, even
when the conversation leans elsewhere). A turn that reports one of the conversation's own
problems (its intent's ``kb_problems``) and asks for nothing, or asks of it what none of its
tools does (its ``kb_requests``), or only says what something should become ("改成北京市…"),
stays in the conversation's intent when the model is unsure: "我已经付过钱了" after an unpaid
order's status is about that payment, "能帮我催一下吗" after a late parcel about the parcel, not a
return to open, and "改成北京市…" after asking to change the address about that address, not a
password. Any other turn is read as usual.

A turn that names several records, each in a clause of its own ("订单A到哪了，另外我想退货订单B"),
has those clauses read alone too (at most :data:`MAX_CLAUSES_READ`): its request is made of the
record named with it (B), and a turn read as the question one clause asks, whose other clause
is worded as a request of an intent with a workflow ("订单B退货，还有A到哪了"), is that request —
put forward for the agent — with the question answered after it
(:mod:`~hermes_desk.assist.several`). So is a turn that names several records and then, after
the last, only a request of such an intent ("订单A和B帮我退货", read as their status): it is put
forward for the first, and the others are told they need a request of their own.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from typing import Any, Literal

from hermes_desk.actions import ActionService
from hermes_desk.assist.decide import goes_on_across_contacts, value_for_schema
from hermes_desk.assist.records import Clause, Reading
from hermes_desk.llm.slots import ModelSlotChannel
from hermes_desk.masking import is_masked
from hermes_desk.nlu import (
    OOS,
    DialogueState,
    ResolvedIntent,
    SlotExtractor,
    TurnReader,
    asks_for,
    asks_for_something,
    mention_key,
    merge_model_slots,
    only_changes_to,
    reports,
)
from hermes_desk.nlu import request_act as read_act
from hermes_desk.nlu.apostrophes import as_written
from hermes_desk.nlu.language import detect_language
from hermes_desk.packs import IntentSpec, Pack
from hermes_desk.sessions import Session
from hermes_desk.workflows import WorkflowService, WorkflowView
from hermes_desk.workflows.machine import APPROVAL_PREFIX

__all__ = ["MAX_CLAUSES_READ", "TurnReaderStage", "language_of"]

#: A turn naming more records than this, each in a clause of its own, is a list of them: its
#: clauses are not read one by one (each would cost a pass of the classifier).
MAX_CLAUSES_READ = 6
# Words that only name or join records ("我的订单A，还有B", "orders A and B"): a turn of these
# before its last record asks nothing of them yet.
_ONLY_RECORDS = re.compile(
    r"(?:\s|[，,、。.;；:：#]|我的|我|的|订单号?|单号|号码|和|跟|与|以及|及|还有|另外|两个|这|那"
    r"|\b(?:my|the|orders?|numbers?|no|and|also|plus|both)\b)*",
    re.IGNORECASE,
)


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
        #: the classifier's confidence, on the turn alone, that makes a turn the waiting
        #: workflow's own request again whatever the conversation leans to; below it, a turn
        #: that reports the conversation's own problem (or asks what none of its tools does)
        #: stays in the conversation
        self.repeat_confidence = DialogueState().override

    async def read(self, session: Session, text: str) -> Reading:
        text = as_written(text)  # "I’ll keep it", "I dont want it": as the phrases spell them
        waiting = (
            await self.workflows.find_waiting(session.id) if self.workflows is not None else None
        )
        perf = time.perf_counter()
        state = _state_of(session, self.oos_threshold, self.pack.topic_phrases)
        previous_slots = dict(state.slots)
        previous_intent, previous_text = state.intent, state.last_text
        resolved = self._read_intent(text, state)
        found, mentions = self.slots.read(text)
        found = _not_the_withdrawals_words(found, text, self.pack)
        intent, carried = self._framed(resolved, waiting, text, found, previous_intent)
        clauses = self._clauses(text, intent, mentions)
        requested = (
            None if carried else self._request_among(clauses, intent)
        ) or self._request_after_records(text, intent, mentions)
        intent = requested or intent
        state.intent = intent.name if not intent.out_of_scope else state.intent
        nlu_ms = (time.perf_counter() - perf) * 1000
        language = detect_language(text, session.language, default=_default_language(self.pack))
        if self.model_slots is not None and intent.slots and not intent.out_of_scope:
            # Second channel: the model's slots, each checked against the intent's schema;
            # deterministic, format-checked values win.
            proposed = await self.model_slots.extract(
                text,
                intent=intent.name,
                schema=intent.slot_schema["properties"],  # JSON Schema alone, no engine keys
                language=language,
                request_id=session.id,
            )
            found, _refused = merge_model_slots(found, proposed.slots, intent.slots)
        found = state.take(text, found, mentions, requested=_requested(clauses, intent.name))
        proposals = await self.actions.for_session(
            session.id, tenant=session.tenant, user=session.user
        )
        # What the customer's earlier contacts had done: for the intents that go on from it,
        # and for a turn that takes something back ("算了，不投诉了": the ticket opened then)
        earlier = (
            await self.actions.earlier(session.id, tenant=session.tenant, user=session.user)
            if goes_on_across_contacts(intent) or self.pack.acts.takes_back(text) is not None
            else []
        )
        # The ranking shown is the one of the model that decided: the context model when the
        # pack trained one, else the classifier.
        ranked = resolved.in_context or resolved.prediction
        return Reading(
            text=text,
            language=language,
            intent=intent,
            confidence=resolved.confidence,
            carried=carried,
            ranking=list(ranked.ranking[:3]),
            ranking_model="context" if resolved.in_context is not None else "classifier",
            act="request" if requested is not None else read_act(text),
            found=dict(found),
            # A masked value carried from an earlier turn (139****5678) is no slot value.
            slots={k: v for k, v in state.slots_for(intent.slots).items() if not is_masked(v)},
            state=state,
            nlu_ms=nlu_ms,
            waiting=waiting,
            proposals=proposals,
            previous_slots=previous_slots,
            previous_intent=previous_intent,
            previous_text=previous_text,
            mentions={
                name: list(values)
                for name in intent.slots
                if isinstance(values := state.slots.get(mention_key(name)), list)
                and len(values) > 1
            },
            dialogue_act=self.pack.acts.read(text),
            unsure=resolved.unsure and intent.name == resolved.intent,
            listed={name: list(values) for name, values in mentions.items() if len(values) > 1},
            clauses=clauses,
            by_clauses=requested is not None,
            earlier=earlier,
        )

    def _read_intent(self, text: str, state: DialogueState) -> ResolvedIntent:
        """The turn's intent; for one that reads as nothing in scope and opens with courtesies
        before a question ("got it, thanks. what's the temporary password?": "You are welcome"),
        the question's, read alone in the conversation, when that is in scope."""
        turns, last_text = state.turns, state.last_text
        resolved = self.intents.read(text, state)
        if not resolved.out_of_scope:
            return resolved
        rest = self.pack.acts.after_courtesy(text)
        if rest is None or read_act(rest) != "question":
            return resolved
        # read on the conversation as it stood before this turn (an out-of-scope reading
        # changed only its count and last text)
        asked = self.intents.read(rest, replace(state, turns=turns, last_text=last_text))
        if asked.out_of_scope:
            return resolved
        state.intent = asked.intent
        return asked

    def _request_among(self, clauses: tuple[Clause, ...], intent: IntentSpec) -> IntentSpec | None:
        """The intent of the one request a turn's clauses make, when the turn reads as what
        another of its clauses asks ("订单A退货，还有B到哪了", read as the parcel question): the
        write the customer asked for is put forward (for the agent to approve) and the question
        is answered after it, instead of the request going unheard. Only a clause worded as a
        request, of an intent that runs a workflow, beside a clause of the turn's own intent."""
        if intent.workflow or not any(c.intent == intent.name for c in clauses):
            return None
        acting = {
            c.intent
            for c in clauses
            if c.intent != intent.name
            and (spec := self.pack.intents.get(c.intent)) is not None
            and spec.workflow
            and read_act(c.text) == "request"
        }
        return self.pack.intent(acting.pop()) if len(acting) == 1 else None

    def _request_after_records(
        self, text: str, intent: IntentSpec, mentions: dict[str, list[str]]
    ) -> IntentSpec | None:
        """The intent of the request a turn makes after naming several records and nothing
        else ("订单A和B帮我退货", "我的订单A，还有B，帮我退货"): read as their status (0.82: the
        words are mostly numbers), the return asked for went unheard. The words after the last
        record, read alone, are a request of an intent with a workflow: the turn is that
        request — put forward for the first record, the others told they need their own."""
        if intent.workflow or intent.out_of_scope:
            return None
        named = [
            v
            for slot, values in mentions.items()
            if len(values) > 1 and slot in intent.slots
            for v in values
            if isinstance(v, str) and v in text
        ]
        if not named:
            return None
        end = max(text.rfind(v) + len(v) for v in named)
        head, tail = text[:end], text[end:]
        for value in named:
            head = head.replace(value, " ")
        if not tail.strip() or _ONLY_RECORDS.fullmatch(head) is None:
            return None
        alone = self.intents.classifier.predict(tail)
        spec = self.pack.intents.get(alone.intent)
        if spec is None or not spec.workflow or alone.confidence < self.oos_threshold:
            return None
        return spec if read_act(tail) == "request" else None

    def _clauses(
        self, text: str, intent: IntentSpec, mentions: dict[str, list[str]]
    ) -> tuple[Clause, ...]:
        """Each record of a slot of the intent that the turn names several of, with its clause
        and what that clause asks alone, when each sits in a clause of its own ("订单A到哪了，
        另外我想退货订单B"); ``()`` otherwise. The classifier reads only such turns' clauses."""
        several = {s for s, values in mentions.items() if len(values) > 1 and s in intent.slots}
        if intent.out_of_scope or not several:
            return ()
        parts = self.slots.clauses(text)
        if parts is None:
            return ()
        parts = [(part, named) for part, named in parts if any(named.get(s) for s in several)]
        if len(parts) > MAX_CLAUSES_READ:
            return ()  # a list of records, not requests: not a classifier pass per id
        out: list[Clause] = []
        for part, named in parts:
            values = [(s, v[0]) for s, v in named.items() if s in several and v]
            alone = self.intents.classifier.predict(part)
            asks = alone.intent if alone.confidence >= self.oos_threshold else OOS
            out += [Clause(slot, value, part, asks) for slot, value in values]
        if len({(c.slot, c.value) for c in out}) < len(out):
            return ()  # one record in two clauses: which one asks what is not told
        return tuple(out)

    def _framed(
        self,
        resolved: ResolvedIntent,
        waiting: WorkflowView | None,
        text: str,
        found: dict[str, object],
        previous: str | None,
    ) -> tuple[IntentSpec, bool]:
        """The intent the turn is handled under, and whether it came from the conversation:
        the waiting workflow's own when the turn brings its slot or the classifier alone is
        sure the customer asks for it again; the conversation's when the turn reports one of
        its problems or asks what none of its tools does (see the module docstring)."""
        intent = self.pack.intent(resolved.intent)
        slot = waiting.waiting_for if waiting is not None else None
        if waiting is None or not slot or slot.startswith(APPROVAL_PREFIX):
            return self._kept_in_the_conversation(intent, resolved, text, previous)
        owner = self.pack.starter(waiting.name)
        if owner is None or owner.name == intent.name:
            return self._kept_in_the_conversation(intent, resolved, text, previous)
        brings = found.get(slot) is not None or (
            value_for_schema(text, owner.slots.get(slot)) is not None
        )
        alone = resolved.prediction
        if brings:
            return owner, True
        if alone.intent == owner.name and alone.confidence >= self.repeat_confidence:
            return owner, False
        return self._kept_in_the_conversation(intent, resolved, text, previous)

    def _kept_in_the_conversation(
        self, intent: IntentSpec, resolved: ResolvedIntent, text: str, previous: str | None
    ) -> tuple[IntentSpec, bool]:
        """The conversation's intent instead of ``intent`` when the turn reports one of its
        problems and asks for nothing ("我已经付过钱了" after "订单…待付款": its payment, not a
        return to open), or asks of it what its tools do not do (its ``kb_requests``: "能帮我催一
        下吗" after a late parcel), and the model, not very sure, ranks the conversation's intent
        among its first two. A request of its own ("碎了，我要退货") and a sure reading ("the
        tracking is broken, really poor service": a complaint at 0.99) are read as the model
        reads them."""
        if previous is None or previous == intent.name or previous not in self.pack.intents:
            return intent, resolved.carried
        ranking = (resolved.in_context or resolved.prediction).ranking
        if ranking[0][1] >= self.repeat_confidence or previous not in (r[0] for r in ranking[:2]):
            return intent, resolved.carried
        conversation = self.pack.intent(previous)
        if only_changes_to(text):  # "改成北京市…" after asking to change the address: that change
            return conversation, True
        problem = reports(text, conversation.problem_phrases) and not asks_for_something(text)
        # or asks of it what none of its tools does ("能帮我催一下吗" after a late parcel: read
        # as a return at 0.95 by the turn alone, and a return was put forward)
        if not problem and not asks_for(text, conversation.kb_phrases, act=read_act(text)):
            return intent, resolved.carried
        return conversation, True


def _default_language(pack: Pack) -> Literal["zh", "en"]:
    first = pack.manifest.languages[0] if pack.manifest.languages else "zh"
    return "en" if first == "en" else "zh"


def _requested(clauses: tuple[Clause, ...], intent: str) -> dict[str, str]:
    """The record each slot's request is made of, where it is not the first named: the one
    record whose clause alone reads as the turn's intent, when the first's reads as another
    ("订单A到哪了，另外我想退货订单B" read as a return: B, not A)."""
    out: dict[str, str] = {}
    for slot in dict.fromkeys(c.slot for c in clauses):
        mine = [c for c in clauses if c.slot == slot]
        with_it = [c.value for c in mine if c.intent == intent]
        if mine[0].intent != intent and len(with_it) == 1:
            out[slot] = with_it[0]
    return out


def _state_of(session: Session, threshold: float, subjects: tuple[str, ...] = ()) -> DialogueState:
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
        subjects=subjects,
    )


def _not_the_withdrawals_words(found: dict[str, Any], text: str, pack: Pack) -> dict[str, Any]:
    """The values read from the turn, but those read from the words of a withdrawal ("I don't
    want to return it": "don't want" is no return's reason). Read as a reason, it picked no
    waiting return to take back, and a later return carried it."""
    if not found or pack.acts.takes_back(text) is None:
        return found
    lowered, rest = text.lower(), pack.acts.without_withdrawals(text)
    return {
        slot: value
        for slot, value in found.items()
        if str(value).lower() not in lowered or str(value).lower() in rest
    }
