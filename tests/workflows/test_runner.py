"""Phase modes, timeouts, retries and cancellation, through the service and a SQLite store."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

from hermes_desk.config import WorkflowSettings
from hermes_desk.workflows import WorkflowService

from .helpers import Tools, workflow

pytestmark = pytest.mark.anyio

Make = Callable[..., WorkflowService]


def step(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "tool": extra.pop("tool", name), **extra}


def statuses(view: Any) -> dict[str, str]:
    return {s.name: s.status for s in view.steps}


async def test_sequence_runs_in_order_and_passes_outputs(make_service: Make, tools: Tools) -> None:
    tools.behaviour["lookup"] = lambda attempt: {"user_id": "u1"}
    definition = workflow(
        {"name": "a", "steps": [step("lookup")]},
        {"name": "b", "steps": [step("use", arguments={"user": "$steps.lookup.output.user_id"})]},
    )
    async with make_service(definition) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
    assert view.status == "completed"
    assert [c[0] for c in tools.calls] == ["lookup", "use"]
    assert tools.calls[1][1] == {"user": "u1"}
    assert [p.outcome for p in view.phases] == ["succeeded", "succeeded"]


async def test_all_mode_joins_every_step(make_service: Make, tools: Tools) -> None:
    tools.behaviour["slow"] = lambda attempt: 0.05
    definition = workflow(
        {"name": "par", "mode": "all", "steps": [step("slow"), step("fast")]},
        {"name": "after", "steps": [step("last")]},
    )
    async with make_service(definition) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
    assert view.status == "completed"
    assert statuses(view) == {"slow": "succeeded", "fast": "succeeded", "last": "succeeded"}
    assert [c[0] for c in tools.calls][-1] == "last"


async def test_all_mode_fails_fast_and_records_the_cancelled_sibling(
    make_service: Make, tools: Tools
) -> None:
    tools.behaviour["slow"] = lambda attempt: 30.0
    tools.fail("broken", 99, retryable=False)
    definition = workflow({"name": "par", "mode": "all", "steps": [step("slow"), step("broken")]})
    async with make_service(definition) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
    assert view.status == "failed"
    assert statuses(view) == {"slow": "cancelled", "broken": "failed"}
    assert view.failed_step == "broken"


async def test_first_mode_takes_the_first_success_and_cancels_the_rest(
    make_service: Make, tools: Tools
) -> None:
    tools.behaviour["sms"] = lambda attempt: 30.0
    definition = workflow(
        {"name": "race", "mode": "first", "steps": [step("sms"), step("captcha")]},
        {"name": "after", "steps": [step("next")]},
    )
    async with make_service(definition) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
    assert view.status == "completed"
    assert statuses(view) == {"sms": "cancelled", "captcha": "succeeded", "next": "succeeded"}
    race = next(p for p in view.phases if p.name == "race")
    assert race.winner == "captcha"
    # The cancellation is in a snapshot, not lost.
    assert any(s.reason == "step:sms:cancelled" for s in view.snapshots)


async def test_first_mode_race_where_both_succeed_keeps_store_and_memory_in_step(
    make_service: Make, tools: Tools, redis_url: str
) -> None:
    # Both racers finish at once: the loser's cancellation can land while it saves its own
    # success. The snapshot must still be written exactly once, so the workflow goes on to
    # wait for input and the store (what another worker sees) says so too.
    tools.behaviour["sms"] = lambda attempt: 0.002
    tools.behaviour["captcha"] = lambda attempt: 0.002
    definition = workflow(
        {"name": "race", "mode": "first", "steps": [step("sms"), step("captcha")]},
        {"name": "verify", "steps": [step("check", wait_for="code")]},
    )
    from hermes_desk.workflows.redis_store import RedisSnapshotStore

    store = RedisSnapshotStore(redis_url)
    async with make_service(definition, store=store) as service:
        for _ in range(40):
            view = await service.start("wf", {}, tenant="t", user="u", session_id="s")
            assert view.status == "waiting_input"
            stored = await service.store.load(view.id)
            assert stored is not None and stored.status == "waiting_input"
            assert stored.seq == view.seq
            waiting = await service.find_waiting("s")
            assert waiting is not None and waiting.id == view.id
            done = await service.provide_input(view.id, {"code": "1"})
            assert done.status == "completed"
    await store.aclose()


async def test_first_mode_ignores_a_failed_step_while_another_can_still_win(
    make_service: Make, tools: Tools
) -> None:
    tools.fail("sms", 99, retryable=False)
    tools.behaviour["captcha"] = lambda attempt: 0.05
    race = {"name": "race", "mode": "first", "steps": [step("sms"), step("captcha")]}
    async with make_service(workflow(race)) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
    assert view.status == "completed"
    assert statuses(view) == {"sms": "failed", "captcha": "succeeded"}


async def test_first_mode_fails_when_every_step_fails(make_service: Make, tools: Tools) -> None:
    tools.fail("sms", 99, retryable=False)
    tools.fail("captcha", 99, retryable=False)
    definition = workflow(
        {
            "name": "race",
            "mode": "first",
            "on_failure": "escalate",
            "steps": [step("sms"), step("captcha")],
        }
    )
    async with make_service(definition) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
    assert view.status == "escalated"


async def test_a_timeout_is_recorded_and_retried_then_fails(
    make_service: Make, tools: Tools
) -> None:
    tools.behaviour["hang"] = lambda attempt: 30.0
    settings = WorkflowSettings(step_timeout_s=0.05, max_retries=1, retry_backoff_s=0.0)
    definition = workflow({"name": "p", "steps": [step("hang")]})
    async with make_service(definition, settings=settings) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
        events = service.events.events(name="workflow.step_retry")  # type: ignore[attr-defined]
    assert view.status == "failed"
    hang = view.steps[0]
    assert (hang.status, hang.attempts) == ("timeout", 2)
    assert "no answer within" in (hang.error or "")
    assert [e.data["status"] for e in events] == ["timeout"]


async def test_retry_with_backoff_succeeds(make_service: Make, tools: Tools) -> None:
    tools.fail("flaky", 2)
    definition = workflow({"name": "p", "steps": [step("flaky")]})
    async with make_service(definition) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
    assert view.status == "completed"
    assert view.steps[0].attempts == 3
    # Every attempt carried the same idempotency key: the backend can deduplicate.
    assert len({c[2] for c in tools.calls}) == 1


async def test_a_non_retryable_error_is_not_retried(make_service: Make, tools: Tools) -> None:
    tools.fail("bad", 99, retryable=False)
    definition = workflow({"name": "p", "steps": [step("bad")]})
    async with make_service(definition) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
    assert (view.status, view.steps[0].attempts) == ("failed", 1)


async def test_a_failure_follows_the_fallback_branch(make_service: Make, tools: Tools) -> None:
    tools.fail("refund", 99)
    definition = workflow(
        {"name": "act", "steps": [step("refund", on_failure="handoff")]},
        branches={"handoff": [{"name": "ticket_phase", "steps": [step("ticket")]}]},
        branch_outcome={"handoff": "escalated"},
    )
    async with make_service(definition) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
    assert view.status == "escalated"
    assert view.route == "handoff"
    assert statuses(view) == {"refund": "failed", "ticket": "succeeded"}
    assert view.failed_step == "refund"


async def test_expect_mismatch_is_a_rejection_without_retry(
    make_service: Make, tools: Tools
) -> None:
    tools.behaviour["check"] = lambda attempt: {"registered": False}
    definition = workflow({"name": "p", "steps": [step("check", expect={"registered": True})]})
    async with make_service(definition) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
    assert view.status == "failed"
    assert (view.steps[0].status, view.steps[0].attempts) == ("rejected", 1)


@pytest.mark.parametrize(("status", "outcome"), [("paid", "succeeded"), ("refunded", "rejected")])
async def test_expect_a_list_is_one_of_its_values(
    make_service: Make, tools: Tools, status: str, outcome: str
) -> None:
    """``expect: {status: [paid, shipped]}``: the return's pre-check lets a returnable order on
    and stops a refunded one before anything is put forward."""
    tools.behaviour["check"] = lambda attempt: {"status": status}
    expect = {"status": ["paid", "shipped", "delivered"]}
    definition = workflow({"name": "p", "steps": [step("check", expect=expect)]})
    async with make_service(definition) as service:
        view = await service.start("wf", {}, tenant="t", user="u")
    assert view.steps[0].status == outcome
    assert view.status == ("completed" if outcome == "succeeded" else "failed")


async def test_stopping_the_service_mid_step_leaves_no_ghost(
    make_service: Make, tools: Tools
) -> None:
    tools.behaviour["hang"] = lambda attempt: 30.0
    definition = workflow({"name": "p", "steps": [step("hang")]})
    async with make_service(definition) as service:
        started = await service.start("wf", {}, tenant="t", user="u", wait_s=0.05)
        assert started.status == "running"
    async with make_service(definition) as service:
        view = await service.get(started.id)
    assert view.status == "failed"
    assert view.steps[0].status == "cancelled"


async def test_a_missing_required_input_is_refused(make_service: Make) -> None:
    from hermes_desk.errors import ValidationError

    definition = workflow(
        {"name": "p", "steps": [step("s", arguments={"v": "$inputs.v"})]},
        inputs={"v": {"required": True}},
    )
    async with make_service(definition) as service:
        with pytest.raises(ValidationError):
            await service.start("wf", {}, tenant="t", user="u")


async def test_views_mask_personal_values(make_service: Make, tools: Tools) -> None:
    tools.behaviour["s"] = lambda attempt: {"code": "123456"}
    definition = workflow(
        {"name": "p", "steps": [step("s", arguments={"phone": "$inputs.phone"})]},
        inputs={"phone": {"required": True}},
    )
    async with make_service(definition) as service:
        view = await service.start("wf", {"phone": "13800138000"}, tenant="t", user="u")
    dumped = json.loads(view.model_dump_json())
    # Looked for where the values are and in every text, not in the whole dump, whose
    # timestamps' digits may hold "123456".
    assert dumped["inputs"]["phone"] != "13800138000"
    assert dumped["steps"][0]["output"]["code"] != "123456"
    texts = list(_strings(dumped))
    assert not any("13800138000" in t or "123456" in t for t in texts)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


async def test_concurrent_workflows_are_independent(make_service: Make, tools: Tools) -> None:
    definition = workflow({"name": "p", "mode": "all", "steps": [step("a"), step("b")]})
    views: list[Any] = []
    async with make_service(definition) as service:

        async def one() -> None:
            views.append(await service.start("wf", {}, tenant="t", user="u"))

        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(one)
    assert {v.status for v in views} == {"completed"}
    assert len(tools.calls) == 40
