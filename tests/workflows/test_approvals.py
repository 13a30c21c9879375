"""Write steps wait for an agent's decision: durable, never from customer input, and the
approved (maybe edited) arguments are the ones that run."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from hermes_desk.errors import ValidationError
from hermes_desk.workflows import WorkflowDefinition, WorkflowService

from .helpers import Tools, workflow

pytestmark = pytest.mark.anyio

Make = Callable[..., WorkflowService]


def _refund() -> WorkflowDefinition:
    return workflow(
        {"name": "look", "steps": [{"name": "lookup", "tool": "lookup"}]},
        {
            "name": "act",
            "steps": [
                {"name": "refund", "tool": "refund", "approval": True,
                 "arguments": {"amount": 10, "order": "$inputs.order"}},
            ],
        },
        inputs={"order": {"required": True}},
    )  # fmt: skip


async def test_a_write_step_waits_and_runs_the_approved_arguments(
    make_service: Make, tools: Tools
) -> None:
    async with make_service(_refund()) as service:
        view = await service.start("wf", {"order": "o1"}, tenant="t", user="u")
        assert view.status == "waiting_input"
        assert view.waiting_for == "approval:refund"
        assert [c[0] for c in tools.calls] == ["lookup"], "the write has not run"
        request = await service.awaiting_approval(view.id)
        assert request is not None
        assert (request.step, request.tool) == ("refund", "refund")
        assert request.arguments == {"amount": 10, "order": "o1"}
        done = await service.decide(
            view.id, "refund",
            {"decision": "approved", "agent_id": "a1", "arguments": {"amount": 7, "order": "o1"}},
        )  # fmt: skip
    assert done.status == "completed"
    assert tools.calls[-1][:2] == ("refund", {"amount": 7, "order": "o1"})


async def test_a_rejected_write_never_runs_and_the_workflow_fails(
    make_service: Make, tools: Tools
) -> None:
    async with make_service(_refund()) as service:
        view = await service.start("wf", {"order": "o1"}, tenant="t", user="u")
        done = await service.decide(
            view.id, "refund", {"decision": "rejected", "agent_id": "a1", "reason": "no"}
        )
    assert done.status == "failed"
    assert [s.status for s in done.steps if s.name == "refund"] == ["rejected"]
    assert [c[0] for c in tools.calls] == ["lookup"]


async def test_customer_input_cannot_approve(make_service: Make, tools: Tools) -> None:
    async with make_service(_refund()) as service:
        view = await service.start("wf", {"order": "o1"}, tenant="t", user="u")
        with pytest.raises(ValidationError):
            await service.provide_input(view.id, {"approval:refund": {"decision": "approved"}})
        still = await service.get(view.id)
    assert still.waiting_for == "approval:refund"
    assert [c[0] for c in tools.calls] == ["lookup"]


async def test_the_wait_survives_a_restart(make_service: Make, tools: Tools) -> None:
    async with make_service(_refund()) as service:
        view = await service.start("wf", {"order": "o1"}, tenant="t", user="u")
    async with make_service(_refund()) as restarted:
        assert await restarted.recover() == [], "a waiting workflow needs no drive"
        request = await restarted.awaiting_approval(view.id)
        assert request is not None and request.step == "refund"
        done = await restarted.decide(view.id, "refund", {"decision": "approved", "agent_id": "a"})
    assert done.status == "completed"
    assert [c[0] for c in tools.calls] == ["lookup", "refund"]


async def test_another_customer_cannot_see_the_workflow(make_service: Make, tools: Tools) -> None:
    from hermes_desk.errors import NotFoundError

    async with make_service(_refund()) as service:
        view = await service.start("wf", {"order": "o1"}, tenant="t", user="u")
        with pytest.raises(NotFoundError):
            await service.get(view.id, tenant="t", user="someone-else")
        assert (await service.get(view.id, tenant="t", user="u")).id == view.id


def test_approval_steps_must_be_in_a_sequence_phase() -> None:
    with pytest.raises(Exception, match="approval"):
        workflow(
            {"name": "p", "mode": "all", "steps": [
                {"name": "a", "tool": "a", "approval": True}, {"name": "b", "tool": "b"}]},
        )  # fmt: skip
