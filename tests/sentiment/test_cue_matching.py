"""The cue pattern finds exactly what the plain whole-word alternation finds."""

from __future__ import annotations

import random
import re

from hermes_desk.packs.loader import bundled_pack_path
from hermes_desk.sentiment.lexicon import SentimentLexicon


def _reference(lexicon: SentimentLexicon) -> re.Pattern[str]:
    def alternative(term: str) -> str:
        escaped = re.escape(term)
        return rf"(?<![a-z]){escaped}(?![a-z])" if term.isascii() else escaped

    ordered = sorted(lexicon.negative + lexicon.positive, key=lambda t: (-len(t), t))
    return re.compile("|".join(map(alternative, dict.fromkeys(ordered))))


def _matches(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], str]]:
    return [(m.span(), m.group(0)) for m in pattern.finditer(text)]


def test_cues_match_as_whole_words_exactly_as_the_plain_alternation() -> None:
    lexicon = SentimentLexicon.from_folder(bundled_pack_path("ecommerce"))
    pattern, reference = lexicon._pattern, _reference(lexicon)
    assert pattern is not None
    rng = random.Random(0)
    pieces = [*lexicon.negative[:80], *lexicon.positive[:80], "a", "x", " ", "'", "9", "不", "!"]
    texts = [
        "this is an issue, not a sue",
        "bad",
        "xbad badx bad!",
        "great service 服务很好 but slow",
        *("".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(2000)),
        *(" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(2000)),
    ]
    for text in texts:
        assert _matches(pattern, text) == _matches(reference, text), text
