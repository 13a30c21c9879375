"""The session record's JSON: the same text the standard library wrote, and both readable."""

from __future__ import annotations

import json
import math

import pytest

from hermes_desk.sessions.blob import dumps_blob, loads_blob
from hermes_desk.sessions.session import Session, Turn


def _stdlib(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _session() -> Session:
    session = Session("s-1", "acme", "cust-1", created_at=1.5, last_active=2.25)
    session.turns.append(
        Turn("user", "订单202500000201的快递超过9天了还没到，我很着急 😡", meta={"score": 0.125})
    )
    session.turns.append(Turn("tool", '{"status": "shipped", "eta": "2026-12-03"}', name="order"))
    session.slots = {"order_id": "2025****0201", "count": 3, "flag": True, "none": None}
    return session


def test_a_session_is_written_as_the_standard_library_wrote_it_and_read_back_equal() -> None:
    data = _session().to_dict()
    text = dumps_blob(data)
    assert text == _stdlib(data)
    assert loads_blob(text) == data
    assert Session.from_dict(loads_blob(text)).turns[0].text == _session().turns[0].text


@pytest.mark.parametrize(
    "data",
    [
        {"big": 2**70},  # beyond orjson's 64-bit integers
        {1: "int key", "s": [1.5, -0.0, 1e16]},
        {"nested": [{"a": [None, True, "\u2028", "\x00"]}]},
    ],
)
def test_values_orjson_writes_differently_or_refuses_read_back_as_the_standard_library(
    data: dict[object, object],
) -> None:
    assert loads_blob(dumps_blob(data)) == json.loads(_stdlib(data))


def test_records_with_nan_the_standard_library_wrote_stay_readable() -> None:
    old = _stdlib({"score": math.nan, "ok": 1})
    read = loads_blob(old)
    assert math.isnan(read["score"]) and read["ok"] == 1


def test_what_neither_can_write_is_refused() -> None:
    with pytest.raises(TypeError):
        dumps_blob({"x": object()})
