"""The conversation's own moves: a request the customer takes back is withdrawn, never left for
the agent to approve."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_desk.actions import Proposal
from hermes_desk.assist.converse import conversation_plan
from hermes_desk.packs import Pack, load_pack

from .test_decide import reading


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack("ecommerce")


def _proposal(pid: str, order: str, status: str = "proposed", **extra: Any) -> Proposal:
    return Proposal(
        id=pid, tenant="default", user="u1", session_id="s", tool="create_return",
        arguments={"order_id": order, "user_id": "u1"}, why={}, explanation="", language="zh",
        created_at=float(pid[-1]), expires_at=600, status=status,  # type: ignore[arg-type]
        **extra,
    )  # fmt: skip


def _plan(pack: Pack, text: str, proposals: list[Proposal], **extra: Any) -> Any:
    turn = reading(pack, "return_exchange", text, proposals=proposals, **extra)
    return conversation_plan(turn, pack.acts, lambda _text: [])


@pytest.mark.parametrize(
    "text",
    [
        "算了不退了",
        "我还是留着吧",
        "actually never mind, I'll keep it",
        "cancel my return request please",
    ],
)
def test_a_request_taken_back_withdraws_what_waits(pack: Pack, text: str) -> None:
    plan = _plan(pack, text, [_proposal("act_1", "202405181001"), _proposal("act_2", "2024")])
    assert plan is not None and plan.situation == "proposal_withdrawn"
    assert plan.withdraw == ("act_1", "act_2")
    assert plan.lookups == () and plan.writes == () and plan.workflow is None


def test_naming_an_order_withdraws_only_its_proposal(pack: Pack) -> None:
    waiting = [_proposal("act_1", "202405181001"), _proposal("act_2", "202405201234")]
    order = {"order_id": "202405201234"}
    plan = _plan(pack, "订单202405201234不退了", waiting, slots=order)
    assert plan is not None and plan.withdraw == ("act_2",)


@pytest.mark.parametrize(
    "text",
    ["算了", "never mind", "不用了", "退货要多久", "我要退货", "我要退 不换了",
     "I changed my mind, I want my money back"],
)  # fmt: skip
def test_a_closing_or_a_request_withdraws_nothing(pack: Pack, text: str) -> None:
    """Bare "算了" / "never mind" close a conversation: nothing is withdrawn on them."""
    plan = _plan(pack, text, [_proposal("act_1", "202405181001")])
    assert plan is None or plan.withdraw == ()


def test_with_nothing_waiting_the_last_approved_is_named_not_withdrawn(pack: Pack) -> None:
    """The act stage finds it decided and the reply says it went ahead (withdraw_too_late)."""
    done = [
        _proposal("act_1", "202405181001", status="rejected"),
        _proposal("act_2", "202405181001", status="executed"),
    ]
    plan = _plan(pack, "算了不退了", done)
    assert plan is not None and plan.withdraw == ("act_2",)
    assert _plan(pack, "算了不退了", done[:1]) is None
    assert _plan(pack, "算了不退了", []) is None
