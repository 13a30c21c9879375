"""The bundled pack loads; broken packs are refused naming the file and the field."""

import shutil
from pathlib import Path

import pytest

from hermes_desk.errors import PackError
from hermes_desk.packs import OUT_OF_SCOPE, bundled_pack_path, load_pack


@pytest.fixture
def pack_copy(tmp_path: Path) -> Path:
    target = tmp_path / "pack"
    shutil.copytree(bundled_pack_path("ecommerce"), target)
    return target


def test_bundled_ecommerce_pack_is_complete() -> None:
    pack = load_pack("ecommerce")
    expected = {
        "order_status",
        "logistics",
        "return_exchange",
        "complaint",
        "password_reset",
        "payment_methods",
        "kb_question",
        OUT_OF_SCOPE,
    }
    assert expected <= set(pack.intents)
    assert len(pack.examples) >= 200
    assert len(list(pack.kb_dir.glob("*.md"))) >= 15
    assert pack.intents[OUT_OF_SCOPE].tools == ()
    assert {"password_reset", "return_refund"} <= set(pack.workflows)
    starters = {name: pack.starter(name) for name in ("return_refund", "password_reset", "x")}
    assert {k: v and v.name for k, v in starters.items()} == {
        "return_refund": "return_exchange", "password_reset": "password_reset", "x": None
    }  # fmt: skip
    tool_names = {spec.name for spec in pack.tool_specs}
    for intent in pack.intents.values():
        assert set(intent.tools) <= tool_names | {"kb_search"}
    zh = sum(1 for e in pack.examples if any("\u4e00" <= ch <= "\u9fff" for ch in e.text))
    assert zh > len(pack.examples) / 2, "Chinese first"


def test_fingerprint_changes_when_a_file_changes(pack_copy: Path) -> None:
    before = load_pack(pack_copy).fingerprint
    with (pack_copy / "nlu.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"text": "再问一下订单", "intent": "order_status"}\n')
    assert load_pack(pack_copy).fingerprint != before


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("file", "old", "new", "fragments"),
    [
        (
            "intents.yaml",
            "calls: [get_shipment]",
            "calls: [update_password]",
            ["intents.yaml", "order_status", "calls"],
        ),
        (
            "intents.yaml",
            "if_not_found: {get_shipment: get_order}   #",
            "if_not_found: {get_order: get_shipment}   #",
            ["intents.yaml", "order_status", "if_not_found", "get_order"],
        ),
        (
            "intents.yaml",
            "if_not_found: {get_shipment: get_order}\n",
            "if_not_found: {get_shipment: list_payment_methods}\n",
            ["intents.yaml", "logistics", "if_not_found", "list_payment_methods"],
        ),
        (
            "intents.yaml",
            "tools: [list_payment_methods]",
            "tools: [no_such_tool]",
            ["intents.yaml", "payment_methods", "tools"],
        ),
        (
            "intents.yaml",
            "workflow: password_reset",
            "workflow: nope",
            ["intents.yaml", "password_reset", "workflow"],
        ),
        (
            "intents.yaml",
            "required_slots: [order_id]",
            "required_slots: [ghost]",
            ["intents.yaml", "order_status"],
        ),
        (
            "intents.yaml",
            "done (the knowledge base).\n    kb_requests:\n      zh: [取消,",
            "done (the knowledge base).\n    kb_requests:\n      zh: [yes,",
            ["intents.yaml", "order_status", "kb_requests"],
        ),
        (
            "intents.yaml",
            "tells the courier.\n    kb_requests:\n      zh: [取消,",
            "tells the courier.\n    kb_requests:\n      zh: [' ',",
            ["intents.yaml", "logistics", "kb_requests", "empty phrase"],
        ),
        (
            "intents.yaml",
            "    kb_problems:\n      zh: [碎了,",
            "    kb_problems:\n      zh: ['',",
            ["intents.yaml", "logistics", "kb_problems", "empty phrase"],
        ),
        (
            "intents.yaml",
            "    bare_requests:\n      zh: [我要投诉,",
            "    bare_requests:\n      zh: ['',",
            ["intents.yaml", "complaint", "bare_requests", "empty phrase"],
        ),
        (
            "intents.yaml",
            "    status_reports:\n      zh: [退款还没到,",
            "    status_reports:\n      zh: ['',",
            ["intents.yaml", "return_exchange", "status_reports", "empty phrase"],
        ),
        (
            "intents.yaml",
            "    kb_topic: {zh: [投诉,",
            "    kb_topic: {zh: ['',",
            ["intents.yaml", "complaint", "kb_topic", "empty phrase"],
        ),
        (
            "intents.yaml",
            "    kb_context: {zh: 投诉,",
            "    kb_context: {zh: ' ',",
            ["intents.yaml", "complaint", "kb_context", "empty phrase"],
        ),
        (
            # a report of how a request stands, with no record to look up and say
            "intents.yaml",
            "    kb_record: get_order\n    kb_record_detail: {shipped: get_shipment}\n",
            "",
            ["intents.yaml", "return_exchange", "status_reports", "kb_record"],
        ),
        (
            # a bare request whose intent puts forward nothing that carries the customer's words
            "intents.yaml",
            "    calls: [create_ticket]\n    # The order a complaint",
            "    calls: []\n    # The order a complaint",
            ["intents.yaml", "complaint", "bare_requests", "text"],
        ),
        (
            "intents.yaml",
            "kb_requests: all",
            "kb_requests: some",
            ["intents.yaml", "payment_methods", "kb_requests"],
        ),
        (
            "intents.yaml",
            "kb_record: get_order    #",
            "kb_record: list_orders    #",
            ["intents.yaml", "order_status", "kb_record", "list_orders"],
        ),
        (
            "intents.yaml",
            "    record_check: get_order\n",
            "    record_check: get_shipment\n",
            ["intents.yaml", "complaint", "record_check", "get_shipment"],
        ),
        (
            "intents.yaml",
            "    record_check: get_order\n",
            "    record_check: create_ticket\n",
            ["intents.yaml", "complaint", "record_check", "create_ticket", "not a read tool"],
        ),
        (
            "intents.yaml",
            "kb_record_detail: {shipped: get_shipment}",
            "kb_record_detail: {shipped: list_orders}",
            ["intents.yaml", "return_exchange", "kb_record_detail", "list_orders"],
        ),
        (
            "intents.yaml",
            "kb_record_detail: {shipped: get_shipment}",
            "kb_record_detail: {shipped: create_return}",
            ["intents.yaml", "return_exchange", "kb_record_detail", "not a read tool"],
        ),
        (
            "intents.yaml",
            "    kb_record: get_order\n    kb_record_detail",
            "    kb_record_detail",
            ["intents.yaml", "return_exchange", "kb_record_detail needs kb_record"],
        ),
        (
            "intents.yaml",
            "calls_detail: {delivered: get_order,",
            "calls_detail: {delivered: list_orders,",
            ["intents.yaml", "order_status", "calls_detail", "list_orders"],
        ),
        (
            # a write named as a closer look would run with no approval: refused
            "intents.yaml",
            "calls_detail: {delivered: get_order,",
            "calls_detail: {delivered: create_return,",
            ["intents.yaml", "order_status", "calls_detail"],
        ),
        ("intents.yaml", "    out_of_scope: true", "    out_of_scope: false", ["oos"]),
        ("replies.yaml", "  order_status:", "  not_an_intent:", ["replies.yaml", "not_an_intent"]),
        ("compliance.yaml", "action: mask", "action: shout", ["compliance.yaml", "action"]),
        ("compliance.yaml", "1[3-9][0-9]{9}(?!", "1[3-9(?!", ["compliance.yaml", "patterns"]),
        ("pack.yaml", "version: 1", "version: zero", ["pack.yaml", "version"]),
        (
            "intents.yaml",
            'extractor: {name: phone, country_code: "86", groups: [3, 4, 4]}',
            'extractor: {name: phone, country_code: "86"}',
            ["intents.yaml", "password_reset", "slots.phone.extractor.groups"],
        ),
        (
            "intents.yaml",
            "extractor: reason}",
            "extractor: sentiment}",
            ["intents.yaml", "return_exchange", "slots.reason.extractor", "unknown extractor"],
        ),
        (
            "intents.yaml",
            "extractor: amount}",
            "extractor: {name: amount, currency: EUR}}",
            ["intents.yaml", "return_exchange", "slots.amount.extractor", "currency"],
        ),
        (
            "intents.yaml",
            'pattern: "^[0-9]{12}$", listed: true}',
            'pattern: "(^[0-9]{12}$", listed: true}',
            ["intents.yaml", "order_status", "slots.order_id.pattern"],
        ),
        (
            "intents.yaml",
            "listed: true}\n  password_reset",
            "listed: false}\n  password_reset",
            [
                "intents.yaml",
                "complaint",
                "slots.order_id",
                "otherwise under intent 'order_status'",
            ],
        ),
        (
            "intents.yaml",
            "  query: text",
            "  query: utterance",
            ["intents.yaml", "arguments.query"],
        ),
        (
            "pack.yaml",
            "  en: >-\n    You assist",
            "  fr: >-\n    You assist",
            ["pack.yaml", "rules", "['en']"],
        ),
        (
            "pack.yaml",
            'path: "/users/{user}/supports/{feature}"',
            'path: "/users/{user}/supports/{thing}"',
            ["pack.yaml", "verifiers.0.path", "thing"],
        ),
        (
            "pack.yaml",
            "timezone: Asia/Shanghai",
            "timezone: Mars/Olympus",
            ["pack.yaml", "timezone", "Mars/Olympus"],
        ),
        (
            "tools.yaml",
            "due: {date: eta,",
            "due: {date: arrival,",
            ["tools.yaml", "get_shipment", "due.date", "arrival"],
        ),
    ],
)
def test_bad_pack_files_are_refused_naming_file_and_field(
    pack_copy: Path, file: str, old: str, new: str, fragments: list[str]
) -> None:
    _replace(pack_copy / file, old, new)
    with pytest.raises(PackError) as info:
        load_pack(pack_copy)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_the_bundled_pack_chooses_each_slots_extractor_from_its_schema() -> None:
    pack = load_pack("ecommerce")
    chosen = {name: rule.extractor for name, rule in pack.slot_rules.items()}
    assert chosen == {
        "order_id": "pattern",
        "date": "date",
        "amount": "amount",
        "reason": "reason",
        "product": "product",
        "purchase_date": "purchase_date",
        "phone": "phone",
        "sms_code": "none",
    }
    assert {n for n, r in pack.slot_rules.items() if r.listed} == {"order_id", "phone"}
    assert pack.slot_rules["phone"].tail == 4
    assert pack.turn_arguments(user="u1", text="hi", language="en") == {
        "user_id": "u1", "query": "hi", "summary": "hi", "note": "hi", "language": "en"
    }  # fmt: skip
    schema = pack.intents["password_reset"].slot_schema["properties"]["phone"]
    assert "extractor" not in schema and "listed" not in schema and "tail" not in schema
    assert schema["pattern"] == "^1[3-9][0-9]{9}$", "the model sees the JSON Schema alone"
    assert [v.prefix for v in pack.manifest.verifiers] == ["supports_"]
    assert set(pack.manifest.rules) == {"zh", "en"}
    assert pack.manifest.timezone == "Asia/Shanghai"


def test_bad_training_line_is_refused_with_its_line_number(pack_copy: Path) -> None:
    with (pack_copy / "nlu.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"text": "hi", "intent": "no_such_intent"}\n')
    with pytest.raises(PackError, match=r"nlu.jsonl \[line \d+\] field 'intent'"):
        load_pack(pack_copy)
    (pack_copy / "nlu.jsonl").write_text("{not json\n", encoding="utf-8")
    with pytest.raises(PackError, match=r"line 1.*not valid JSON"):
        load_pack(pack_copy)


def test_bad_dialogue_is_refused_naming_file_line_and_dialogue(pack_copy: Path) -> None:
    assert len(load_pack(pack_copy).dialogues) >= 400
    bad = pack_copy / "dialogues_extra.jsonl"
    bad.write_text(
        '{"id": "ok-1", "turns": [{"text": "快递到哪了", "intent": "logistics"}]}\n'
        '{"id": "bad-1", "turns": [{"text": "hi", "intent": "oos"}, '
        '{"text": "x", "intent": "nope"}]}\n',
        encoding="utf-8",
    )
    with pytest.raises(
        PackError, match=r"dialogues_extra\.jsonl \[line 2 \(bad-1\)\] field 'intent'"
    ):
        load_pack(pack_copy)
    bad.write_text('{"id": "empty", "turns": []}\n', encoding="utf-8")
    with pytest.raises(PackError, match=r"dialogues_extra\.jsonl.*line 1.*turns"):
        load_pack(pack_copy)
    bad.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(PackError, match=r"dialogues_extra\.jsonl"):
        load_pack(pack_copy)


def test_missing_file_and_unknown_pack_are_named(pack_copy: Path, tmp_path: Path) -> None:
    (pack_copy / "replies.yaml").unlink()
    with pytest.raises(PackError, match=r"replies\.yaml: required file is missing"):
        load_pack(pack_copy)
    with pytest.raises(PackError, match="no such pack"):
        load_pack(tmp_path / "nowhere")


_ORDER_EN = '"Could you give me the 12-digit order number? I will look it up right away."'


@pytest.mark.parametrize(
    ("file", "old", "new", "fragments"),
    [
        # a reply template without its English text
        (
            "replies.yaml",
            f"      en: {_ORDER_EN}\n",
            "",
            ["replies.yaml", "order_status.missing_slots", "en"],
        ),
        # a bare string speaks one language only
        (
            "replies.yaml",
            '    missing_slots:\n      zh: "麻烦您提供一下 12 位订单号，我马上帮您查询。"\n'
            f"      en: {_ORDER_EN}",
            '    missing_slots: "麻烦您提供一下 12 位订单号。"',
            ["replies.yaml", "order_status.missing_slots", "one text per language"],
        ),
        # the conversation's own replies too
        (
            "replies.yaml",
            '    en: "You are welcome, glad I could help. Is there anything else?"\n',
            "",
            ["replies.yaml", "conversation.act_thanks", "en"],
        ),
        # a dialogue act the pack recognises but never answers
        (
            "replies.yaml",
            "  act_greeting:\n",
            "  act_greeting_unused:\n",
            ["replies.yaml", "conversation.act_greeting"],
        ),
        # a note label without its English text
        (
            "keyfacts.yaml",
            'contact_preference_no_calls: {zh: "不希望接到电话", en: "Does not want phone calls"}',
            'contact_preference_no_calls: {zh: "不希望接到电话"}',
            ["keyfacts.yaml", "labels.contact_preference_no_calls", "en"],
        ),
        (
            "keyfacts.yaml",
            "    sms: {zh: 短信, en: text message}",
            "    sms: {zh: 短信}",
            ["keyfacts.yaml", "values.contact_preference_channel.sms"],
        ),
        (
            "keyfacts.yaml",
            '  en: "(said in another open contact, not verified) {note}"\n',
            "",
            ["keyfacts.yaml", "open_contact_note", "en"],
        ),
        (
            "replies.yaml",
            "  运输中: {zh: 运输中, en: in transit}",
            "  运输中: {zh: 运输中}",
            ["terms.运输中"],
        ),
        ("acts.yaml", "  greeting:\n", "  salute:\n", ["acts.yaml", "salute"]),
        # a withdrawal that names a request the pack does not have would take back nothing
        (
            "acts.yaml",
            "  - takes_back: [create_ticket, add_ticket_note]",
            "  - takes_back: [create_tiket, add_ticket_note]",
            ["acts.yaml", "withdrawals_of[2]", "takes_back", "create_tiket"],
        ),
        (
            "acts.yaml",
            "  - takes_back: [create_ticket, add_ticket_note]",
            "  - takes_back: []",
            ["acts.yaml", "withdrawals_of[2]", "takes_back"],
        ),
        (
            "acts.yaml",
            "    zh: [不投诉了, 不用投诉了",
            "    zh: [yes, 不用投诉了",
            ["acts.yaml", "withdrawals_of[2].zh", "quote yes/no"],
        ),
    ],
)
def test_every_reply_and_note_speaks_every_language_of_the_pack(
    pack_copy: Path, file: str, old: str, new: str, fragments: list[str]
) -> None:
    _replace(pack_copy / file, old, new)
    with pytest.raises(PackError) as info:
        load_pack(pack_copy)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_the_bundled_pack_answers_every_dialogue_act_in_both_languages() -> None:
    pack = load_pack("ecommerce")
    for act in ("greeting", "thanks", "closing", "confirmation", "correction"):
        template = pack.conversation[f"act_{act}"]
        assert isinstance(template, dict) and set(template) >= {"zh", "en"}
    assert pack.acts.read("谢谢，没别的问题了").act == "closing"
