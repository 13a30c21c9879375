"""The built-in knowledge-base search tool: a pack's ``kb/*.md`` on SQLite FTS5 with BM25.

Articles are Markdown files whose first line is ``# Title``; the rest is the body; the id is the
file name without ``.md``. An article may open with YAML front matter (``---`` lines) whose
``states`` maps a record's status words to what the article says for a record in that state
("已取消": a cancelled order needs no return): a search given those words (``state`` or
``about``) quotes that note as the article's passage, since the article's general rule would
not be true of the record. Notes are not indexed: they never change which articles are found.

Chinese is written without spaces, so a word tokenizer sees a whole sentence as one token. Text
is indexed as overlapping character bigrams for CJK runs (``退货运费`` → ``退货 货运 运费``) and
lower-cased words for everything else — the CJK analysis Lucene and Elasticsearch ship — and a
query goes through the same analysis, its terms OR-ed and ranked by FTS5's ``bm25()`` (title
weighted ×2). "运费怎么算" then finds the article on 运费 with no segmenter and no dictionary,
and a one-character query still matches through a prefix term. FTS5's ``trigram`` tokenizer was
the other candidate; it cannot match the many two-character Chinese words (运费, 发票, 退货).

English words are reduced to a light stem (``deliveries`` → ``deliveri`` → the same term as
``delivery``; ``takes``/``taking`` → ``take``), so a question and an article need not use the
same inflection.

Each hit carries a *passage*: whole sentences of the article — the sentence that shares most
terms with the query, in the query's language when the article has one, and the next sentence
while the passage stays within :data:`PASSAGE_CHARS` — never a cut in the middle of a sentence;
an item of a list is quoted after the sentence that leads in to the list ("适用条件："), since
alone it would read as a statement about the customer; its ``heading`` (the title's part in the
query's language, for bilingual titles "中文 / English")
and its ``source`` (``kb/<id>.md``). A hit below the base's ``min_score`` is not returned: a weak
match shows nothing rather than something beside the point.

Cost: FTS5 spends ~0.6 µs of ``bm25()`` per matching row, so a search is dominated by how many
articles its terms match (a word in 12% of 10,000 articles: ~0.8 ms). Query terms that no article
has and terms in more than :data:`COMMON_TERM_SHARE` of them are dropped before the match (the
first exactly, without changing any score). Measured and rejected, at 10,000 articles:
``detail=column`` and ``detail=none`` (bm25 then re-reads each row: 12× slower), ``ORDER BY
rank`` with the weights as the table's rank function (~35% slower than ``ORDER BY bm25()``),
scoring a short candidate list with ``rowid IN (...)`` (~17 µs per candidate), and a one-character
prefix index (7–25% faster on one-character queries only, for a larger index).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread
import yaml

from hermes_desk.errors import PackError
from hermes_desk.tools.binding import CallContext

__all__ = [
    "COMMON_TERM_MIN_DOCS",
    "COMMON_TERM_SHARE",
    "KB_SEARCH_PARAMETERS",
    "KB_SEARCH_RESULT",
    "PASSAGE_CHARS",
    "KbHit",
    "KbSearchBinding",
    "KnowledgeBase",
    "analyze",
    "passage",
    "sentences",
]

KB_SEARCH_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": "问题或关键词",
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        # The language to quote in; without it, the query's script decides.
        "language": {"type": "string", "enum": ["zh", "en"]},
        # The state of the record asked about ("已发货"): it picks the passage of the article
        # the query finds ("once shipped…", not "before it ships…"), not the article.
        "about": {"type": "string", "maxLength": 100},
        # The same, joined to the query's ranking too ("能取消吗" of a shipped order finds what
        # a shipped order can do); an article only it matches is no answer ("能退款吗" of a
        # shipped order found the address article by its "显示已发货").
        "state": {"type": "string", "maxLength": 100},
    },
    "required": ["query"],
    "additionalProperties": False,
}

KB_SEARCH_RESULT: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "title": {"type": "string"},
                    "snippet": {"type": "string"},
                    "score": {"type": "number"},
                    "passage": {"type": "string"},
                    "heading": {"type": "string"},
                    "source": {"type": "string"},
                },
                "required": ["id", "title", "snippet", "score"],
            },
        }
    },
    "required": ["results"],
}

# CJK ideographs, kana and hangul: scripts written without spaces.
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_RUN = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)", re.UNICODE)
_CJK_CHAR = re.compile(rf"[{_CJK}]")


# English function words: in every question, they would only rank by phrasing ("how do I …").
_EN_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "i",
        "me",
        "my",
        "mine",
        "you",
        "your",
        "we",
        "our",
        "us",
        "it",
        "its",
        "is",
        "are",
        "am",
        "was",
        "were",
        "be",
        "been",
        "do",
        "does",
        "did",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "how",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "if",
        "so",
        "that",
        "this",
        "these",
        "those",
        "there",
        "any",
        "some",
        "please",
        # Words of phrasing: "can I still …", "what about it", "tell me more" say nothing of
        # the topic (alone, "about" found the installments article).
        "still",
        "just",
        "actually",
        "already",
        "also",
        "too",
        "now",
        "then",
        "about",
        "tell",
        "more",
        "other",
        "mean",
        "ok",
        "okay",
        "know",
        "want",
        "need",
        "like",
        "thing",
        "something",
        "anything",
        # "how many days", "how much": the count is phrasing ("many" alone found the shipping
        # fees' "however many items it has" for "how many days for delivery?").
        "many",
        "much",
        # A verb's particle ("speed it up", "pick up", "sign up"): alone, "up" found the
        # membership article's "sign-up" for "can you speed it up?".
        "up",
        # When, not what: "I returned a jacket last week" found the membership article's "the
        # last 12 months" once "where's" no longer left a stray "s" matching "order's".
        "last",
    ]
)


# Chinese bigrams of counting and phrasing: "碎了一张" is about breakage, not about the coupon
# article's "一张店铺券"; "我不要退货" is about returns, not about the address article's "需要退回"
# or the password advice's "不要与其他网站…"; "我的退款怎么还没到" is about a refund, not about the
# return-shipping article's "…的退换货".
_ZH_STOP = frozenset(
    ["了一", "一张", "一个", "一件", "一只", "一双", "一瓶", "一盒", "一台", "一条", "一下", "一点",
     "要退", "不要", "的退"]
)  # fmt: skip


def _stem(word: str) -> str:
    """A light English stem: plural and verb endings off (``deliveries`` → ``deliveri``,
    ``delivery`` → ``deliveri``, ``takes`` → ``take``, ``returned`` → ``return``)."""
    if not word.isascii() or len(word) <= 3 or word.endswith("eed"):
        return word  # "speed", "proceed": no "-ed" to take off ("spe" matched nothing)
    for suffix, keep in (("ies", "i"), ("ied", "i"), ("y", "i"), ("ing", ""), ("ed", ""),
                         ("es", "e"), ("s", "")):  # fmt: skip
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                return word
            return _single_l(word[: len(word) - len(suffix)] + keep)
    return _single_l(word)


def _single_l(stem: str) -> str:
    """British and American spellings alike: ``cancelled`` → ``cancel`` as ``cancel`` is,
    ``installed`` and ``install`` → ``instal`` (short words keep theirs: ``fall``, ``sell``)."""
    return stem[:-1] if len(stem) >= 6 and stem.endswith("ll") else stem


# English contractions: "don't" was indexed as the terms "don" and "t", which matched nothing
# the turn was about and ranked by phrasing; the negation is "not", the rest function words.
_NOT = re.compile(r"n['’]t\b")
_IRREGULAR = re.compile(r"\b(can|won|shan)['’]t\b")
_CONTRACTED = re.compile(r"(?<=[a-z])['’](?:s|re|ve|ll|d|m)\b")
_IRREGULAR_NOT = {"can": "can", "won": "will", "shan": "shall"}


def _uncontracted(text: str) -> str:
    """``text`` (lower-cased) with English contractions written out: "don't" → "do not",
    "can't" → "can not", "won't" → "will not"; "it's", "we've", "I'll" → "it", "we", "I"."""
    if "'" not in text and "’" not in text:
        return text
    text = _IRREGULAR.sub(lambda m: f"{_IRREGULAR_NOT[m[1]]} not", text)
    return _CONTRACTED.sub("", _NOT.sub(" not", text))


def analyze(text: str) -> list[str]:
    """Index terms: CJK runs as overlapping bigrams (a lone character stays one term), other
    scripts as lower-cased, lightly stemmed words without English function words."""
    terms: list[str] = []
    for cjk, word in _RUN.findall(_uncontracted(text.lower())):
        if cjk:
            if len(cjk) == 1:
                terms.append(cjk)
            else:
                pairs = (cjk[i : i + 2] for i in range(len(cjk) - 1))
                terms.extend(pair for pair in pairs if pair not in _ZH_STOP)
        elif word not in _EN_STOP:
            terms.append(_stem(word))
    return terms


def _is_prefix(term: str) -> bool:
    # A lone CJK character is a prefix of the bigrams that start with it.
    return len(term) == 1 and _CJK_CHAR.match(term) is not None


def _match_expression(terms: list[str]) -> str | None:
    if not terms:
        return None
    parts = []
    for term in terms:
        quoted = '"' + term.replace('"', '""') + '"'
        parts.append(quoted + " *" if _is_prefix(term) else quoted)
    return " OR ".join(parts)


#: A query term found in more than this share of the articles is too common to search by…
COMMON_TERM_SHARE = 0.2
#: …in a base of at least this many articles (a small one is scored whole: with a few dozen
#: articles, "delivery" or 退货 are in a fifth of them and still the word that tells them apart).
COMMON_TERM_MIN_DOCS = 200
#: With a record's state joined to the ranking, an article must hold one of the query's own
#: words that is in at most this share of the articles: 订单 (in most) names the record asked
#: about, not the question ("订单…能退款吗" of a shipped order found the address article by its
#: 订单 and 已发货, with 退款 nowhere in it).
TELLING_TERM_SHARE = 0.5
#: Dates written in a question ("5月18日买的", "20号"): their numbers are no words of the question
#: ("5" found the cash-on-delivery article's "5 元").
_DATES = re.compile(
    r"(?:\d{2,4}\s*年\s*)?\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?|\d{1,2}\s*[日号](?!\d)"
    # …and how long ago ("bought 20 days ago", "买了20天了"): its count found the password
    # article's "6–20 characters"; the unit stays a word of the question
    r"|\d+(?=\s*(?:天|周|个月|days?|weeks?|months?)\s*(?:ago|前|了))"
)
#: A passage grows by whole sentences up to this many characters (one sentence may be longer).
PASSAGE_CHARS = 120


@dataclass(frozen=True, slots=True)
class KbHit:
    """One article found: ``snippet`` (a window of the text around the first match),
    ``passage`` (whole sentences that answer), ``heading`` (the title in the query's language)
    and ``source`` (where the article lives: ``kb/<id>.md``)."""

    id: str
    title: str
    snippet: str
    score: float
    passage: str = ""
    heading: str = ""
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "snippet": self.snippet,
            "score": self.score,
            "passage": self.passage,
            "heading": self.heading or self.title,
            "source": self.source,
        }


class KnowledgeBase:
    """An FTS5 index of articles (in memory by default, or in a SQLite file).

    Args:
        db_path: the SQLite file, or ``:memory:``.
        min_score: hits scoring below this (BM25, higher is better) are not returned.
    """

    def __init__(self, db_path: str | Path = ":memory:", *, min_score: float = 0.0) -> None:
        self.min_score = min_score
        self._conn = sqlite3.connect(str(db_path), check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        self._conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS kb USING fts5("
            "doc_id UNINDEXED, title UNINDEXED, body UNINDEXED, title_terms, body_terms, "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
        self._conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kb_vocab USING fts5vocab(main, kb, row)"
        )
        self._df: dict[str, int] = {}
        self._docs = 0
        #: article id → {a record's status words, lower-cased: what the article says for it}
        self.states: dict[str, dict[str, str]] = {}

    @classmethod
    def from_dir(
        cls, folder: str | Path, *, db_path: str | Path = ":memory:", min_score: float = 0.0
    ) -> KnowledgeBase:
        """Index every ``*.md`` in ``folder`` (a missing folder gives an empty base)."""
        kb = cls(db_path, min_score=min_score)
        root = Path(folder)
        articles = []
        for path in sorted(root.glob("*.md")) if root.is_dir() else []:
            try:
                states, text = _front_matter(path.read_text(encoding="utf-8").strip())
            except ValueError as error:
                kb.close()
                raise PackError(str(error), file=str(path), field="states") from None
            first, _, body = text.partition("\n")
            if not first.startswith("# ") or not first[2:].strip():
                kb.close()
                raise PackError("the first line must be '# Title'", file=str(path), field="title")
            articles.append((path.stem, first[2:].strip(), body.strip()))
            if states:
                kb.states[path.stem] = states
        kb.add_many(articles)
        return kb

    def add_many(self, articles: Iterable[tuple[str, str, str]]) -> int:
        """Index ``(id, title, body)`` triples, replacing articles with the same id."""
        rows = [
            (doc_id, title, body, " ".join(analyze(title)), " ".join(analyze(body)))
            for doc_id, title, body in articles
        ]
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany("DELETE FROM kb WHERE doc_id = ?", [(r[0],) for r in rows])
                self._conn.executemany("INSERT INTO kb VALUES (?, ?, ?, ?, ?)", rows)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            self._df.clear()
            self._docs = int(self._conn.execute("SELECT count(*) FROM kb").fetchone()[0])
        return len(rows)

    def add(self, doc_id: str, title: str, body: str) -> None:
        self.add_many([(doc_id, title, body)])

    def __len__(self) -> int:
        with self._lock:
            row = self._conn.execute("SELECT count(*) FROM kb").fetchone()
        return int(row[0])

    def search(
        self,
        query: str,
        limit: int = 3,
        language: str | None = None,
        about: str | None = None,
        state: str | None = None,
    ) -> list[KbHit]:
        """The best ``limit`` articles for ``query`` by BM25 (best first), each with the passage
        that answers it in ``language`` (``zh``/``en``; by default English for a query without
        Chinese: "the app shows 待付款 but i paid" is asked in English). ``about``: words of
        the record's state, which choose each article's passage along with the query's.
        ``state``: such words that join the ranking as well, yet never make an answer alone —
        an article none of the query's own telling terms is in is left out ("能退款吗" of a
        shipped order found the address article by its "显示已发货" alone;
        ``TELLING_TERM_SHARE``)."""
        with self._lock:
            own = self._selective(list(dict.fromkeys(analyze(_DATES.sub(" ", query)))))
            joined = self._selective(analyze(state)) if state else []
            terms = list(dict.fromkeys([*own, *joined]))
            expression = _match_expression(terms)
            if expression is None:
                return []
            best = self._conn.execute(
                "SELECT rowid, bm25(kb, 0, 0, 0, 2.0, 1.0) AS score FROM kb"
                " WHERE kb MATCH ? ORDER BY score LIMIT ?",
                # some of the best may be matched by the state alone: look further
                (expression, int(limit) * (4 if joined else 1)),
            ).fetchall()
            if joined:
                telling = [t for t in own if self._doc_freq(t) <= TELLING_TERM_SHARE * self._docs]
                best = self._matching(best, telling or own)[: int(limit)]
            # Then read the stored text of the few winners only: selecting the text in the
            # ranking query would read every match's body (and a join costs more than these
            # look-ups by rowid).
            fetch = "SELECT doc_id, title, body FROM kb WHERE rowid = ?"
            rows = [
                (*self._conn.execute(fetch, (rowid,)).fetchone(), score) for rowid, score in best
            ]
        english = language == "en" if language else _CJK_CHAR.search(query) is None
        # the record's state picks the passage, whether it ranked (``state``) or not (``about``)
        preferred = list(dict.fromkeys([*(analyze(about) if about else []), *joined]))
        if preferred:
            terms = list(dict.fromkeys([*terms, *preferred]))
        said = [w.strip().lower() for w in (state, about) if w and w.strip()]
        timed = _ASKS_WHEN.search(query) is not None
        return [
            KbHit(
                id=r[0],
                title=r[1],
                snippet=_snippet(r[2], terms),
                score=round(-r[3], 4),
                passage=self._note(r[0], said)
                or passage(r[2], terms, english=english, prefer=preferred, timed=timed),
                heading=_heading(r[1], english=english),
                source=f"kb/{r[0]}.md",
            )
            for r in rows
            if round(-r[3], 4) >= self.min_score
        ]

    def _note(self, doc_id: str, said: list[str]) -> str | None:
        """What the article says for a record in the state ``said`` names (its ``states``):
        the words as they are, or — for a record and the one that tells it more closely, said
        together ("已发货 运输中") — the closer one's, then the record's."""
        notes = self.states.get(doc_id)
        if not notes:
            return None
        for words in said:
            if words in notes:
                return notes[words]
            closer = [k for k in notes if words.endswith(f" {k}")]
            first = [k for k in notes if words.startswith(f"{k} ")]
            if closer or first:
                return notes[(closer or first)[0]]
        return None

    def _matching(self, ranked: list[Any], terms: list[str]) -> list[Any]:
        """The rows of ``ranked`` (rowid first) that one of ``terms`` is in, in their order."""
        expression = _match_expression(terms)
        if expression is None or not ranked:
            return []
        ids = [row[0] for row in ranked]
        found = {
            rowid
            for (rowid,) in self._conn.execute(
                f"SELECT rowid FROM kb WHERE kb MATCH ? AND rowid IN ({','.join('?' * len(ids))})",
                (expression, *ids),
            )
        }
        return [row for row in ranked if row[0] in found]

    def _selective(self, terms: list[str]) -> list[str]:
        """Drop terms no article has, and terms found in more than ``COMMON_TERM_SHARE`` of the
        articles (请您, 可以…).

        A term no article has adds nothing to any BM25 score, yet FTS5 still walks it for every
        candidate row: dropping it leaves the ranking exactly as it was and saves ~15% of a
        search (most bigrams of a question, 费怎, 么算, match nothing). Common terms get almost no
        BM25 weight, yet OR-ing them makes every article a candidate to score; dropping them
        keeps a search in milliseconds at 10,000 articles. When every term found is common, all
        of those are kept. A lone CJK character is searched as a prefix, so it is always kept.
        """
        if self._docs == 0:
            return terms
        present = [t for t in terms if _is_prefix(t) or self._doc_freq(t) > 0]
        if self._docs < COMMON_TERM_MIN_DOCS:
            return present  # a small base is fast to score whole; every term keeps its weight
        limit = COMMON_TERM_SHARE * self._docs
        kept = [t for t in present if self._doc_freq(t) <= limit]
        return kept or present

    def _doc_freq(self, term: str) -> int:
        df = self._df.get(term)
        if df is None:
            row = self._conn.execute("SELECT doc FROM kb_vocab WHERE term = ?", (term,)).fetchone()
            df = int(row[0]) if row else 0
            if len(self._df) < 100_000:
                self._df[term] = df
        return df

    async def asearch(
        self,
        query: str,
        limit: int = 3,
        language: str | None = None,
        about: str | None = None,
        state: str | None = None,
    ) -> list[KbHit]:
        return await anyio.to_thread.run_sync(self.search, query, limit, language, about, state)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# A sentence ends at 。！？；, at . ! ? followed by a space or the end (not 1.5 or e.g.), and at a
# line break (list items are sentences of their own).
_SENTENCE = re.compile(r"[^\n。！？；!?]*?(?:[。！？；!?]+[」』”\"）)]?|\.(?=\s|$)|(?=\n)|$)", re.S)


# "- ", "* ", "• ", "1. ", "2、", "3)": not "3.5 kg" or "-5℃".
_LIST_MARK = re.compile(r"^(?:[-*•]\s+|\d{1,2}(?:[、)）]|\.(?!\d))\s*)")


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """An article's ``states`` (status words, lower-cased → note) and the text after its front
    matter; ``({}, text)`` when it has none.

    Raises:
        ValueError: front matter that is not closed, not a mapping, with a key other than
            ``states``, or a ``states`` that does not map words to non-empty text.
    """
    if not text.startswith("---\n"):
        return {}, text
    head, found, rest = text[4:].partition("\n---\n")
    if not found:
        raise ValueError("the front matter opened with '---' is not closed by a '---' line")
    try:
        meta = yaml.safe_load(head) or {}
    except yaml.YAMLError as error:
        raise ValueError(f"the front matter is not YAML: {error}") from None
    if not isinstance(meta, dict) or set(meta) - {"states"}:
        raise ValueError("the front matter may only hold states: {status words: note}")
    states = meta.get("states") or {}
    if not isinstance(states, dict) or not all(
        isinstance(k, str) and k.strip() and isinstance(v, str) and v.strip()
        for k, v in states.items()
    ):
        raise ValueError("states must map a record's status words to the article's note on it")
    return {k.strip().lower(): " ".join(v.split()) for k, v in states.items()}, rest.strip()


def sentences(body: str) -> list[str]:
    """The article's sentences, in order, stripped (empty ones left out); a list item's
    marker ("- ", "1. ") is not part of its sentence."""
    return [text for text, _ in _sentences_and_lead_ins(body)]


def _sentences_and_lead_ins(body: str) -> list[tuple[str, int | None]]:
    """Each sentence with, for an item of a list, the index of the sentence that leads in to
    the list ("适用条件：") — None for sentences outside a list, or a list with no lead-in."""
    out: list[tuple[str, int | None]] = []
    lead: int | None = None
    for raw in body.splitlines():
        stripped = raw.strip()
        line = _LIST_MARK.sub("", stripped, count=1)
        item = line != stripped
        if not item and stripped:
            lead = None  # a paragraph ends the list
        for m in _SENTENCE.finditer(line):
            text = m.group(0).strip()
            if text:
                out.append((text, lead if item else None))
        if not item and out and out[-1][0].endswith((":", "：")):
            lead = len(out) - 1
    return out


#: A question of time or duration ("投诉多久给我答复", "how long until someone replies"): a
#: passage that says a time answers it, the article's other sentences about its subject do not.
_ASKS_WHEN = re.compile(
    r"多久|多长时间|什么时候|啥时候|几天|几个工作日|\bhow\s+(?:long|soon)\b|\bwhen\b", re.IGNORECASE
)
#: A time said in a sentence: "24 小时内", "3 个工作日", "1–3 working days", "within 48 hours".
_A_TIME = re.compile(
    r"\d+\s*(?:[–~-]\s*\d+\s*)?(?:个)?(?:分钟|小时|天|工作日|周)"
    r"|\b\d+(?:\s*[–~-]\s*\d+)?\s+(?:minutes?|hours?|days?|working\s+days?|weeks?)\b",
    re.IGNORECASE,
)


def passage(
    body: str,
    terms: list[str],
    *,
    english: bool,
    limit: int = PASSAGE_CHARS,
    prefer: list[str] | None = None,
    timed: bool = False,
) -> str:
    """Whole sentences of ``body`` that answer a query with ``terms``: the sentence sharing most
    terms with it (in the query's language when the article has sentences in it), then the
    next sentences while the passage stays within ``limit`` characters, up to a lead-in to a
    list ("办理流程："), which is left out — unless the best sentence is that lead-in
    ("到账时间如下："): then the list it leads to is the answer, and is quoted. When the best
    sentence is an item of a list, the list's lead-in opens the passage. ``prefer``: terms of
    the record's state, which break a tie between sentences; ``timed`` (the query asks when or
    how long): then a sentence that says a time breaks it ("投诉 多久给我答复" quoted how to
    complain, not "专员会在 24 小时内联系您")."""
    marked = _sentences_and_lead_ins(body)
    if not marked:
        return ""
    found = [text for text, _ in marked]
    wanted = set(terms)
    in_language = [i for i, t in enumerate(found) if (_CJK_CHAR.search(t) is None) == english]
    candidates = in_language or list(range(len(found)))

    def overlap(index: int) -> int:
        return len(wanted & set(analyze(found[index])))

    # Between sentences as good, the one that shares more of ``prefer`` (the record's state:
    # "已发货" picks "订单已经发货…的" over "发货前可以修改"), then the first.
    preferred = set(prefer or ())

    def state(index: int) -> int:
        return len(preferred & set(analyze(found[index]))) if preferred else 0

    def says_a_time(index: int) -> bool:
        # a lead-in to a list of times ("到账时间如下：") says them with its list
        said = found[index : index + 2] if found[index].endswith((":", "：")) else found[index:][:1]
        return timed and any(_A_TIME.search(sentence) for sentence in said)

    best = max(candidates, key=lambda i: (overlap(i), state(i), says_a_time(i), -i))
    lead_in = marked[best][1]
    # An item quoted alone reads as a statement ("账户近 6 个月内没有多次拒收记录。" as if
    # about this customer): it is quoted after the lead-in it is an item of ("适用条件：").
    head = [found[lead_in]] if lead_in is not None and lead_in in candidates else []
    chosen = [found[best]]
    size = len(found[best])
    opening = _opening(found[best], english=english)
    for follower in range(best + 1, len(found)):
        if follower not in candidates or size + len(found[follower]) > limit:
            break
        if follower - 1 != best and found[follower - 1].endswith((":", "：")):
            break  # what follows a lead-in ("办理流程：") is a list the passage does not quote
        if opening and _opening(found[follower], english=english) == opening:
            break  # another case of the same kind ("订单显示退货中的…" / "订单显示已退款的…")
        chosen.append(found[follower])
        size += len(found[follower])
    while len(chosen) > 1 and chosen[-1].endswith((":", "：")):
        chosen.pop()  # a lead-in to a list that is not quoted
    joiner = " " if english else ""
    return joiner.join(head + chosen)


def _opening(sentence: str, *, english: bool) -> str | None:
    """How a sentence opens — its first four words, or first four characters of Chinese — when
    it is long enough to tell: sentences that open alike state parallel cases."""
    if english:
        words = sentence.split()
        return " ".join(words[:4]).lower() if len(words) > 6 else None
    return sentence[:4] if len(sentence) > 8 else None


def _heading(title: str, *, english: bool) -> str:
    """The part of a bilingual title ("中文 / English") in the query's language."""
    parts = [p.strip() for p in re.split(r"\s*/\s+|\s+/\s*", title) if p.strip()]
    if len(parts) < 2:
        return title
    match = [p for p in parts if (_CJK_CHAR.search(p) is None) == english]
    return match[0] if match else parts[0]


def _snippet(body: str, terms: list[str], width: int = 120) -> str:
    lowered = body.lower()
    positions = [p for p in (lowered.find(t) for t in terms) if p >= 0]
    start = max(0, min(positions) - 20) if positions else 0
    text = body[start : start + width].replace("\n", " ").strip()
    return ("…" if start else "") + text + ("…" if start + width < len(body) else "")


class KbSearchBinding:
    """``kb_search {query, limit, language, about, state}`` → ``{"results": [{id, title,
    snippet, score}]}``."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self._kb = kb

    async def call(
        self, arguments: Mapping[str, Any], *, timeout_s: float, context: CallContext
    ) -> Any:
        hits = await self._kb.asearch(
            str(arguments["query"]),
            int(arguments.get("limit", 3)),
            arguments.get("language"),
            arguments.get("about"),
            arguments.get("state"),
        )
        return {"results": [h.to_dict() for h in hits]}

    async def health(self, *, timeout_s: float) -> bool:
        return True
