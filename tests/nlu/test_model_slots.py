from __future__ import annotations

from hermes_desk.nlu import merge_model_slots

SCHEMA = {
    "order_id": {"type": "string", "pattern": "^[0-9]{12}$"},
    "amount": {"type": "number", "minimum": 0},
    "date": {"type": "string", "format": "date"},
}


def test_valid_model_values_fill_missing_slots() -> None:
    slots, rejected = merge_model_slots({}, '{"amount": 35, "date": "2026-05-20"}', SCHEMA)
    assert slots == {"amount": 35, "date": "2026-05-20"}
    assert rejected == []


def test_deterministic_values_win() -> None:
    slots, rejected = merge_model_slots(
        {"order_id": "123456789012"}, {"order_id": "999999999999"}, SCHEMA
    )
    assert slots == {"order_id": "123456789012"}
    assert [(r.name, r.reason) for r in rejected] == [("order_id", "a format-checked value wins")]


def test_invalid_and_unknown_values_are_rejected() -> None:
    slots, rejected = merge_model_slots(
        {}, '{"order_id": "12345", "amount": -1, "date": "yesterday", "colour": "red"}', SCHEMA
    )
    assert slots == {}
    assert sorted(r.name for r in rejected) == ["amount", "colour", "date", "order_id"]


def test_non_json_is_rejected_whole() -> None:
    slots, rejected = merge_model_slots({"amount": 1.0}, "order id is 123", SCHEMA)
    assert slots == {"amount": 1.0}
    assert rejected[0].name == "*"
    _, rejected = merge_model_slots({}, "[1, 2]", SCHEMA)
    assert rejected[0].reason == "model output is not a JSON object"


def test_fenced_json_and_object_schema() -> None:
    schema = {"type": "object", "properties": SCHEMA}
    slots, _ = merge_model_slots({}, '```json\n{"amount": 2}\n```', schema)
    assert slots == {"amount": 2}
