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


def _joined_pairs(pack_examples: list[Example]) -> list[tuple[str, str]]:
    pairs = list(BOUNDARY_PAIRS)
    for path in sorted(PACK.glob("dialogues*.jsonl")):
        for conv in load_conversations(path):
            texts = [t.text for t in conv.turns]
            pairs += pairwise(texts)
    texts = [e.text for e in pack_examples]
    pairs += zip(texts[::7], texts[3::11], strict=False)
    return pairs


@pytest.mark.parametrize("seen_alone", [False, True], ids=["parts-new", "parts-remembered"])
def test_joined_features_equal_the_joined_texts(
    pack_examples: list[Example], seen_alone: bool
) -> None:
    """Every consecutive pair of the pack's dialogue turns (and pairs whose boundary changes
    the normalised text) gives exactly the features of the joined text, whether its parts were
    featurised alone before (their counts kept) or not."""
    union = build_vectorizer(char_min_df=1)
    union.fit([e.text for e in pack_examples])
    pairs = _joined_pairs(pack_examples)
    assert len(pairs) > 2000
    reference = FastFeatures(union)
    expected = [reference(f"{first} {second}") for first, second in pairs]
    fast = FastFeatures(union)
    remembered = 0
    for (first, second), (expected_indices, expected_values) in zip(pairs, expected, strict=True):
        if seen_alone:
            fast(first)
            fast(second)
            remembered += normalise(first) in fast._recent and normalise(second) in fast._recent
        else:
            fast._recent.clear()
        indices, values = fast.joined(first, second)
        assert values.dtype == expected_values.dtype
        assert np.array_equal(indices, expected_indices), (first, second)
        assert np.array_equal(values, expected_values), (first, second)
    assert remembered == (len(pairs) if seen_alone else 0)


def test_the_counts_kept_are_bounded_and_the_oldest_go_first(
    pack_examples: list[Example], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(FastFeatures, "REMEMBERED", 5)
    union = build_vectorizer(char_min_df=1)
    union.fit([e.text for e in pack_examples])
    fast = FastFeatures(union)
    texts = list(dict.fromkeys(normalise(e.text) for e in pack_examples))[:12]
    for text in texts:
        fast(text)
    assert list(fast._recent) == texts[-5:]
    fast(texts[-3])  # featurised again: kept, nothing else goes
    assert list(fast._recent) == texts[-5:]
    # A part no longer kept is counted again, with the same features.
    assert np.array_equal(fast.joined(texts[0], texts[-1])[1], fast(f"{texts[0]} {texts[-1]}")[1])


def test_a_union_of_other_parts_is_featurised_whole() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import FeatureUnion

    union = FeatureUnion(
        [("chars", TfidfVectorizer(analyzer="char", ngram_range=(1, 2), sublinear_tf=True))]
    )
    union.fit(TEXTS[:10])
    fast = FastFeatures(union)
    assert not fast._by_parts
    for first, second in BOUNDARY_PAIRS:
        expected = union.transform([f"{first} {second}"]).toarray()[0]
        dense = np.zeros(fast.size, dtype=np.float32)
        indices, values = fast.joined(first, second)
        dense[indices] = values
        np.testing.assert_allclose(dense, expected, rtol=1e-6, atol=1e-7)
    assert not fast._recent
