"""Strict parsing: only the exact shapes are tool calls; nothing is repaired."""

from __future__ import annotations

import json

import pytest

from hermes_desk.tools import ParseFailure, ToolCall, parse_tool_call


@pytest.mark.parametrize(
    "raw",
    [
        {"name": "get_order", "arguments": {"order_id": "202405201234"}},
        '{"name": "get_order", "arguments": {"order_id": "202405201234"}}',
        {"id": "c1", "name": "get_order", "arguments": {"order_id": "202405201234"}},
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_order", "arguments": '{"order_id": "202405201234"}'},
        },
        {
            "type": "tool_use",
            "id": "tu_1",
            "name": "get_order",
            "input": {"order_id": "202405201234"},
        },
        ToolCall("get_order", {"order_id": "202405201234"}),
    ],
)
def test_accepted_forms(raw: object) -> None:
    call = parse_tool_call(raw)
    assert isinstance(call, ToolCall)
    assert call.name == "get_order"
    assert call.arguments == {"order_id": "202405201234"}


@pytest.mark.parametrize(
    ("raw", "guess"),
    [
        ('Sure! {"name": "get_order", "arguments": {}}', None),
        ('```json\n{"name": "get_order", "arguments": {}}\n```', None),
        ({"name": "get_order"}, "get_order"),
        ({"name": "get_order", "arguments": "order 1"}, "get_order"),
        ({"name": "get_order", "arguments": {}, "confidence": 0.9}, "get_order"),
        ({"tool": "get_order", "args": {}}, None),
        ({"name": "", "arguments": {}}, None),
        ({"name": 3, "arguments": {}}, None),
        (["get_order", {}], None),
        (None, None),
        (
            {"type": "function", "function": {"name": "get_order", "arguments": "{oops"}},
            "get_order",
        ),
        ({"type": "function", "function": {"name": "get_order", "arguments": "[1]"}}, "get_order"),
        ({"type": "tool_use", "name": "get_order", "input": [1]}, "get_order"),
    ],
)
def test_anything_else_is_a_parse_failure(raw: object, guess: str | None) -> None:
    failure = parse_tool_call(raw)
    assert isinstance(failure, ParseFailure)
    assert failure.reason
    assert failure.name == guess


def test_bytes_json_is_accepted_and_arguments_are_copied() -> None:
    args = {"q": "运费"}
    call = parse_tool_call(json.dumps({"name": "kb_search", "arguments": args}).encode())
    assert isinstance(call, ToolCall) and call.arguments == args
