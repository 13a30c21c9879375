"""The conversation's own moves, settled before the business decision (stage *decide*).

A turn that takes back a request still waiting for the agent ("算了不退了", "never mind, I'll keep
it") withdraws it: the agent can no longer approve what the customer no longer wants. A turn that
is only a dialogue act ("谢谢，没别的问题了", "yes please", "不是这个，是另一个") is
answered as that act: no look-up, nothing proposed, and never "I cannot help with that". A turn
that only states how the customer wants to be contacted ("以后不要给我打电话，发短信就行") is noted
and answered as such: it opens no ticket and promises no call. Anything else goes to
:func:`hermes_desk.assist.decide.decide`. Pure: same reading, same plan.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from hermes_desk.assist.records import Plan, Reading
from hermes_desk.memory.fact import CandidateFact
from hermes_desk.nlu.dialogue_acts import ActPhrases

__all__ = ["PREFERENCE_PREFIX", "conversation_plan", "is_preference"]

#: Key-fact keys that hold a contact preference (the pack's ``keyfacts.yaml``).
PREFERENCE_PREFIX = "contact_preference_"

#: What an agent approved: too late for the customer to take back.
_APPROVED = frozenset({"approved", "executing", "executed", "failed"})

_CLAUSES = re.compile(r"[,，.。!！?？;；、~～\n]+")

Extract = Callable[[str], Sequence[CandidateFact]]


def is_preference(candidate: CandidateFact) -> bool:
    return candidate.key.startswith(PREFERENCE_PREFIX) and candidate.is_key_fact


def conversation_plan(reading: Reading, acts: ActPhrases, extract: Extract) -> Plan | None:
    """The plan of a turn that is only a dialogue act or only a stated preference, else None.

    Args:
        reading: the turn as read.
        acts: the pack's dialogue-act phrases.
        extract: the key-fact extraction for a piece of text (in the turn's intent).
    """
    withdrawn = _withdrawn(reading, acts)
    if withdrawn:
        return Plan(
            reading.intent.name,
            "the customer withdrew a request waiting for the agent: withdrawn, nothing proposed",
            situation="proposal_withdrawn",
            withdraw=withdrawn,
        )
    if reading.found:  # an order number, a code…: the turn is about business
        return None
    waiting = reading.waiting
    waits_for_customer = bool(
        waiting is not None and waiting.waiting_for and ":" not in waiting.waiting_for
    )
    act = reading.dialogue_act
    if act.only and act.act is not None:
        if waits_for_customer and act.act in ("confirmation", "correction"):
            return None  # the waiting workflow asks again for what it needs
        if act.act == "confirmation" and any(p.pending for p in reading.proposals):
            return Plan(
                reading.intent.name,
                "a confirmation while a proposal waits for the agent: nothing new is proposed",
                situation="act_confirmation_pending",
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
    return None


def _withdrawn(reading: Reading, acts: ActPhrases) -> tuple[str, ...]:
    """The proposals the turn takes back: the waiting ones holding a value it names ("订单…不退
    了"), or, naming none, every one that waits. With none waiting, the last one an agent
    approved: it is not withdrawn, and the reply says it went ahead already."""
    if not reading.proposals or not acts.withdraws(reading.text):
        return ()
    named = set(map(str, reading.found.values()))
    chosen = [
        p for p in reading.proposals if not named or named & set(map(str, p.arguments.values()))
    ]
    pending = [p for p in chosen if p.pending]
    if pending:
        return tuple(p.id for p in pending)
    approved = [p for p in chosen if p.status in _APPROVED]
    return (approved[-1].id,) if approved else ()


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
