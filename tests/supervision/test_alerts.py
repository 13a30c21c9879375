"""Alert rules of the bundled pack: each kind, the exceptions, the conversation's alerts, and
precision/recall on the labelled lines written apart from the rules."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from hermes_desk.packs import load_pack
from hermes_desk.packs.models import AlertRule, AlertRules
from hermes_desk.supervision import AlertDetector, verification_failures


@pytest.fixture(scope="module")
def detector() -> AlertDetector:
    return AlertDetector(load_pack("ecommerce").compliance.alerts)


def _kinds(alerts: list[object]) -> list[str]:
    return sorted(a.kind for a in alerts)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("再不退款我就打12315", "regulator_threat"),
        ("我要去消协投诉", "regulator_threat"),
        ("I will report you to consumer protection", "regulator_threat"),
        ("我要找媒体曝光你们", "media_threat"),
        ("I'm going to post this on social media", "media_threat"),
        ("我要起诉你们", "legal_threat"),
        ("I'm going to sue you", "legal_threat"),
        ("你是傻逼吗", "abuse"),
        ("shut up you idiot", "abuse"),
        ("再不解决我就打市长热线", "regulator_threat"),
        ("I'm complaining to the consumer affairs office", "regulator_threat"),
        ("我要把聊天记录发到朋友圈", "media_threat"),
        ("I'll share this on facebook", "media_threat"),
        ("那我们法庭见", "legal_threat"),
        ("you'll hear from my solicitor", "legal_threat"),
        ("你们客服是猪吗", "abuse"),
        ("you're such a clown", "abuse"),
    ],
)
def test_customer_lines_raise_their_kind(detector: AlertDetector, text: str, kind: str) -> None:
    alerts = detector.customer_line(text, 4)
    assert _kinds(alerts) == [kind]
    assert alerts[0].speaker == "customer" and alerts[0].turn_index == 4
    assert text not in alerts[0].message


@pytest.mark.parametrize(
    "text",
    [
        "订单号202412315001",
        "how do I report a lost parcel?",
        "我在微博上看到你们的活动",
        "an issue with my order",
        "滚筒洗衣机什么时候到",
        "你们家的狗粮有货吗",
        "发票能放到网上下载吗",
        "please send the paper invoice",
        "found you on facebook, do you ship abroad",
        "the code you sent is useless",
    ],
)
def test_ordinary_customer_lines_raise_nothing(detector: AlertDetector, text: str) -> None:
    assert detector.customer_line(text, 0) == []


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("保证今天到，绝对没问题，你的手机号13912345678对吧", ["full_number", "over_promise"]),
        ("I guarantee it arrives tomorrow", ["over_promise"]),
        ("身份证号是110101199003071234吗", ["full_number"]),
        ("卡号6222021234567890123已经登记", ["full_number"]),
        ("请把您的登录密码告诉我", ["credential_request"]),
        ("can you read me the verification code?", ["credential_request"]),
    ],
)
def test_agent_slips_raise_their_kinds(
    detector: AlertDetector, text: str, kinds: list[str]
) -> None:
    alerts = detector.agent_line(text, 2, waiting_for=None)
    assert _kinds(alerts) == kinds
    assert all(a.speaker == "agent" and a.severity in ("warning", "critical") for a in alerts)
    assert all("13912345678" not in a.message for a in alerts)


@pytest.mark.parametrize(
    "text",
    [
        "我们不能保证今天送到，但会尽快",
        "I can't guarantee a date",
        "您尾号5678的手机对吗",
        "订单202411071234已经发货了",
        "请不要把验证码告诉任何人，包括客服",
        "快递单号SF1234567890123",
    ],
)
def test_careful_agent_lines_raise_nothing(detector: AlertDetector, text: str) -> None:
    assert detector.agent_line(text, 0, waiting_for=None) == []


def test_asking_for_the_awaited_code_is_allowed_but_a_password_never(
    detector: AlertDetector,
) -> None:
    assert detector.agent_line("把收到的验证码报给我", 0, waiting_for="sms_code") == []
    assert _kinds(detector.agent_line("把收到的验证码报给我", 0, waiting_for=None)) == [
        "credential_request"
    ]
    assert _kinds(detector.agent_line("您的密码是多少", 0, waiting_for="sms_code")) == [
        "credential_request"
    ]


def test_a_negative_streak_alerts_at_the_threshold_and_each_multiple(
    detector: AlertDetector,
) -> None:
    need = detector.rules.negative_streak
    assert detector.negative_streak(["negative"] * (need - 1), 5) is None
    alert = detector.negative_streak(["neutral", *["negative"] * need], 7)
    assert alert is not None and alert.kind == "negative_streak" and alert.turn_index == 7
    assert detector.negative_streak(["negative"] * (need + 1), 8) is None
    assert detector.negative_streak(["negative"] * (2 * need), 9) is not None
    assert detector.negative_streak([*["negative"] * need, "positive"], 9) is None


def test_verification_failures_alert_when_they_reach_the_threshold(
    detector: AlertDetector,
) -> None:
    need = detector.rules.verification_failures
    assert detector.verification(0, need - 1, 3) is None
    first = detector.verification(need - 1, need, 3)
    assert first is not None and first.severity == "warning"
    assert detector.verification(need, need, 4) is None, "no new failure, no new alert"
    more = detector.verification(need, need + 1, 5)
    assert more is not None and more.severity == "critical"
    steps = [
        SimpleNamespace(input_round=1, status="pending"),
        SimpleNamespace(input_round=2, status="rejected"),
        SimpleNamespace(input_round=0, status="succeeded"),
    ]
    assert verification_failures(steps) == 4


def test_alert_rules_are_validated() -> None:
    with pytest.raises(ValidationError, match="needs phrases or patterns"):
        AlertRule(id="empty", message="m")
    with pytest.raises(ValidationError, match="not a valid regular expression"):
        AlertRule(id="bad", message="m", patterns=("(",))
    with pytest.raises(ValidationError):
        AlertRules(negative_streak=1)
    rule = AlertRule(id="full_phone", kind="full_number", message="m", patterns=("1[3-9]\\d{9}",))
    assert rule.alert_kind == "full_number"


def test_precision_and_recall_on_the_lines_labelled_apart(detector: AlertDetector) -> None:
    pack = load_pack("ecommerce")
    tp = fp = fn = 0
    lines = (pack.root / "alerts_dev.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines:
        row = json.loads(line)
        if row["speaker"] == "agent":
            found = detector.agent_line(row["text"], 0, waiting_for=row.get("waiting_for"))
        else:
            found = detector.customer_line(row["text"], 0)
        got, want = {a.kind for a in found}, set(row["alerts"])
        tp += len(got & want)
        fp += len(got - want)
        fn += len(want - got)
    assert len(lines) >= 70 and tp >= 45
    assert tp / (tp + fp) >= 0.9 and tp / (tp + fn) >= 0.9


def test_the_alert_bench_scores_every_labelled_set() -> None:
    from hermes_desk.bench.sentiment import bench_alerts

    figures = bench_alerts()
    assert set(figures) == {"dev", "eval", "eval2"}
    dev = figures["dev"]
    assert dev["lines"] >= 70 and dev["precision"] >= 0.9 and dev["recall"] >= 0.9
    for kind, row in figures["eval"]["per_kind"].items():
        assert 0 <= row["precision"] <= 1 and 0 <= row["recall"] <= 1, kind
    wrong = figures["eval"]["misses"]
    assert all(m["want"] != m["got"] for m in wrong)


def test_a_rules_phrases_hit_exactly_where_one_is_a_substring_of_the_line() -> None:
    # The phrases are searched as one alternation; the verdict must be the plain substring
    # test's, for every rule of the pack, on lines built from its phrases and their parts.
    import random

    from hermes_desk.supervision.alerts import _compile, _fold

    alerts = load_pack("ecommerce").compliance.alerts
    rng = random.Random(7)
    for item in _compile([*alerts.customer, *alerts.agent]):
        phrases = [_fold(p) for p in item.rule.phrases]
        pieces = [*phrases, *(p[: len(p) // 2] for p in phrases), "您好", "order 42", " "]
        for _ in range(200):
            line = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))
            found = item.phrases is not None and item.phrases.search(line) is not None
            assert found == any(p in line for p in phrases), (item.rule.kind, line)
