import json
import logging
import threading
from enum import Enum

import pytest

from hermes_desk.events import Event, LoggingSink, MemorySink, mask_fields, mask_value
from hermes_desk.ids import digest, new_id, session_id, user_tag


def test_sensitive_fields_are_masked_recursively() -> None:
    masked = mask_fields(
        {"phone": "13800138000", "order_id": "202405201234", "args": {"sms_code": "123456"}}
    )
    assert masked["phone"] == "*********00"
    assert masked["order_id"] == "202405201234"
    assert masked["args"]["sms_code"] == "****56"
    assert mask_value("ab") == "**"


def test_memory_sink_filters_by_request_and_name() -> None:
    sink = MemorySink(maxlen=3)
    for i in range(5):
        sink.emit(Event("tool.call", f"ses_{i % 2}", float(i), {"i": i}))
    assert [e.data["i"] for e in sink.events()] == [2, 3, 4], "bounded to the last 3"
    assert [e.data["i"] for e in sink.events(request_id="ses_0")] == [2, 4]
    assert sink.events(name="other") == []


class _Kind(Enum):
    READ = "read"


def test_the_log_line_is_the_event_as_json_whatever_it_holds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    data = {
        "text": "我的订单到哪了",  # non-ASCII text kept as it is
        "nested": {"at": 1.5, "none": None, "ok": True, "list": [1, "二"]},
        "kind": _Kind.READ,  # not JSON: written by its value
        "huge": 2**70,  # past 64 bits: the standard library writes it
    }
    with caplog.at_level(logging.INFO, logger="hermes_desk.events"):
        LoggingSink().emit(Event("tool.call", "ses_1", 7.25, data))
        LoggingSink().emit(Event("tool.call", "ses_2", 8.0, {"n": 3}))
    first, second = (json.loads(r.getMessage()) for r in caplog.records)
    assert "我的订单" in caplog.records[0].getMessage()
    assert first["event"] == "tool.call" and first["request_id"] == "ses_1" and first["at"] == 7.25
    assert first["text"] == data["text"] and first["nested"] == data["nested"]
    assert first["huge"] == 2**70 and first["kind"] in {"read", "_Kind.READ"}
    assert second == {"event": "tool.call", "request_id": "ses_2", "at": 8.0, "n": 3}


def test_session_ids_are_unique_under_concurrency_and_long() -> None:
    ids: list[str] = []
    lock = threading.Lock()

    def make() -> None:
        local = [session_id() for _ in range(2_000)]
        with lock:
            ids.extend(local)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(ids)) == len(ids) == 16_000
    assert all(len(i) >= len("ses_") + 22 for i in ids), (
        "at least 128 random bits (22 base64 chars)"
    )


def test_keyed_user_tag_is_stable_and_key_dependent() -> None:
    sid = session_id("u1001", b"k1")
    assert sid.startswith(f"ses_{user_tag('u1001', b'k1')}_")
    assert user_tag("u1001", b"k1") != user_tag("u1001", b"k2")
    assert new_id("wf").startswith("wf_")
    assert digest({"a": 1, "b": 2}) == digest({"b": 2, "a": 1})


def test_a_personal_numbers_tail_is_kept_and_a_secrets_tail_is_masked() -> None:
    masked = mask_fields(
        {"phone_tail": "5678", "code_tail": "1234", "password_tail": "ab12", "phone_tail2": "x"}
    )
    assert masked["phone_tail"] == "5678", "what the replies show anyway"
    assert masked["code_tail"] == "**34" and masked["password_tail"] == "**12"
    assert mask_fields({"phone_tail": "13800138000"})["phone_tail"] == "*********00", "not a tail"
