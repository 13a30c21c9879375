"""Waiting for the customer across turns (W4), resume from snapshots (W3), the watchdog (W5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from hermes_desk.errors import ConflictError, NotFoundError
from hermes_desk.events import MemorySink
from hermes_desk.packs.loader import bundled_pack_path
from hermes_desk.testing import FakeClock
from hermes_desk.workflows import (
    WITHDRAWN_BY_CUSTOMER,
    Cursor,
    SqliteSnapshotStore,
    WorkflowDefinition,
    WorkflowService,
    load_workflow_dir,
)
from hermes_desk.workflows.machine import (
    StepResult,
    WorkflowState,
    advance,
    new_workflow,
    step_finished,
    step_started,
)

from .helpers import Tools, workflow

pytestmark = pytest.mark.anyio

Make = Callable[..., WorkflowService]
PACK = load_workflow_dir(bundled_pack_path("ecommerce") / "workflows")


def reset_tools(tools: Tools, sent_code: str = "246810") -> None:
    tools.behaviour["check_phone"] = lambda a: {"registered": True, "user_id": "u1001"}
    tools.behaviour["send_sms_code"] = lambda a: {"sent": True}
    tools.behaviour["reset_password"] = lambda a: {"sent": True, "channel": "sms"}
    tools.sent_code = sent_code  # type: ignore[attr-defined]


def verify_against(tools: Tools, code: str) -> None:
    def behave(attempt: int) -> Any:
        _, arguments, _ = tools.calls[-1]
        return {"valid": arguments["code"] == code}

    tools.behaviour["verify_sms_code"] = behave


async def test_password_reset_waits_for_the_customers_code_across_turns_and_workers(
    make_service: Make, tools: Tools, store: SqliteSnapshotStore
) -> None:
    reset_tools(tools)
    verify_against(tools, "246810")
    async with make_service(PACK) as worker_a:
        first = await worker_a.start(
            "password_reset", {"phone": "13800138000"}, tenant="t", user="u", session_id="s1"
        )
        assert (first.status, first.waiting_for) == ("waiting_input", "sms_code")
        assert tools.count("verify_sms_code") == 0  # nothing verified before the customer speaks
    # The next turn lands on another worker sharing the store.
    async with make_service(PACK) as worker_b:
        waiting = await worker_b.find_waiting("s1")
        assert waiting is not None and waiting.id == first.id
        # A turn without the slot changes nothing.
        same = await worker_b.provide_input(first.id, {"phone": "13800138000"})
        assert same.status == "waiting_input"
        done = await worker_b.provide_input(first.id, {"sms_code": "246810"})
    assert done.status == "completed"
    verify = [c for c in tools.calls if c[0] == "verify_sms_code"]
    assert [c[1]["code"] for c in verify] == ["246810"]
    by_name = {s.name: s for s in done.steps}
    assert by_name["reset_password"].status == "succeeded"
    # Nobody chose or saw a password: the back office sends a temporary one to the phone.
    assert tools.calls[-1][:2] == ("reset_password", {"phone": "13800138000"})


async def test_a_wrong_code_is_asked_again_and_a_carried_over_one_is_ignored(
    make_service: Make, tools: Tools
) -> None:
    reset_tools(tools)
    verify_against(tools, "246810")
    async with make_service(PACK) as service:
        view = await service.start("password_reset", {"phone": "13800138000"}, tenant="t", user="u")
        wrong = await service.provide_input(view.id, {"sms_code": "111111"})
        assert (wrong.status, wrong.waiting_for) == ("waiting_input", "sms_code")
        # The dialogue state carries the old slot into the next turn: not a new attempt.
        again = await service.provide_input(view.id, {"sms_code": "111111"})
        assert again.status == "waiting_input"
        done = await service.provide_input(view.id, {"sms_code": "246810"})
    assert done.status == "completed"
    keys = [c[2] for c in tools.calls if c[0] == "verify_sms_code"]
    assert len(keys) == 2 and keys[0] != keys[1]


async def test_too_many_wrong_codes_escalate(make_service: Make, tools: Tools) -> None:
    reset_tools(tools)
    verify_against(tools, "246810")
    async with make_service(PACK) as service:
        view = await service.start("password_reset", {"phone": "13800138000"}, tenant="t", user="u")
        for code in ("111111", "222222", "333333"):
            view = await service.provide_input(view.id, {"sms_code": code})
    assert view.status == "escalated"
    assert view.failed_step == "verify_code"


def crashed_snapshot(definition: WorkflowDefinition, now: float) -> Any:
    """The state a kill -9 leaves: step a done, step b started, no record of its end."""
    state = new_workflow(
        definition,
        workflow_id="wf_crashed",
        inputs={},
        tenant="t",
        user="u",
        session_id=None,
        now=now,
        deadline_s=900,
    )
    state, _ = advance(definition, state, now)
    state = step_started(state, "a", now)
    state = step_finished(definition, state, "a", StepResult("ok", {"v": 1}), now)
    state, _ = advance(definition, state, now)
    return step_started(state, "b", now)


async def test_recover_resumes_from_the_snapshot_without_rerunning_completed_steps(
    make_service: Make, tools: Tools, store: SqliteSnapshotStore
) -> None:
    definition = workflow(
        {"name": "p1", "steps": [{"name": "a", "tool": "a"}]},
        {"name": "p2", "steps": [{"name": "b", "tool": "b"}, {"name": "c", "tool": "c"}]},
    )
    service = make_service(definition)
    state = crashed_snapshot(definition, service.clock.now())
    await service.runner.save(Cursor(state, 0), "started:b")
    async with service:
        assert await service.recover() == ["wf_crashed"]
        view = await service.wait_settled("wf_crashed")
    assert view.status == "completed"
    assert [c[0] for c in tools.calls] == ["b", "c"]  # a is never run again
    assert tools.calls[0][2] == "wf_crashed:b"  # b re-sent with its idempotency key


async def test_two_workers_cannot_both_take_the_same_input(
    make_service: Make, tools: Tools
) -> None:
    reset_tools(tools)
    verify_against(tools, "246810")
    async with make_service(PACK) as a, make_service(PACK) as b:
        view = await a.start("password_reset", {"phone": "13800138000"}, tenant="t", user="u")
        results: list[Any] = []

        async def give(service: WorkflowService) -> None:
            results.append(await service.provide_input(view.id, {"sms_code": "246810"}))

        async with anyio.create_task_group() as group:
            group.start_soon(give, a)
            group.start_soon(give, b)
        final = await a.get(view.id)
    assert final.status == "completed"
    assert tools.count("verify_sms_code") == 1
    assert tools.count("reset_password") == 1


async def test_watchdog_escalates_a_workflow_waiting_past_its_deadline(
    make_service: Make, tools: Tools
) -> None:
    reset_tools(tools)
    clock = FakeClock()
    sink = MemorySink()
    async with make_service(PACK, clock=clock, events=sink) as service:
        view = await service.start("password_reset", {"phone": "13800138000"}, tenant="t", user="u")
        assert (await service.watchdog.sweep()).expired == []
        clock.advance(901)
        report = await service.watchdog.sweep()
        final = await service.get(view.id)
    assert report.expired == [view.id]
    assert final.status == "escalated"
    assert final.error == "workflow deadline exceeded"
    assert {s.status for s in final.steps if s.name == "verify_code"} == {"timeout"}
    events = sink.events(name="workflow.deadline_exceeded")
    assert [e.data["workflow_id"] for e in events] == [view.id]


async def test_watchdog_stops_a_stuck_local_drive(make_service: Make, tools: Tools) -> None:
    tools.behaviour["hang"] = lambda attempt: 30.0
    clock = FakeClock()
    definition = workflow(
        {"name": "p", "steps": [{"name": "hang", "tool": "hang"}]}, on_deadline="fail"
    )
    async with make_service(definition, clock=clock) as service:
        view = await service.start("wf", {}, tenant="t", user="u", wait_s=0.05)
        assert view.status == "running"
        clock.advance(10_000)
        await service.watchdog.sweep()
        final = await service.wait_settled(view.id)
    assert final.status == "failed"
    assert final.steps[0].status == "cancelled"
    assert final.error == "workflow deadline exceeded"


async def test_watchdog_adopts_an_orphan_left_by_a_dead_worker(
    make_service: Make, tools: Tools
) -> None:
    clock = FakeClock()
    definition = workflow(
        {"name": "p1", "steps": [{"name": "a", "tool": "a"}]},
        {"name": "p2", "steps": [{"name": "b", "tool": "b"}]},
    )
    service = make_service(definition, clock=clock)
    await service.runner.save(Cursor(crashed_snapshot(definition, clock.now()), 0), "started:b")
    async with service:
        assert (await service.watchdog.sweep()).adopted == []  # not stale yet
        clock.advance(60)  # stale (no snapshot for a minute), not yet past its deadline
        assert (await service.watchdog.sweep()).adopted == ["wf_crashed"]
        final = await service.wait_settled("wf_crashed")
    assert final.status == "completed"
    assert [c[0] for c in tools.calls] == ["b"]


def _begun(definition: WorkflowDefinition) -> WorkflowState:
    """A new run of ``definition`` at time 0, its first steps under way."""
    state = new_workflow(
        definition, workflow_id="wf", inputs={}, tenant="t", user="u", session_id=None,
        now=0.0, deadline_s=900,
    )  # fmt: skip
    state, _ = advance(definition, state, 0.0)
    return state


def test_when_follows_the_winner_even_if_both_racers_finished() -> None:
    """Both challenges may succeed before the race phase closes: only the winner's follow-up
    runs, the other is skipped."""
    definition = workflow(
        {"name": "race", "mode": "first", "steps": [{"name": "sms", "tool": "s"},
                                                     {"name": "captcha", "tool": "c"}]},
        {"name": "check", "steps": [{"name": "by_sms", "tool": "v", "when": "sms"},
                                    {"name": "by_captcha", "tool": "v", "when": "captcha"}]},
    )  # fmt: skip
    state = _begun(definition)
    for name in ("sms", "captcha"):
        state = step_started(state, name, 0.0)
    state = step_finished(definition, state, "captcha", StepResult("ok", {}), 1.0)
    state = step_finished(definition, state, "sms", StepResult("ok", {}), 2.0)
    state, action = advance(definition, state, 3.0)
    assert state.phases[0].winner == "captcha"
    assert action.steps == ("by_captcha",)  # type: ignore[union-attr]
    assert state.steps["by_sms"].status == "skipped"


@pytest.mark.parametrize(
    ("output", "runs"),
    [({"received": True}, True), ({"received": False}, False), ({}, False),
     ({"received": "yes"}, False)],
    ids=["true", "false", "missing", "not_a_boolean"],
)  # fmt: skip
def test_when_a_result_says_so_runs_the_step_only_then(output: dict[str, Any], runs: bool) -> None:
    """A return's refund goes forward only when the return says the goods are back: a result
    that says false, says nothing or says something else skips the step and the workflow still
    completes."""
    definition = workflow(
        {"name": "action", "steps": [
            {"name": "open_return", "tool": "r"},
            {"name": "refund", "tool": "f", "when": "$steps.open_return.output.received"}]},
    )  # fmt: skip
    state = _begun(definition)
    state = step_started(state, "open_return", 0.0)
    state = step_finished(definition, state, "open_return", StepResult("ok", output), 1.0)
    state, action = advance(definition, state, 2.0)
    if runs:
        assert action.steps == ("refund",)  # type: ignore[union-attr]
    else:
        assert state.status == "completed", state
        assert state.steps["refund"].status == "skipped"
        assert "is not true" in (state.steps["refund"].error or "")


async def test_input_arriving_while_the_worker_still_resumes_the_workflow_is_taken(
    make_service: Make, tools: Tools, store: SqliteSnapshotStore
) -> None:
    """After a restart the worker resumes every active workflow; a customer's input that lands
    before that resume has reached the recorded wait must not be dropped."""
    from hermes_desk.workflows.service import _Drive

    reset_tools(tools)
    verify_against(tools, "246810")
    async with make_service(PACK) as service:
        view = await service.start("password_reset", {"phone": "13800138000"}, tenant="t", user="u")
        assert view.waiting_for == "sms_code"
        snapshot = await store.load(view.id)
        assert snapshot is not None
        resuming = _Drive(Cursor(snapshot.state(), snapshot.seq))
        service._drives[view.id] = resuming  # a resume in progress on this worker

        async def resume_reaches_the_wait() -> None:
            await anyio.sleep(0.05)
            service._drives.pop(view.id, None)
            resuming.settled.set()

        async with anyio.create_task_group() as group:
            group.start_soon(resume_reaches_the_wait)
            done = await service.provide_input(view.id, {"sms_code": "246810"})
    assert done.status == "completed"


async def test_a_waiting_workflow_restarts_with_its_inputs_and_new_ones(
    make_service: Make, tools: Tools
) -> None:
    reset_tools(tools)
    verify_against(tools, "246810")
    async with make_service(PACK) as service:
        first = await service.start(
            "password_reset", {"phone": "13800138000"}, tenant="t", user="u", session_id="s1"
        )
        assert first.waiting_for == "sms_code"
        again = await service.restart(first.id, {}, tenant="t", user="u")
        assert again.id != first.id and again.waiting_for == "sms_code"
        assert again.session_id == "s1"
        assert tools.count("send_sms_code") == 2, "the restarted run sends a new code"
        assert [c[1]["phone"] for c in tools.calls if c[0] == "check_phone"] == [
            "13800138000",
            "13800138000",
        ], "its own inputs are kept"
        old = await service.get(first.id, tenant="t")
        assert old.status == "failed" and old.error and "restarted" in old.error
        assert (await service.find_waiting("s1")).id == again.id  # type: ignore[union-attr]

        changed = await service.restart(again.id, {"phone": "13912345678"}, tenant="t", user="u")
        assert [c[1]["phone"] for c in tools.calls if c[0] == "check_phone"][-1] == "13912345678"
        done = await service.provide_input(changed.id, {"sms_code": "246810"}, tenant="t")
        assert done.status == "completed"


async def test_only_a_workflow_waiting_for_the_customer_restarts(
    make_service: Make, tools: Tools
) -> None:
    reset_tools(tools)
    verify_against(tools, "246810")
    async with make_service(PACK) as service:
        first = await service.start(
            "password_reset", {"phone": "13800138000"}, tenant="t", user="u", session_id="s1"
        )
        with pytest.raises(NotFoundError):
            await service.restart(first.id, {}, tenant="t", user="someone-else")
        done = await service.provide_input(first.id, {"sms_code": "246810"}, tenant="t")
        assert done.status == "completed"
        with pytest.raises(ConflictError):
            await service.restart(first.id, {}, tenant="t", user="u")
        assert tools.count("send_sms_code") == 1


async def test_a_workflow_the_customer_takes_back_ends_and_runs_nothing_more(
    make_service: Make, tools: Tools
) -> None:
    """ "不用重置了" while the reset waits for the code: it fails as withdrawn (the summary reads
    that), the code it was waiting for is refused afterwards and nothing after the wait runs."""
    reset_tools(tools)
    verify_against(tools, "246810")
    sink = MemorySink()
    async with make_service(PACK, events=sink) as service:
        first = await service.start(
            "password_reset", {"phone": "13800138000"}, tenant="t", user="u", session_id="s1"
        )
        with pytest.raises(NotFoundError):
            await service.withdraw(first.id, tenant="t", user="someone-else")
        ended = await service.withdraw(first.id, tenant="t", user="u")
        assert ended.status == "failed" and ended.error == WITHDRAWN_BY_CUSTOMER
        assert ended.withdrawn
        assert await service.find_waiting("s1") is None
        after = await service.provide_input(first.id, {"sms_code": "246810"}, tenant="t")
        assert after.status == "failed", "a code after the withdrawal changes nothing"
        assert tools.count("verify_sms_code") == 0 and tools.count("reset_password") == 0
        assert [e.data["workflow_id"] for e in sink.events(name="workflow.withdrawn")] == [first.id]
        with pytest.raises(ConflictError):  # ended: nothing left to take back
            await service.withdraw(first.id, tenant="t", user="u")
