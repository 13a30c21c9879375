"""The hand-written feature path gives exactly what sklearn's vectorizer gives."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from hermes_desk.nlu import Example, load_conversations
from hermes_desk.nlu.features import FastFeatures, build_vectorizer, char_wb_ngrams, normalise

PACK = Path(__file__).resolve().parents[2] / "src" / "hermes_desk" / "packs" / "ecommerce"

TEXTS = [
    "我的订单到哪了",
    "帮我查下订单202405201234现在什么状态",
    "I want a REFUND for order 1234!!",
    "  spaces\t\tand\nnew lines   everywhere  ",
    "ＡＢＣ１２３ 全角字符 ｒｅｆｕｎｄ",
    "emoji 😀😡 退款😀到账了吗？？",
    "a",
    "ab",
    "abc",
    "é café naïve İstanbul ß ﬁ",
    "",
    " ",
    "\u3000\u00a0\u2003",
    "x" * 40,
    "不是这个，是另一个 not this one",
]


@pytest.mark.parametrize("text", TEXTS)
def test_char_wb_ngrams_equal_sklearns_analyzer(text: str) -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    for low, high in ((1, 5), (2, 4), (1, 1), (3, 3)):
        vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(low, high), preprocessor=normalise)
        assert char_wb_ngrams(normalise(text), low, high) == vec.build_analyzer()(text)


def test_fast_features_equal_the_vectorizers_transform() -> None:
    union = build_vectorizer()
    union.fit(TEXTS[:10])
    fast = FastFeatures(union)
    for text in TEXTS:
        expected = union.transform([text]).tocsr()
        dense = np.zeros(fast.size, dtype=np.float32)
        indices, values = fast(text)
        dense[indices] = values
        assert len(set(indices.tolist())) == len(indices)
        np.testing.assert_allclose(dense, expected.toarray()[0], rtol=1e-6, atol=1e-7)


BOUNDARY_PAIRS = [
    ("订单号 2024", "0520 1234"),  # digit groups joined into one id across the space
    ("12345", "67890"),
    ("１２３", "４５６７８"),
    ("退款", "refund please"),  # one part Chinese, the other not
    ("a_b c-d", "退款到账"),
    ("我的订单", ""),
    ("   ", "退款"),
    ("退款。", "。多久"),
    ("x" * 30, "到账了吗"),
    ("最后一个字母a", "b开头的"),
]


def test_joined_features_equal_the_joined_texts(pack_examples: list[Example]) -> None:
    """Every consecutive pair of the pack's dialogue turns (and pairs whose boundary changes
    the normalised text) gives exactly the features of the joined text."""
    union = build_vectorizer(char_min_df=1)
    union.fit([e.text for e in pack_examples])
    fast = FastFeatures(union)
    pairs = list(BOUNDARY_PAIRS)
    for path in sorted(PACK.glob("dialogues*.jsonl")):
        for conv in load_conversations(path):
            texts = [t.text for t in conv.turns]
            pairs += pairwise(texts)
    texts = [e.text for e in pack_examples]
    pairs += zip(texts[::7], texts[3::11], strict=False)
    assert len(pairs) > 2000
    for first, second in pairs:
        indices, values = fast.joined(first, second)
        expected_indices, expected_values = fast(f"{first} {second}")
        assert values.dtype == expected_values.dtype
        assert np.array_equal(indices, expected_indices), (first, second)
        assert np.array_equal(values, expected_values), (first, second)
