"""What a customer's earlier contacts did for them: the writes that ran there, within the
window, theirs only — never this contact's, never one waiting, rejected or failed."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_desk.actions import ActionService
from tests.actions.helpers import one_tool_service

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class StepClock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.at = 1_000_000.0

    def now(self) -> float:
        return self.at

    def monotonic(self) -> float:
        return self.at


def _service(clock: StepClock, **settings: Any) -> ActionService:
    opened: list[str] = []

    async def create_ticket(user_id: str, summary: str) -> dict[str, Any]:
        opened.append(summary)
        return {"ticket_id": f"TK{len(opened)}", "status": "open"}

    return one_tool_service(
        "create_ticket",
        create_ticket,
        properties={"user_id": {"type": "string"}, "summary": {"type": "string"}},
        explain={"zh": "创建投诉工单：{summary}", "en": "open a ticket: {summary}"},
        clock=clock,
        **settings,
    )


async def _ticket(service: ActionService, user: str, session: str, summary: str) -> Any:
    return await service.propose(
        tenant="default", user=user, session_id=session, tool="create_ticket",
        arguments={"user_id": user, "summary": summary},
        why={"intent": "complaint", "rule": "test"}, language="zh",
    )  # fmt: skip


async def test_the_writes_that_ran_in_other_contacts_within_the_window() -> None:
    clock = StepClock()
    service = _service(clock)
    first = await _ticket(service, "u1001", "ses_monday", "一直不动")
    await service.approve(first.id, tenant="default", user="u1001", agent_id="a1")
    turned_down = await _ticket(service, "u1001", "ses_monday", "态度差")
    await service.reject(turned_down.id, tenant="default", user="u1001", agent_id="a1", reason="x")
    await _ticket(service, "u1001", "ses_monday", "还在等")  # waits: nothing opened
    theirs = await _ticket(service, "u1002", "ses_other", "别人的")
    await service.approve(theirs.id, tenant="default", user="u1002", agent_id="a1")
    clock.at += 86400
    now = await _ticket(service, "u1001", "ses_tuesday", "今天的")
    await service.approve(now.id, tenant="default", user="u1001", agent_id="a1")

    earlier = await service.earlier("ses_tuesday", tenant="default", user="u1001")
    opened = {"ticket_id": "TK1", "status": "open"}
    assert [(p.id, p.result) for p in earlier] == [(first.id, opened)]
    # from the Monday contact, Tuesday's is the earlier one; oldest first
    both = await service.earlier("ses_wednesday", tenant="default", user="u1001")
    assert [p.id for p in both] == [first.id, now.id]
    assert await service.earlier("ses_x", tenant="acme", user="u1001") == []
    clock.at += 7 * 86400 - 1  # Monday's is 8 days old now, Tuesday's 7 less a second
    later = await service.earlier("ses_x", tenant="default", user="u1001")
    assert [p.id for p in later] == [now.id]


async def test_a_window_of_zero_days_knows_no_earlier_contact() -> None:
    clock = StepClock()
    service = _service(clock, earlier_contacts_days=0)
    first = await _ticket(service, "u1001", "ses_monday", "一直不动")
    await service.approve(first.id, tenant="default", user="u1001", agent_id="a1")
    clock.at += 1
    assert await service.earlier("ses_tuesday", tenant="default", user="u1001") == []
