"""The hand-written feature path gives exactly what sklearn's vectorizer gives."""

from __future__ import annotations

import numpy as np
import pytest

from hermes_desk.nlu.features import FastFeatures, build_vectorizer, char_wb_ngrams, normalise

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
