"""``hermes-desk bench privacy``: what masking and the offline summary cost.

- masking one customer utterance (``Masker.text``): the pack's held-out utterances, and the
  same with personal numbers inserted (phones, ID cards, cards, e-mail addresses);
- masking one stored turn's record (``Masker.data``) and one event through the masking sink;
- the offline after-contact summary of a 20-turn contact (``gather`` + ``offline_summary``).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from hermes_desk.events import Event, MemorySink
from hermes_desk.masking import Masking, MaskingSink
from hermes_desk.packs import bundled_pack_path, load_pack
from hermes_desk.sessions import Session, Turn
from hermes_desk.summary import gather, offline_summary, outcome_of

__all__ = ["run_privacy_bench"]

_NUMBERS = (
    "手机号13912345678",
    "身份证110101199003071234",
    "卡号6222 0212 3456 7890 123",
    "mail zhang.san@example.com",
)


def _times_us(work: Callable[[], object], rounds: int) -> dict[str, float]:
    samples: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        samples.append((time.perf_counter() - started) * 1e6)
    samples.sort()
    return {
        "p50_us": round(statistics.median(samples), 2),
        "p95_us": round(samples[int(len(samples) * 0.95) - 1], 2),
        "rounds": rounds,
    }


def _utterances() -> list[str]:
    path = bundled_pack_path("ecommerce") / "nlu_heldout.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["text"] for line in lines if line.strip()]


def run_privacy_bench(rounds: int = 2_000) -> dict[str, Any]:
    """The figures (microseconds per operation, p50 / p95)."""
    mask = Masking().for_tenant("bench")
    plain = _utterances()
    numbered = [f"{text}，{_NUMBERS[i % len(_NUMBERS)]}" for i, text in enumerate(plain)]
    cursor = {"i": 0}

    def one(texts: list[str]) -> Callable[[], object]:
        def work() -> object:
            cursor["i"] += 1
            return mask.text(texts[cursor["i"] % len(texts)])

        return work

    record = {
        "role": "user",
        "text": numbered[0],
        "meta": {
            "intent": "password_reset",
            "slots": {"phone": "13912345678"},
            "suggestion": "验证码已发送到尾号 5678 的手机，请告诉我您收到的 6 位验证码。",
        },
    }
    sink = MaskingSink(MemorySink(maxlen=10), Masking())
    event = Event(
        "tool.call", "ses_1", 1.0, {"tenant": "bench", "arguments": {"query": numbered[1]}}
    )
    pack = load_pack("ecommerce")
    turns: list[Turn] = []
    for i in range(10):
        turns.append(Turn("user", plain[i], meta={"intent": "logistics"}))
        turns.append(
            Turn("tool", '{"status_text": "运输中"}', tool_call_id=str(i), name="get_shipment")
        )
    session = Session(
        "ses_1", "bench", "u1", 1.0, 2.0, turns=turns, slots={"order_id": "202405201234"}
    )

    def summary() -> object:
        facts = gather(session, pack)
        return offline_summary(
            facts, "after_contact", disposition=outcome_of(facts, "after_contact")
        )

    return {
        "utterances": len(plain),
        "mask_text_plain": _times_us(one(plain), rounds),
        "mask_text_with_numbers": _times_us(one(numbered), rounds),
        "mask_turn_record": _times_us(lambda: mask.data(record), rounds),
        "mask_event": _times_us(lambda: sink.emit(event), rounds),
        "offline_summary_20_turns": _times_us(summary, max(rounds // 10, 10)),
    }
