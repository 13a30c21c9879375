"""The pack's evaluation data and knowledge base agree with the intents and the demo backend."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from demo_backend import load_sample_data

PACK = Path(__file__).resolve().parents[2] / "src" / "hermes_desk" / "packs" / "ecommerce"
ORDER_ID = re.compile(r"(?<!\d)\d{12}(?!\d)")
PHONE = re.compile(r"(?<!\d)1[3-9]\d{9}(?!\d)")
HAN = re.compile(r"[\u4e00-\u9fff]")


def _jsonl(name: str) -> list[dict[str, Any]]:
    lines = (PACK / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _intents() -> set[str]:
    data = yaml.safe_load((PACK / "intents.yaml").read_text(encoding="utf-8"))
    return set(data["intents"])


def _known_ids() -> tuple[set[str], set[str]]:
    data = load_sample_data()
    return {o["order_id"] for o in data["orders"]}, {u["phone"] for u in data["users"]}


def test_heldout_nlu_set() -> None:
    rows = _jsonl("nlu_heldout.jsonl")
    intents = _intents()
    assert len(rows) >= 120
    counts = Counter(row["intent"] for row in rows)
    assert set(counts) == intents
    assert min(counts.values()) >= 12
    assert len({row["text"] for row in rows}) == len(rows)
    chinese = sum(bool(HAN.search(row["text"])) for row in rows) / len(rows)
    assert 0.6 <= chinese <= 0.8


def test_conversations() -> None:
    rows = _jsonl("conversations.jsonl")
    intents = _intents()
    assert len(rows) >= 25
    assert len({row["id"] for row in rows}) == len(rows)
    for row in rows:
        assert len(row["turns"]) == 5, row["id"]
        for turn in row["turns"]:
            assert turn["text"].strip() and turn["intent"] in intents, row["id"]


def test_keyfacts_set() -> None:
    rows = _jsonl("keyfacts_eval.jsonl")
    assert len(rows) >= 160
    positive = sum(row["key_fact"] is True for row in rows) / len(rows)
    chinese = sum(row["lang"] == "zh" for row in rows) / len(rows)
    assert 0.4 <= positive <= 0.6
    assert 0.5 <= chinese <= 0.7
    assert {row["lang"] for row in rows} == {"zh", "en"}


def test_ids_in_pack_data_exist_in_the_backend() -> None:
    orders, phones = _known_ids()
    texts = [row["text"] for row in _jsonl("nlu_heldout.jsonl")]
    texts += [t["text"] for row in _jsonl("conversations.jsonl") for t in row["turns"]]
    for text in texts:
        for order_id in ORDER_ID.findall(text):
            assert order_id in orders, text
        for phone in PHONE.findall(text):
            assert phone in phones, text


def test_knowledge_base_articles() -> None:
    articles = sorted((PACK / "kb").glob("*.md"))
    assert len(articles) >= 18
    chinese = bilingual = 0
    for path in articles:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", path.stem), path.name
        text = path.read_text(encoding="utf-8")
        if text.startswith("---\n"):  # front matter: what the article says for some states
            text = text[4:].partition("\n---\n")[2]
        title, _, body = text.partition("\n")
        assert title.startswith("# ") and len(title) > 2, path.name
        paragraphs = [p.strip() for p in body.split("\n\n") if p.strip()]
        zh = "\n\n".join(p for p in paragraphs if HAN.search(p))
        en = "\n\n".join(p for p in paragraphs if not HAN.search(p))
        # An article answers in Chinese, in English, or both (the passage quoted is in the
        # customer's language); each part stays a short article.
        assert 150 <= len(body.strip()) <= 1200, (path.name, len(body.strip()))
        assert len(zh) <= 500 and len(en) <= 700, (path.name, len(zh), len(en))
        assert not zh or len(zh) >= 50, path.name
        assert not en or len(en) >= 50, path.name
        chinese += bool(HAN.search(title))
        bilingual += bool(zh and en)
    assert chinese >= len(articles) * 0.75
    assert bilingual >= len(articles) * 0.9, "English customers find their answers too"
