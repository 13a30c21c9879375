"""A detail the customer gives while a write waits amends the proposal; the agent approves only
what they saw (its revision), and nothing else about the proposal can be changed that way."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from hermes_desk.actions import ActionService, Proposal
from hermes_desk.errors import ConflictError, ValidationError
from hermes_desk.events import MemorySink
from tests.actions.helpers import one_tool_service

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def written() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def service(written: list[dict[str, Any]]) -> ActionService:
    async def create_return(order_id: str, reason: str, user_id: str) -> dict[str, Any]:
        written.append({"order_id": order_id, "reason": reason, "user_id": user_id})
        return {"return_id": f"RT{len(written)}", "reason": reason}

    return one_tool_service(
        "create_return",
        create_return,
        properties={
            "order_id": {"type": "string", "pattern": "^[0-9]{12}$"},
            "reason": {"type": "string", "minLength": 1, "maxLength": 20},
            "user_id": {"type": "string", "minLength": 1},
        },
        explain={"zh": "为订单 {order_id} 创建退货单（原因：{reason}）", "en": "return {order_id}"},
    )


async def _proposed(service: ActionService) -> Proposal:
    return await service.propose(
        tenant="default", user="u1001", session_id="ses_1", tool="create_return",
        arguments={"order_id": "202405181001", "reason": "客户申请退货", "user_id": "u1001"},
        why={"intent": "return_exchange", "rule": "test"}, language="zh",
    )  # fmt: skip


async def test_the_amended_proposal_is_what_runs(
    service: ActionService, written: list[dict[str, Any]]
) -> None:
    shown = await _proposed(service)
    amended = await service.amend(
        shown.id, {"reason": "尺码太小了"}, tenant="default", user="u1001"
    )
    assert amended.revision == 1 and amended.arguments["reason"] == "尺码太小了"
    assert "原因：尺码太小了" in amended.explanation
    assert isinstance(service.events, MemorySink)
    [event] = service.events.events(name="action.amended")
    assert event.data["changed"] == ["reason"] and event.data["revision"] == 1
    with pytest.raises(ConflictError, match="changed since it was shown"):
        await service.approve(shown.id, tenant="default", user="u1001", agent_id="a1", revision=0)
    assert written == [], "what the agent saw is not what would run: nothing runs"
    done = await service.approve(
        shown.id, tenant="default", user="u1001", agent_id="a1", revision=1
    )
    assert done.status == "executed"
    assert written == [{"order_id": "202405181001", "reason": "尺码太小了", "user_id": "u1001"}]


async def test_an_amendment_never_changes_the_customer_nor_breaks_the_schema(
    service: ActionService,
) -> None:
    shown = await _proposed(service)
    with pytest.raises(ValidationError, match="names the customer"):
        await service.amend(shown.id, {"user_id": "u1002"}, tenant="default", user="u1001")
    with pytest.raises(ValidationError, match="do not fit the tool"):
        await service.amend(shown.id, {"reason": "太" * 21}, tenant="default", user="u1001")
    stored = await service.get(shown.id, tenant="default", user="u1001")
    assert stored.revision == 0 and stored.arguments == shown.arguments
    assert isinstance(service.events, MemorySink)
    refused = [e.data for e in service.events.events(name="action.amend_refused")]
    assert [(e["changed"], e["error"]) for e in refused] == [
        (["user_id"], "validation_error"),
        (["reason"], "validation_error"),
    ]
    assert "太" not in str(refused) and "u1002" not in str(refused), "no value in the audit"
    assert service.events.events(name="action.amended") == []


async def test_a_decided_proposal_is_not_amended(service: ActionService) -> None:
    shown = await _proposed(service)
    await service.reject(shown.id, tenant="default", user="u1001", agent_id="a1", reason="no")
    with pytest.raises(ConflictError, match="rejected already"):
        await service.amend(shown.id, {"reason": "尺码太小了"}, tenant="default", user="u1001")
    assert isinstance(service.events, MemorySink)
    [refused] = service.events.events(name="action.amend_refused")
    assert refused.data["error"] == "conflict" and refused.data["status"] == "rejected"


async def test_two_updates_of_one_topic_at_once_leave_one_proposal(service: ActionService) -> None:
    """Each update of a topic's proposal (one ticket per complaint) is a new revision; the one
    that loses the race updates the winner's, never a second proposal beside it."""

    async def propose(reason: str) -> None:
        await service.propose(
            tenant="default", user="u1001", session_id="ses_1", tool="create_return",
            arguments={"order_id": "202405181001", "reason": reason, "user_id": "u1001"},
            why={"rule": "test"}, language="zh", topic="create_return:202405181001",
        )  # fmt: skip

    await propose("客户申请退货")
    async with anyio.create_task_group() as group:
        group.start_soon(propose, "尺码太小了")
        group.start_soon(propose, "颜色不喜欢")
    [only] = await service.for_session("ses_1", tenant="default", user="u1001")
    assert only.revision == 2 and only.arguments["reason"] in ("尺码太小了", "颜色不喜欢")
