"""The conversation's own moves, settled before the business decision (stage *decide*).

A turn that is only a dialogue act ("谢谢，没别的问题了", "yes please", "不是这个，是另一个") is
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
