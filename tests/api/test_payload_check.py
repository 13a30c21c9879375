"""The request guard's quick check (``check_json``) gives parse_json's verdict on every body:
the same acceptance, the same refusal with the same code, message and problems."""

from __future__ import annotations

import json

import pytest

from hermes_desk.api.payload import MAX_DEPTH, PayloadError, check_json, parse_json


def _nested(depth: int) -> bytes:
    return ("[" * depth + "]" * depth).encode()


BODIES: list[bytes] = [
    b'{"user_id": "u1001", "text": "\xe6\x88\x91\xe7\x9a\x84\xe8\xae\xa2\xe5\x8d\x95"}',
    b'{"text": "\\ud83d\\ude00"}',  # a surrogate pair: one emoji
    b'{"text": "\\ud800"}',  # a lone surrogate, escaped
    b'{"\\udc00": 1}',  # in a key
    b'"\xed\xa0\x80"',  # a lone surrogate as raw bytes (not UTF-8)
    b'{"x": NaN}',  # json.loads takes NaN, orjson does not
    b"[1e999]",
    b"123456789012345678901234567890",
    b'{"a": 1} trailing',
    b"{'single': 'quotes'}",
    b"\xef\xbb\xbf{}",  # a UTF-8 byte-order mark
    json.dumps({"text": "hi"}).encode("utf-16"),
    b'{"a": 1, "a": 2}',
    b"\xff\xfe\x00",
    _nested(MAX_DEPTH - 1),
    _nested(MAX_DEPTH),
    _nested(MAX_DEPTH + 1),
    _nested(2_000),  # deeper than either parser recurses
    b'{"deep": ' + _nested(MAX_DEPTH) + b"}",
    b'["[[[[", "]]]]"]',  # brackets inside strings are not nesting
]


def _verdict(check: object, raw: bytes) -> tuple[str, str, list[object]] | None:
    try:
        check(raw)  # type: ignore[operator]
    except PayloadError as exc:
        return exc.code, exc.message, exc.problems
    return None


@pytest.mark.parametrize("raw", BODIES, ids=range(len(BODIES)))
def test_the_quick_check_gives_parse_jsons_verdict(raw: bytes) -> None:
    assert _verdict(check_json, raw) == _verdict(parse_json, raw)


def test_the_bodies_cover_acceptance_and_every_refusal() -> None:
    codes = {(_verdict(parse_json, raw) or ("accepted",))[0] for raw in BODIES}
    assert codes == {"accepted", "invalid_json", "invalid_text", "too_deep"}
