"""Text normalisation and the sparse features every intent backend shares.

Words: jieba segmentation for text with Chinese characters, ``\\w+`` runs otherwise; word unigrams
and bigrams. Characters: ``char_wb`` 1–5-grams, which carry Chinese (no spaces) and English
morphology (refund/refunds/refunded) alike; single characters matter for Chinese (退, 换, 慢),
where they raised 5-fold cross-validated accuracy on the pack's examples by ~3 points.
Both are TF-IDF weighted with sublinear tf.

sklearn and jieba are imported inside the functions that need them.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import chain, pairwise
from math import log, sqrt
from operator import add, is_not, mul
from typing import Any, cast

from hermes_desk.nlu.references import normalise_ids

__all__ = ["FastFeatures", "build_vectorizer", "has_cjk", "normalise", "tokens", "word_ngrams"]

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"\w+")
_SPACES = re.compile(r"\s+")


_LONG_NUMBER = re.compile(r"\d{5,}")


def normalise(text: str) -> str:
    """NFKC (full-width → ASCII), lower case, single spaces, and the digits of long numbers
    (ids, phones, codes) as zeros: a number's length says what it is (a 12-digit order id, an
    11-digit phone, a 6-digit code), its digits say nothing about the intent — without this the
    demo data's order ids (``2024052…``) taught the model that those digits mean a return."""
    text = normalise_ids(_SPACES.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip())
    return _LONG_NUMBER.sub(lambda m: "0" * len(m.group(0)), text)


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


@lru_cache(maxsize=1)
def _jieba() -> Any:
    """jieba, its log quietened once: setting a logger's level clears every logger's cache,
    which cost more per utterance than short texts take to segment."""
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def _jieba_words(text: str) -> list[str]:
    return [w for w in _jieba().lcut(text) if _WORD.search(w)]


def tokens(text: str) -> list[str]:
    """Word tokens of normalised ``text``; Chinese is segmented with jieba."""
    return list(_normalised_tokens(normalise(text)))


@lru_cache(maxsize=32768)
def _normalised_tokens(text: str) -> tuple[str, ...]:
    """Word tokens of text :func:`normalise` already made."""
    # Cached: training a pack's model segments the same utterances once per fit (the final
    # model and each cross-fitting fold), and jieba is the slowest part of featurising.
    if has_cjk(text):
        return tuple(w.strip() for w in _jieba_words(text) if w.strip())
    return tuple(_WORD.findall(text))


def word_ngrams(text: str) -> list[str]:
    """Unigrams and bigrams of :func:`tokens` (the TF-IDF word analyzer; picklable)."""
    return _normalised_word_ngrams(normalise(text))


def _normalised_word_ngrams(text: str) -> list[str]:
    return _word_ngrams_of(_normalised_tokens(text))


def _word_ngrams_of(tokens: tuple[str, ...]) -> list[str]:
    words = list(tokens)
    return words + [f"{a} {b}" for a, b in pairwise(words)]


def _segmented(text: str, cjk: bool) -> tuple[str, ...]:
    """Word tokens of normalised ``text`` as jieba cuts them (``cjk``: ``has_cjk(text)``; such
    text goes through the token cache, as featurising it alone does)."""
    if cjk:
        return _normalised_tokens(text)
    return tuple(w.strip() for w in _jieba_words(text) if w.strip())


def build_vectorizer(*, char_min_df: int = 2, word_min_df: int = 1) -> Any:
    """An unfitted sklearn FeatureUnion of word 1–2-gram and char_wb 1–5-gram TF-IDF."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import FeatureUnion

    return FeatureUnion(
        [
            (
                "words",
                TfidfVectorizer(
                    analyzer=word_ngrams, sublinear_tf=True, min_df=word_min_df, dtype=_f32()
                ),
            ),
            (
                "chars",
                TfidfVectorizer(
                    analyzer="char_wb",
                    ngram_range=(1, 5),
                    preprocessor=normalise,
                    sublinear_tf=True,
                    min_df=char_min_df,
                    dtype=_f32(),
                ),
            ),
        ]
    )


def _f32() -> Any:
    import numpy as np

    return np.float32


def char_wb_ngrams(text: str, min_n: int, max_n: int) -> list[str]:
    """sklearn's ``char_wb`` n-grams of already preprocessed ``text``, in sklearn's order.

    The same grams as ``TfidfVectorizer(analyzer="char_wb")._char_wb_ngrams`` (sklearn 1.x),
    one slice list per length instead of one append per gram. sklearn first turns runs of 2+
    whitespace into one space; that cannot change what ``str.split()`` returns (both use
    Python's definition of whitespace), so it is skipped. Per word padded with one space each
    side (length ``size``): every n-gram for each n, and once n reaches ``size`` the padded word
    itself, after which the longer lengths are skipped — sklearn's ``offset == 0`` break.
    Single characters and pairs are built without slicing (the same strings, faster).
    """
    grams: list[str] = []
    for word in text.split():
        padded = f" {word} "
        size = len(padded)
        for n in range(min_n, max_n + 1):
            if n >= size:
                grams.append(padded)
                break
            if n == 1:
                grams += padded
            elif n == 2:
                grams += map(add, padded, padded[1:])
            else:
                grams += [padded[i : i + n] for i in range(size - n + 1)]
    return grams


Analyzer = Callable[[str], list[str]]


def _fast_analyzer(vec: Any) -> tuple[Analyzer, bool]:
    """``vec.build_analyzer()`` without sklearn's per-call wrapping, and whether it reads the
    :func:`normalise`-d text (True) or the raw one. For the two parts :func:`build_vectorizer`
    makes, both read it normalised, so one utterance is normalised once: the word part is
    :func:`word_ngrams` after its :func:`normalise` (sklearn only adds a decode step, a no-op
    for ``str`` input), the ``char_wb`` part :func:`char_wb_ngrams` after sklearn's
    preprocessor, :func:`normalise`. A vectorizer configured otherwise keeps sklearn's
    analyzer, on the raw text."""
    if vec.input == "content" and getattr(vec, "stop_words", None) is None:
        if vec.analyzer is word_ngrams:
            return _normalised_word_ngrams, True
        if vec.analyzer == "char_wb" and vec.preprocessor is normalise:
            min_n, max_n = vec.ngram_range
            return partial(char_wb_ngrams, min_n=min_n, max_n=max_n), True
    return cast(Analyzer, vec.build_analyzer()), False


@dataclass(frozen=True, slots=True)
class _Counted:
    """One normalised text's known grams as columns, in the order of its grams (unknown grams
    left out): the word unigrams, the word bigrams, the characters' grams; and its tokens."""

    unigrams: list[int]
    bigrams: list[int]
    chars: list[int]
    tokens: tuple[str, ...]


class FastFeatures:
    """Single-utterance TF-IDF lookup built from a fitted :func:`build_vectorizer` union.

    sklearn's ``transform`` costs ~0.3 ms of overhead per call; this computes the same
    features as (indices, values) in tens of microseconds, so a model can score one
    utterance as ``values @ weights[indices]``.

    The counts of the last :data:`REMEMBERED` texts featurised alone are kept, so that the next
    turn's joined text (:meth:`joined`, the previous turn and this one) is counted from its two
    parts' counts instead of from its grams again (the previous turn's were counted one turn
    before, this one's a moment ago).
    """

    #: texts whose counts are kept (about 4 KB each, 8 MB in all): one per turn handled, so the
    #: previous turn of every conversation is still there unless more turns than this came between
    REMEMBERED = 2048

    def __init__(self, union: Any) -> None:
        import numpy as np

        # Per part: its analyzer and its vocabulary mapped to columns of the whole union.
        self._parts: list[tuple[Analyzer, bool, dict[str, int]]] = []
        idfs: list[Any] = []
        offset = 0
        for _, vec in union.transformer_list:
            columns = {gram: j + offset for gram, j in vec.vocabulary_.items()}
            analyzer, normalised = _fast_analyzer(vec)
            self._parts.append((analyzer, normalised, columns))
            idfs.append(np.asarray(vec.idf_, dtype=np.float32))
            offset += len(vec.idf_)
        # As Python floats (of the float32 weights): :meth:`_arrays` reads a few dozen at a time.
        self._idf: list[float] = np.concatenate(idfs).tolist() if idfs else []
        self.size = offset
        # Counting from parts needs the union :func:`build_vectorizer` makes: words, then
        # ``char_wb`` grams, both of the normalised text.
        layout = [(analyzer, normalised) for analyzer, normalised, _ in self._parts]
        self._by_parts = (
            len(layout) == 2
            and layout[0] == (_normalised_word_ngrams, True)
            and isinstance(layout[1][0], partial)
            and layout[1][0].func is char_wb_ngrams
            and layout[1][1]
        )
        self._recent: dict[str, _Counted] = {}

    def __call__(self, text: str) -> tuple[Any, Any]:
        if self._by_parts:
            normalised = normalise(text)
            counted = self._counted(normalised)
            self._remember(normalised, counted)
            return self._arrays(
                Counter(chain(counted.unigrams, counted.bigrams)), Counter(counted.chars)
            )
        return self._arrays(
            *(
                _counts(columns, analyzer(normalise(text) if reads_normalised else text))
                for analyzer, reads_normalised, columns in self._parts
            )
        )

    def joined(self, first: str, second: str) -> tuple[Any, Any]:
        """The features of ``f"{first} {second}"`` (the turn reader's previous turn joined with
        this one), the same as ``self(f"{first} {second}")``.

        When the joined text normalises to the two parts' normalised texts joined by one space
        (nothing across the boundary changed: no digit group or long number spanning it,
        neither part empty) and both parts have Chinese or neither has, its word tokens are the
        two parts' tokens one after the other, as each part has them alone: ``\\w+`` runs never
        span a space, and jieba cuts a text into blocks that a space always ends (its blocks are
        runs of Chinese, letters, digits and ``+#&._%-``; every other character and every space
        is yielded alone), segmenting each block on its own. Its ``char_wb`` grams, made word by
        word, are the two parts' one after the other too. So its counts are the two parts'
        counts added up in the order the joined text's grams first occur (unigrams of both, then
        the bigrams of the first part, the one across the boundary, those of the second; the
        characters' of the first, then of the second), from the counts kept of texts featurised
        alone when they are there. When only one part has Chinese, the other is segmented by
        jieba within the joined text, unlike alone. Otherwise the joined text is featurised
        whole."""
        head, tail = normalise(first), normalise(second)
        text = normalise(f"{first} {second}")
        if self._by_parts and text == f"{head} {tail}" and has_cjk(head) == has_cjk(tail):
            a, b = self._known(head), self._known(tail)
            across: list[int] = []
            if a.tokens and b.tokens:
                column = self._parts[0][2].get(f"{a.tokens[-1]} {b.tokens[0]}")
                across = [] if column is None else [column]
            return self._arrays(
                Counter(chain(a.unigrams, b.unigrams, a.bigrams, across, b.bigrams)),
                Counter(chain(a.chars, b.chars)),
            )
        words: tuple[str, ...] | None = None
        if has_cjk(text) and text == f"{head} {tail}":  # else \w+ runs, as fast found whole
            words = _segmented(head, has_cjk(head)) + _segmented(tail, has_cjk(tail))
        counts: list[Counter[int]] = []
        for analyzer, reads_normalised, columns in self._parts:
            if words is not None and analyzer is _normalised_word_ngrams:
                grams = _word_ngrams_of(words)
            else:
                grams = analyzer(text if reads_normalised else f"{first} {second}")
            counts.append(_counts(columns, grams))
        return self._arrays(*counts)

    def _counted(self, normalised: str) -> _Counted:
        words, chars = self._parts[0][2], self._parts[1][2]
        tokens = _normalised_tokens(normalised)
        return _Counted(
            _known_columns(words, tokens),
            _known_columns(words, [f"{a} {b}" for a, b in pairwise(tokens)]),
            _known_columns(chars, self._parts[1][0](normalised)),
            tokens,
        )

    def _known(self, normalised: str) -> _Counted:
        return self._recent.get(normalised) or self._counted(normalised)

    def _remember(self, normalised: str, counted: _Counted) -> None:
        recent = self._recent
        if normalised not in recent and len(recent) >= self.REMEMBERED:
            with contextlib.suppress(KeyError, RuntimeError, StopIteration):
                del recent[next(iter(recent))]  # the oldest
        recent[normalised] = counted

    def _arrays(self, *counts_by_part: Counter[int]) -> tuple[Any, Any]:
        import numpy as np

        # Plain Python over the few dozen columns, then one array each, instead of a dozen numpy
        # calls on arrays of a few dozen values (cheaper in a running worker, where little of a
        # request is still in the CPU's caches). Sublinear tf times idf (a gram seen once is its
        # idf: 1 + log 1 = 1), each part L2-normalised on its own, columns in the order their
        # grams first occur, as the models' sums expect.
        idf = self._idf
        indices: list[int] = []
        values: list[float] = []
        for counts in counts_by_part:
            if not counts:
                continue
            part = [idf[c] if n == 1 else (1.0 + log(n)) * idf[c] for c, n in counts.items()]
            norm = sqrt(sum(map(mul, part, part))) or 1.0
            indices += counts
            values += [v / norm for v in part]
        return np.array(indices, dtype=np.int64), np.array(values, dtype=np.float32)


def _counts(columns: dict[str, int], grams: Iterable[str]) -> Counter[int]:
    """The known grams' columns and counts in the order the grams first occur, counted in one
    pass in C (a part's grams and columns are one-to-one; unknown grams count under None)."""
    counts: Counter[Any] = Counter(map(columns.get, grams))
    counts.pop(None, None)
    return counts


def _known_columns(columns: dict[str, int], grams: Iterable[str]) -> list[int]:
    """The known grams' columns, in the grams' order (unknown grams left out), in C."""
    known: Iterable[int] = filter(partial(is_not, None), map(columns.get, grams))  # type: ignore[arg-type]
    return list(known)
