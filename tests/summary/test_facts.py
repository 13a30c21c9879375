"""What a summary is written from, the disposition it proposes, and its offline text."""

from __future__ import annotations

import re

import pytest

from hermes_desk.actions import Proposal
from hermes_desk.packs import Pack, load_labels, load_pack
from hermes_desk.sessions import Session, Turn
from hermes_desk.summary import gather, offline_summary, outcome_of
from hermes_desk.workflows import WITHDRAWN_BY_CUSTOMER, WorkflowView


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack("ecommerce")


def _session(*turns: Turn, slots: dict[str, object] | None = None) -> Session:
    return Session(
        id="ses_1",
        tenant="acme",
        user="u1001",
        created_at=1.0,
        last_active=2.0,
        turns=list(turns),
        slots=dict(slots or {}),
    )


def _said(text: str, intent: str, **meta: object) -> Turn:
    return Turn("user", text, meta={"intent": intent, **meta})


def _proposal(status: str, tool: str = "create_ticket") -> Proposal:
    return Proposal(
        id="act_1",
        tenant="acme",
        user="u1001",
        session_id="ses_1",
        tool=tool,
        arguments={},
        why={},
        explanation="开投诉工单",
        language="zh",
        created_at=1.0,
        expires_at=100.0,
        status=status,  # type: ignore[arg-type]
    )


def test_the_sentiment_trend_is_told_when_turns_carry_it(pack: Pack) -> None:
    session = _session(
        _said(
            "我真的很生气，快递三天没动", "logistics", sentiment={"label": "negative", "score": 0.9}
        ),
        _said("好的，谢谢", "logistics", sentiment={"label": "neutral", "score": 0.6}),
    )
    facts = gather(session, pack)
    assert facts.sentiment == ["negative", "neutral"]
    text = offline_summary(facts, "after_contact", disposition="已解决")
    assert "客户情绪：负面 → 中性" in text


def test_without_sentiment_nothing_is_said_about_it(pack: Pack) -> None:
    facts = gather(_session(_said("where is my parcel", "logistics")), pack)
    assert facts.language == "en" and facts.sentiment == []
    assert "sentiment" not in offline_summary(facts, "after_contact", disposition="Resolved")


def test_the_language_turns_carry_wins_over_the_script(pack: Pack) -> None:
    session = _session(
        _said("订单 202405201234", "order_status", language="en"),
        _said("ok thanks", "order_status", language="en"),
    )
    assert gather(session, pack).language == "en"


@pytest.mark.parametrize(
    ("proposals", "kind", "outcome"),
    [
        ([], "transfer", "transferred"),
        ([_proposal("proposed")], "after_contact", "pending_customer"),
        ([_proposal("executed")], "after_contact", "resolved"),
        ([_proposal("rejected")], "after_contact", "unresolved"),
    ],
)
def test_the_outcome_follows_what_happened(
    pack: Pack, proposals: list[Proposal], kind: str, outcome: str
) -> None:
    session = _session(_said("我要投诉", "complaint"))
    facts = gather(session, pack, proposals=proposals)
    assert outcome_of(facts, kind) == outcome  # type: ignore[arg-type]


def test_questions_alone_are_information_only(pack: Pack) -> None:
    session = _session(_said("退款多久到账", "kb_question"))
    facts = gather(session, pack)
    assert outcome_of(facts, "after_contact") == "informational"
    assert pack.dispositions.for_outcome("informational") == "information_only"


def test_the_summary_names_slots_lookups_actions_and_open_items(pack: Pack) -> None:
    session = _session(
        _said("我要投诉，订单202405201234", "complaint"),
        Turn("agent", "call get_order", tool_call_id="c1", name="get_order"),
        Turn("tool", '{"order_id": "202405201234"}', tool_call_id="c1", name="get_order"),
        Turn("agent", "call get_shipment", tool_call_id="c2", name="get_shipment"),
        Turn("tool", '{"status": "timeout"}', tool_call_id="c2", name="get_shipment"),
        slots={"order_id": "202405201234", "phone": "139****5678"},
    )
    facts = gather(session, pack, proposals=[_proposal("proposed")])
    text = offline_summary(facts, "after_contact", disposition="待客户回复")
    assert "客户诉求：投诉" in text
    assert "关键信息：订单号 202405201234；手机号 139****5678" in text
    assert "get_order（成功）" in text and "get_shipment（timeout）" in text
    assert "操作：开投诉工单（待批准）" in text
    assert "未决事项：待坐席批准：开投诉工单" in text
    assert text.endswith("建议结案类型：待客户回复。")


def test_the_packs_own_slots_are_told_by_its_labels_and_codes_never(pack: Pack) -> None:
    session = _session(
        _said("我昨天买的耳机想退货", "return_exchange"),
        slots={"order_id": "202405201234", "product": "耳机", "sms_code": "482913"},
    )
    facts = gather(session, pack, labels=load_labels(pack))
    assert facts.slots == {"订单号": "202405201234", "商品": "耳机"}
    text = offline_summary(facts, "after_contact", disposition="已解决")
    assert "商品 耳机" in text and "482913" not in text


def test_an_english_summary_spaces_its_sentences_and_names_who_a_workflow_waits_for(
    pack: Pack,
) -> None:
    def waiting(name: str, slot: str) -> WorkflowView:
        return WorkflowView.model_validate({
            "id": f"wf_{name}", "name": name, "status": "waiting_input", "tenant": "acme",
            "session_id": "ses_1", "route": "main", "phase": "action", "waiting_for": slot,
            "error": None, "failed_step": None, "created_at": 0, "updated_at": 0,
            "deadline_at": None, "finished_at": None, "duration_ms": None, "seq": 1,
            "inputs": {}, "steps": [], "phases": [], "snapshots": [],
        })  # fmt: skip

    session = _session(
        _said("I want to return order 202405201234", "return_exchange", language="en"),
        slots={"order_id": "202405201234"},
    )
    workflows = [waiting("return_refund", "approval:create_return"), waiting("reset", "sms_code")]
    for language, by_agent, by_customer in (
        (
            "en",
            "return_refund (waiting for the agent's approval)",
            "reset (waiting for the customer)",
        ),
        ("zh", "return_refund（等待坐席确认）", "reset（等待客户）"),
    ):
        facts = gather(session, pack, workflows=workflows)
        facts.language = language
        text = offline_summary(facts, "after_contact", disposition="x")
        assert by_agent in text and by_customer in text, text
    english = offline_summary(gather(session, pack), "after_contact", disposition="Pending")
    assert english.startswith("Customer asked about: ") and ". Key details: " in english
    assert re.search(r"\.[A-Z]", english) is None, english
    assert english.endswith(". Proposed disposition: Pending."), english


def test_a_request_the_customer_took_back_is_no_failure(pack: Pack) -> None:
    """The return workflow ends as failed when its write is withdrawn: the summary says the
    customer took it back, and the contact is not proposed as unresolved."""
    ended = WorkflowView.model_validate({
        "id": "wf_1", "name": "return_refund", "status": "failed", "tenant": "acme",
        "session_id": "ses_1", "route": "main", "phase": "action", "waiting_for": None,
        "error": None, "failed_step": "create_return", "created_at": 0, "updated_at": 0,
        "deadline_at": None, "finished_at": 1, "duration_ms": 1, "seq": 2,
        "inputs": {}, "steps": [], "phases": [], "snapshots": [],
    })  # fmt: skip
    withdrawn = _proposal("withdrawn", tool="create_return")
    withdrawn.workflow_id = "wf_1"
    rejected = _proposal("rejected", tool="create_return")
    rejected.workflow_id = "wf_1"
    session = _session(_said("我要退货", "return_exchange"), _said("算了不退了", "return_exchange"))
    facts = gather(session, pack, proposals=[withdrawn], workflows=[ended])
    assert facts.workflows[0]["status"] == "withdrawn"
    assert outcome_of(facts, "after_contact") == "resolved"
    assert "return_refund（客户已撤回）" in offline_summary(facts, "after_contact", disposition="x")
    # Rejected by the agent, the same workflow reads as rejected (not "执行失败"): unresolved.
    facts = gather(session, pack, proposals=[rejected], workflows=[ended])
    assert facts.workflows[0]["status"] == "rejected"
    assert outcome_of(facts, "after_contact") == "unresolved"
    assert "return_refund（已拒绝）" in offline_summary(facts, "after_contact", disposition="x")
    # A workflow taken back while it waited for the customer has no proposal: its view says so.
    reset = ended.model_copy(
        update={"id": "wf_2", "name": "password_reset", "error": WITHDRAWN_BY_CUSTOMER,
                "withdrawn": True}
    )  # fmt: skip
    facts = gather(session, pack, workflows=[reset])
    assert facts.workflows[0]["status"] == "withdrawn"
    assert outcome_of(facts, "after_contact") == "resolved"
    failed = reset.model_copy(update={"error": "workflow deadline exceeded", "withdrawn": False})
    assert gather(session, pack, workflows=[failed]).workflows[0]["status"] == "failed"
