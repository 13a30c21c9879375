"""A turn that names several records of one kind ("我的订单A和B都到哪了", "where are orders A and
B?"): each is looked up and answered, not only the first.

Only a turn whose plan does nothing but look the first named record up, and that picks none of
them ("A和B，第二个到哪了": the second alone): the others are planned as the same turn naming
each of them, and each plan that looks only that record up, the same way, is acted on and
answered after the first. A write, a workflow, a knowledge answer or a withdrawal goes on with
the first record alone (one write per request for the agent to approve; a policy is quoted
once). Pure: the plans are made by the caller's ``decide``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hermes_desk.assist.records import Plan, Reading
from hermes_desk.nlu.references import find_reference

__all__ = ["other_records"]


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
    for slot, values in reading.listed.items():
        first = reading.found.get(slot)
        if not values or first != values[0] or not _looks_up(plan, first):
            continue
        out: list[tuple[Reading, Plan]] = []
        for value in [v for v in dict.fromkeys(values) if v != first][: limit - 1]:
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


def _looks_up_only(plan: Plan) -> bool:
    return bool(plan.lookups) and not (
        plan.writes
        or plan.workflow
        or plan.withdraw
        or plan.withdraw_workflow
        or plan.situation
        or plan.missing_slots
    )


def _looks_up(plan: Plan, value: Any) -> bool:
    """Every look-up of the plan is of the record ``value`` names (a knowledge search is not)."""
    return all(value in lookup.arguments.values() for lookup in plan.lookups)
