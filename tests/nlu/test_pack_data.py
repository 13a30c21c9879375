"""The bundled pack's training file: size, labels, languages, slot annotations."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import yaml

from hermes_desk.nlu import SlotExtractor, load_conversations, load_examples
from hermes_desk.packs import load_pack
from hermes_desk.testing import FakeClock

RULES = load_pack("ecommerce").slot_rules

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
    extractor = SlotExtractor(RULES, FakeClock())
    annotated = [e for e in load_examples(PACK / "nlu.jsonl") if e.slots]
    assert annotated
    for e in annotated:
        found = extractor.extract(e.text)
        assert {k: found.get(k) for k in e.slots} == e.slots, e.text


def _normalised(text: str) -> str:
    return re.sub(r"[\s\W_]+", "", text.lower())


def test_evaluation_sets_share_no_utterance_with_training_data() -> None:
    training = {_normalised(e.text) for e in load_examples(PACK / "nlu.jsonl")}
    dialogues = [c for f in PACK.glob("dialogues*.jsonl") for c in load_conversations(f)]
    assert len(dialogues) >= 400
    training |= {_normalised(t.text) for c in dialogues for t in c.turns}
    evaluation = [e.text for e in load_examples(PACK / "nlu_heldout.jsonl")]
    for name in ("conversations", "conversations_dev", "conversations_dev2", "conversations_test"):
        convs = load_conversations(PACK / f"{name}.jsonl")
        assert {len(c.turns) for c in convs} == {5}, name
        evaluation += [t.text for c in convs for t in c.turns]
    # Topic switches (two to four turns): a switch in its second turn or later.
    switches = load_conversations(PACK / "conversations_switch.jsonl")
    assert len(switches) >= 30 and all(
        {t.intent for t in c.turns[1:]} - {c.turns[0].intent} for c in switches
    )
    evaluation += [t.text for c in switches for t in c.turns]
    # Written apart: common phrases ("I forgot my password", "great thanks") recur verbatim, as
    # they do in real chats (about 7 % of the sentences here), but a set copied from the
    # training data would share most of its sentences. Bare values are left out.
    sentences = [t for t in evaluation if len(_normalised(t)) > 8 and not t.strip().isdigit()]
    shared = [t for t in sentences if _normalised(t) in training]
    assert len(shared) <= 0.1 * len(sentences), shared
