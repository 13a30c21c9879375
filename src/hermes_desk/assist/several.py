"""A turn that names several records of one kind ("我的订单A和B都到哪了", "where are orders A and
B?"): each is looked up and answered, not only the first.

Only a turn whose plan does nothing but look the first named record up, and that picks none of
them ("A和B，第二个到哪了": the second alone): the others are planned as the same turn naming
each of them, and each plan that looks only that record up, the same way, is acted on and
answered after the first. A write, a workflow, a knowledge answer or a withdrawal goes on with
the first record alone (one write per request for the agent to approve; a policy is quoted
once).

A turn whose records each sit in a clause of their own that asks something else ("订单A到哪了，
另外我想退货订单B", read as a return of B) has each other clause planned as a turn of its own
(:func:`other_asks`): one that does nothing but look its record up, or search the knowledge
base after it ("B能退吗"), is answered after the request; such a record is not looked up as the
first was. Pure: the plans are made by the caller's ``decide``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hermes_desk.assist.records import Plan, Reading
from hermes_desk.nlu import OOS, request_act
from hermes_desk.nlu.references import find_reference
from hermes_desk.packs import IntentSpec

__all__ = ["asked_else", "other_asks", "other_records"]


def asked_else(reading: Reading) -> set[str]:
    """The records whose own clause asks something other than the turn's intent ("A到哪了？B能
    退吗": B); a bare number ("两单：A，B") asks nothing of its own."""
    return {c.value for c in reading.clauses if c.intent not in (reading.intent.name, OOS)}


def other_records(
    reading: Reading, plan: Plan, decide: Callable[[Reading], Plan], *, limit: int
) -> list[tuple[Reading, Plan]]:
    """The turn as if it named each other record of a slot it names several of (``listed``),
    with its plan, in the order named; at most ``limit`` records in all (the first included).
    ``[]`` when the turn names one, or ``plan`` does more than look the first up."""
    if limit < 2 or not _looks_up_only(plan) or plan.answer_intent != reading.intent.name:
        return []
    reference = find_reference(reading.text)
    if reference is not None and reference.kind != "current":
        return []  # "A和B，第二个到哪了": the one it picks
    elsewhere = asked_else(reading)  # not asked the same as the first
    for slot, values in reading.listed.items():
        first = reading.found.get(slot)
        if not values or first != values[0] or not _looks_up(plan, first):
            continue
        out: list[tuple[Reading, Plan]] = []
        named = [v for v in dict.fromkeys(values) if v != first and v not in elsewhere]
        for value in named[: limit - 1]:
            other = replace(
                reading,
                found={**reading.found, slot: value},
                slots={**reading.slots, slot: value},
            )
            other_plan = decide(other)
            same = [lookup.tool for lookup in other_plan.lookups] == [
                lookup.tool for lookup in plan.lookups
            ]
            if same and _looks_up_only(other_plan) and _looks_up(other_plan, value):
                out.append((other, other_plan))
        return out
    return []


def other_asks(
    reading: Reading,
    decide: Callable[[Reading], Plan],
    intent_of: Callable[[str], IntentSpec],
    *,
    limit: int,
) -> list[tuple[Reading, Plan]]:
    """Each other record the turn names in a clause of its own ("订单A到哪了" beside "另外我想
    退货订单B"; "…A is late, also B arrived broken"), as that clause alone read as its own
    intent, with its plan: kept when the plan only looks that record up, or searches the
    knowledge base after it ("B能退吗"); at most ``limit`` records in all (the turn's own
    included)."""
    out: list[tuple[Reading, Plan]] = []
    for clause in reading.clauses:
        if len(out) >= limit - 1:
            break
        if clause.value == reading.found.get(clause.slot):
            continue  # the turn's own record, answered by its plan
        spec = intent_of(clause.intent)
        if spec.out_of_scope or clause.slot not in spec.slots:
            continue
        slots = {k: v for k, v in reading.slots.items() if k in spec.slots}
        other = replace(
            reading,
            text=clause.text,
            intent=spec,
            carried=False,
            unsure=False,
            act=request_act(clause.text),
            found={clause.slot: clause.value},
            slots={**slots, clause.slot: clause.value},
            waiting=None,
            listed={},
            clauses=(),
            by_clauses=False,
        )
        other_plan = decide(other)
        if _looks_up_only(other_plan) and _looks_up(other_plan, clause.value, about=True):
            out.append((other, other_plan))
    return out


def _looks_up_only(plan: Plan) -> bool:
    return bool(plan.lookups) and not (
        plan.writes
        or plan.workflow
        or plan.withdraw
        or plan.withdraw_workflow
        or plan.situation
        or plan.missing_slots
    )


def _looks_up(plan: Plan, value: Any, *, about: bool = False) -> bool:
    """Every look-up of the plan is of the record ``value`` names — or, with ``about`` (a
    clause's own question), a search ("B能退吗": the order, then the policy for its status;
    "B碎了": what to do about it)."""
    return all(
        value in lookup.arguments.values() or (about and "query" in lookup.arguments)
        for lookup in plan.lookups
    )
