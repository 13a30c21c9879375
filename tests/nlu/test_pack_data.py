"""The bundled pack's training file: size, labels, languages, slot annotations."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import yaml

from hermes_desk.nlu import SlotExtractor, load_examples
from hermes_desk.testing import FakeClock

PACK = Path(__file__).resolve().parents[2] / "src" / "hermes_desk" / "packs" / "ecommerce"


def test_pack_training_file() -> None:
    examples = load_examples(PACK / "nlu.jsonl")
    intents = set(yaml.safe_load((PACK / "intents.yaml").read_text("utf-8"))["intents"])
    counts = Counter(e.intent for e in examples)
    assert len(examples) >= 260
    assert set(counts) == intents
    assert min(counts.values()) >= 30
    assert len({e.text for e in examples}) == len(examples)
    chinese = sum(bool(re.search(r"[\u4e00-\u9fff]", e.text)) for e in examples)
    assert 0.6 <= chinese / len(examples) <= 0.75
    assert any(e.text == "这个东西好吃吗" and e.intent == "oos" for e in examples)


def test_annotated_slots_match_the_extractors() -> None:
    extractor = SlotExtractor(FakeClock())
    annotated = [e for e in load_examples(PACK / "nlu.jsonl") if e.slots]
    assert annotated
    for e in annotated:
        found = extractor.extract(e.text)
        assert {k: found.get(k) for k in e.slots} == e.slots, e.text
