"""Dialogue acts: thanks, closings, greetings, confirmations, corrections, and asking for a person.

"谢谢，没别的问题了", "yes please", "不是这个，是另一个" are not questions about the business:
they are moves of the conversation, and a customer who makes one expects it answered as such —
not "I cannot help with that". The phrases come from the pack (``acts.yaml``), per language; this
module only reads them, deterministically and without a model.

A turn is split into clauses at punctuation. A clause *is* an act when it is made only of the
act's phrases and the pack's fillers ("thank you so much for your help", "好的呀"); a clause of
fillers alone says nothing. The turn's act is the strongest act among its clauses (correction,
closing, thanks, confirmation, greeting), and the turn is ``only`` that act when no clause says
anything else — then the act's reply answers it; "你好，订单…到哪了" is a greeting *and* a
question, answered as the question.

Chinese phrases match as substrings of the clause, English ones as whole words, so "可以退吗" is
no confirmation and "hi" is not found in "this".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_desk.errors import PackError
from hermes_desk.nlu.acts import CLAUSES

__all__ = ["ACTS", "NO_ACT", "ActPhrases", "ActReading", "DialogueActName"]

DialogueActName = Literal["correction", "human", "closing", "thanks", "confirmation", "greeting"]

#: The acts the engine answers, strongest first (a turn with several is the first of them).
#: ``human``: the customer asks for a person, or whether they are talking to one.
ACTS: tuple[DialogueActName, ...] = (
    "correction", "human", "closing", "thanks", "confirmation", "greeting",
)  # fmt: skip

_LETTER = re.compile(r"[a-z]")


@dataclass(frozen=True, slots=True)
class ActReading:
    """The act of one turn (``None``: none) and whether the turn is only that act."""

    act: DialogueActName | None
    only: bool

    def __bool__(self) -> bool:
        return self.act is not None


NO_ACT = ActReading(None, False)


@dataclass(frozen=True)
class ActPhrases:
    """The pack's act phrases, fillers, negative-emotion words, withdrawals, apologies and the
    phrases of a reply that promise a follow-up."""

    phrases: tuple[tuple[str, DialogueActName | None], ...]  # longest first; None: a filler
    negative: tuple[str, ...] = ()
    #: A request taken back whatever it is ("撤回申请", "cancel the request").
    withdrawals: tuple[str, ...] = ()
    #: Phrases that say what they take back ("不退了", "drop the complaint"), each group with
    #: the tools (whose proposals) and workflows (waiting for the customer) it names.
    withdrawals_of: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = ()
    #: Those of them that switch to another request ("还是换货吧"): the rest of the turn is
    #: still to be answered, so they are not taken out by :meth:`without_withdrawals`.
    switches: tuple[str, ...] = ()
    apologies: tuple[str, ...] = ()
    follow_ups: tuple[str, ...] = ()
    #: Confirmations that tell the agent to go ahead ("do it", "办吧"), not only acknowledge.
    go_aheads: tuple[str, ...] = ()
    #: Closings that turn down what was just put in ("算了不用了", "never mind").
    declines: tuple[str, ...] = ()
    #: :attr:`phrases` by their first character, longest first as there: a clause position
    #: is only tried against the phrases that can start there
    _by_first: dict[str, tuple[tuple[str, DialogueActName | None], ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    #: the thanks phrases (a turn that thanks anywhere answers as thanks), and those that ask
    #: for a person (asked for anywhere in the turn)
    _thanks: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)
    _human: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)
    #: every withdrawal phrase (most turns hold none: one look settles them), and the
    #: ``withdrawals_of`` groups without their switches
    _any_withdrawal: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)
    _without_switches: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = field(
        default=(), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_thanks", tuple(p for p, a in self.phrases if a == "thanks"))
        object.__setattr__(self, "_human", tuple(p for p, a in self.phrases if a == "human"))
        by_first: dict[str, list[tuple[str, DialogueActName | None]]] = {}
        for pair in self.phrases:
            by_first.setdefault(pair[0][:1], []).append(pair)
        object.__setattr__(self, "_by_first", {k: tuple(v) for k, v in by_first.items()})
        grouped = tuple(p for _names, phrases in self.withdrawals_of for p in phrases)
        object.__setattr__(self, "_any_withdrawal", (*self.withdrawals, *grouped))
        switches = set(self.switches)
        without = tuple(
            (names, tuple(p for p in phrases if p not in switches))
            for names, phrases in self.withdrawals_of
        )
        object.__setattr__(self, "_without_switches", without)

    @classmethod
    def from_dict(cls, data: Any, *, file: str = "acts.yaml") -> ActPhrases:
        """Build from ``acts.yaml`` content, refusing unknown acts and non-text phrases."""
        if not isinstance(data, Mapping):
            raise PackError("must hold a mapping", file=file)
        acts = data.get("acts") or {}
        if not isinstance(acts, Mapping):
            raise PackError("expected act: {language: [phrases]}", file=file, field="acts")
        pairs: list[tuple[str, DialogueActName | None]] = []
        for name, by_language in acts.items():
            if name not in ACTS:
                raise PackError(f"unknown dialogue act (known: {list(ACTS)})", file=file, item=name)
            act: DialogueActName = name
            pairs += [(p, act) for p in _texts(by_language, file, f"acts.{name}")]
        pairs += [(p, None) for p in _texts(data.get("fillers") or {}, file, "fillers")]
        ordered = sorted(dict(reversed(pairs)).items(), key=lambda kv: -len(kv[0]))
        return cls(
            phrases=tuple(ordered),
            negative=tuple(_texts(data.get("negative") or {}, file, "negative")),
            withdrawals=tuple(_texts(data.get("withdrawals") or {}, file, "withdrawals")),
            withdrawals_of=_withdrawals_of(data.get("withdrawals_of") or [], file),
            switches=_switches(data.get("withdrawals_of") or [], file),
            apologies=tuple(_texts(data.get("apologies") or {}, file, "apologies")),
            follow_ups=tuple(_texts(data.get("follow_ups") or {}, file, "follow_ups")),
            go_aheads=tuple(_texts(data.get("go_ahead") or {}, file, "go_ahead")),
            declines=tuple(_texts(data.get("declines") or {}, file, "declines")),
        )

    def read(self, text: str) -> ActReading:
        """The dialogue act of ``text`` and whether it is all the turn says."""
        found: set[DialogueActName] = set()
        other = False
        for clause in CLAUSES.split(text.lower()):
            clause = clause.strip()
            if not clause:
                continue
            acts = self._clause_acts(clause)
            if acts is None:
                other = True
            else:
                found |= acts
        act = next((a for a in ACTS if a in found), None)
        if act is None:
            return NO_ACT
        return ActReading(act, only=not other)

    def only_fillers(self, text: str) -> bool:
        """Whether ``text`` holds nothing but the pack's fillers ("嗯", "well")."""
        clauses = [c.strip() for c in CLAUSES.split(text.lower()) if c.strip()]
        return all(self._clause_acts(c) == set() for c in clauses)

    def only_says(self, text: str, phrases: tuple[str, ...]) -> bool:
        """Whether ``text`` says one of ``phrases`` (lower-cased, the longest first) and nothing
        else but the pack's dialogue acts and fillers ("我要投诉！！！", "hi, can you file a
        complaint for me"; not "我要投诉你们的售后")."""
        lowered = text.lower()
        if not _contains_any(lowered, phrases):
            return False
        rest = _taken_out(lowered, phrases)
        clauses = (c.strip() for c in CLAUSES.split(rest))
        return all(self._clause_acts(c) is not None for c in clauses if c)

    def is_negative(self, text: str) -> bool:
        """Whether the turn shows negative emotion (acknowledged before the facts)."""
        return _contains_any(text.lower(), self.negative)

    def takes_back(self, text: str, *, switches: bool = True) -> frozenset[str] | None:
        """What the turn takes back: the tools and workflows its phrases name ("算了不退了": the
        return's), an empty set when it names none ("撤回申请": whatever waits), or None when
        the turn takes nothing back. ``switches=False`` leaves out the phrases that switch to
        another request (a question, "can I exchange instead?", decides nothing)."""
        lowered = text.lower()
        if not _contains_any(lowered, self._any_withdrawal):
            return None
        groups = self.withdrawals_of if switches else self._without_switches
        named = [names for names, phrases in groups if _contains_any(lowered, phrases)]
        if named:
            return frozenset().union(*named)
        return frozenset() if _contains_any(lowered, self.withdrawals) else None

    def without_withdrawals(self, text: str) -> str:
        """``text`` (lower-cased) with every withdrawal phrase taken out, but those that switch
        to another request."""
        out = text.lower()
        kept = set(self.switches)
        for phrases in (self.withdrawals, *(p for _names, p in self.withdrawals_of)):
            out = _taken_out(out, tuple(p for p in phrases if p not in kept))
        return out

    def only_declines(self, text: str) -> bool:
        """Whether the turn only turns down ("算了不用了", "never mind"): a decline, and
        nothing but more of them, thanks and fillers ("算了吧", "不用了，谢谢", "never mind,
        thanks"); not with a goodbye or a yes ("算了，再见", "好的，不用了")."""
        lowered = text.lower()
        if not _contains_any(lowered, self.declines):
            return False
        rest = _taken_out(lowered, self.declines)
        clauses = (c.strip() for c in CLAUSES.split(rest))
        return all(self._clause_acts(c) in (set(), {"thanks"}) for c in clauses if c)

    def courtesy(self, text: str) -> DialogueActName | None:
        """The courtesy a turn that says more than dialogue acts carries: ``thanks`` when it
        thanks anywhere ("ok thanks for the info", "搞定了 谢谢你"), else the act of the phrase
        it opens with, past fillers — a confirmation ("好 我再等等", "got it, I'll wait"), a
        greeting ("你好请问有人吗") or a closing ("算了 不说了") — else None. A one-character
        Chinese opening counts only before a pause or a particle: "好冷啊" opens with no "好"."""
        lowered = text.lower()
        if _contains_any(lowered, self._thanks):
            return "thanks"
        for step in self._phrases(lowered):
            if step is None:
                return None
            phrase, act, end = step
            if act is None:
                continue  # a filler ("哦", "well") opens nothing
            if act not in ("confirmation", "greeting", "closing"):
                return None
            alone = len(phrase) > 1 or phrase.isascii() or end == len(lowered)
            return act if alone or lowered[end] in _AFTER_ONE_CHARACTER else None
        return None

    def after_courtesy(self, text: str) -> str | None:
        """What a turn says after opening with clauses of dialogue acts alone ("got it, thanks.
        what's the temporary password?": the question), or None when it opens with none or
        says nothing more.

        >>> ActPhrases.from_dict({"thanks": {"en": ["thanks"]}}).after_courtesy("thanks. why?")
        'why?'
        """
        start, acted = 0, False
        for pause in CLAUSES.finditer(text):
            acts = self._clause_acts(text[start : pause.start()].strip().lower())
            if acts is None:
                break  # words that say more
            acted = acted or bool(acts)  # fillers alone ("well,") open nothing
            start = pause.end()
        rest = text[start:].strip()
        return rest if acted and rest else None

    def asks_for_a_person(self, text: str) -> bool:
        """Whether the turn asks for a person anywhere ("hello, I'd like to speak to a human",
        "能不能帮我转人工")."""
        return _contains_any(text.lower(), self._human)

    def goes_ahead(self, text: str) -> bool:
        """Whether the turn tells the agent to go ahead ("great, do it", "那就办吧")."""
        return _contains_any(text.lower(), self.go_aheads)

    def opens_with_apology(self, reply: str) -> bool:
        """Whether the reply's first sentence already apologises."""
        first = re.split(r"[。！!？?]|\.\s", reply.lower(), maxsplit=1)[0]
        return _contains_any(first, self.apologies)

    def promises_contact(self, reply: str) -> bool:
        """Whether a reply promises the business will get in touch ("专员会联系您")."""
        return _contains_any(reply.lower(), self.follow_ups)

    def _clause_acts(self, clause: str) -> set[DialogueActName] | None:
        """The acts a clause is made of (empty: fillers only), or None when it says more."""
        acts: set[DialogueActName] = set()
        for step in self._phrases(clause):
            if step is None:
                return None
            if step[1] is not None:
                acts.add(step[1])
        return acts

    def _phrases(self, text: str) -> Iterator[tuple[str, DialogueActName | None, int] | None]:
        """The pack's phrases ``text`` is made of, from its start (spaces skipped): each with its
        act (None: a filler) and where it ends; then None where no phrase starts."""
        i = 0
        while i < len(text):
            if text[i].isspace():
                i += 1
                continue
            candidates = self._by_first.get(text[i], ())
            step = next((p for p in candidates if _starts(text, i, p[0])), None)
            if step is None:
                yield None
                return
            i += len(step[0])
            yield step[0], step[1], i


#: What may follow a one-character opening ("好 …", "好了…", "行吧…"): a pause or a particle.
_AFTER_ONE_CHARACTER = frozenset(" ,，.。!！?？;；、~～了吧啊嘞呀哒滴的嘛哈")


def _starts(clause: str, i: int, phrase: str) -> bool:
    if not clause.startswith(phrase, i):
        return False
    if _LETTER.match(phrase[-1]):  # a Latin phrase ends at a word boundary
        end = i + len(phrase)
        return end == len(clause) or not clause[end].isalnum()
    return True


def _contains_any(text: str, words: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``words``: a Latin word as a whole word, others anywhere."""
    latin, others = _phrase_matcher(words)
    return any(w in text for w in others) or (latin is not None and latin.search(text) is not None)


def _taken_out(text: str, words: tuple[str, ...]) -> str:
    """``text`` (lower-cased) with every one of ``words`` replaced by a space."""
    latin, others = _phrase_matcher(words)
    for word in others:
        text = text.replace(word, " ")
    return latin.sub(" ", text) if latin is not None else text


@functools.lru_cache(maxsize=64)
def _phrase_matcher(words: tuple[str, ...]) -> tuple[re.Pattern[str] | None, tuple[str, ...]]:
    """One alternation for a list's Latin words (compiled once; a pattern per word per call
    cost a suggestion about 60 µs), and its other words as plain substrings."""
    latin = [re.escape(w) for w in words if w.isascii()]
    others = tuple(w for w in words if not w.isascii())
    pattern = re.compile(rf"(?<![a-z])(?:{'|'.join(latin)})(?![a-z])") if latin else None
    return pattern, others


def _withdrawals_of(groups: Any, file: str) -> tuple[tuple[frozenset[str], tuple[str, ...]], ...]:
    """``withdrawals_of``: a list of ``{takes_back: [tool or workflow names], <language>:
    [phrases]}`` (the names are checked against the pack's tools and workflows by the loader)."""
    if not isinstance(groups, list):
        raise PackError("expected a list of {takes_back, language: [phrases]}", file=file,
                        field="withdrawals_of")  # fmt: skip
    out: list[tuple[frozenset[str], tuple[str, ...]]] = []
    for i, group in enumerate(groups):
        where = f"withdrawals_of[{i}]"
        if not isinstance(group, Mapping):
            raise PackError("expected {takes_back, language: [phrases]}", file=file, item=where)
        names = group.get("takes_back")
        if (
            not isinstance(names, list)
            or not names
            or not all(isinstance(n, str) and n for n in names)
        ):
            raise PackError(
                "expected a list of tool or workflow names", file=file, item=where,
                field="takes_back",
            )  # fmt: skip
        phrases = {k: v for k, v in group.items() if k not in ("takes_back", "switch")}
        out.append((frozenset(names), tuple(_texts(phrases, file, where))))
    return tuple(out)


def _switches(groups: list[Any], file: str) -> tuple[str, ...]:
    """The phrases of the ``withdrawals_of`` groups marked ``switch: true``."""
    out: list[str] = []
    for i, group in enumerate(groups):
        switch = group.get("switch", False)
        if not isinstance(switch, bool):
            raise PackError("expected true or false", file=file, item=f"withdrawals_of[{i}]",
                            field="switch")  # fmt: skip
        if switch:
            phrases = {k: v for k, v in group.items() if k not in ("takes_back", "switch")}
            out += _texts(phrases, file, f"withdrawals_of[{i}]")
    return tuple(out)


def _texts(by_language: Any, file: str, where: str) -> list[str]:
    if not isinstance(by_language, Mapping):
        raise PackError("expected {language: [phrases]}", file=file, item=where)
    out: list[str] = []
    for language, words in by_language.items():
        if not isinstance(words, list) or not all(isinstance(w, str) and w for w in words):
            # YAML reads a bare yes/no/on/off as a boolean: the word would silently vanish
            raise PackError(
                "expected a list of non-empty texts (quote yes/no/on/off)",
                file=file,
                item=f"{where}.{language}",
            )
        out += [w.lower() for w in words]
    return out
