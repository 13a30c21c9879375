"""Dialogue state: the intent and slots a conversation has so far, carried from turn to turn.

Intent resolution in context (what the turn pipeline calls after the classifier), in order:

1. An acknowledgement or closing alone ("好的谢谢", "ok thanks", "没事了") is out of scope: it
   asks for nothing, so no tool may run, whatever the conversation was about.
2. A turn that only brings a slot value (an order id, a phone number, a code) keeps the
   conversation's intent, whatever the classifier says: a bare value carries no intent of its own.
3. An elliptical turn keeps the conversation's intent unless the classifier is very sure of
   something else (``override``): a turn with a follow-up marker ("那什么时候能到？",
   "what about the refund?", "…呢"), or a short turn (a few characters or words) whose ranking
   still has the conversation's intent among its top ``short_window`` labels.
4. Otherwise the classifier's probabilities are re-weighted by a context prior (the
   conversation's intent counts ``stickiness`` times) and a confident in-scope top label
   (≥ threshold) is taken: a self-contained request may change the topic.
5. A confident ``oos`` turn is out of scope (small talk in the middle of a conversation).
6. An unsure turn (below the threshold) in a conversation that already has an intent keeps that
   intent: in a customer-service conversation an unclear turn is far more often about the
   current topic than a new one. With no intent yet it is out of scope.

With the pack's context model (rules 3–6 replaced), two more rules come before the model's
answer. A turn that names a record the conversation has not named (a number of six digits or
more) and says it is another one ("另外我另一个订单…到哪了", "btw where's the parcel for
order …") is a new request, read by the turn alone when that is in scope and at least 0.4 sure
(``another_record``; "另外订单…的退货到哪一步了" reads a return at 0.49): the context model leans on
the conversation's intent. So is a question (not one whether something may be done) that names
a record besides the one the conversation named and that the turn alone reads as another intent
above the threshold ("where is order B?" after a return of order A). So is a request that names no
record the conversation has not named and that the turn alone reads as another intent at least
0.95 surely (``sure_request``): "那我不要了，退款吧" after a late parcel asks for a refund, whatever
its "那", and "我要退货，订单A和B" after asking the status of A and B asks for a return. A turn
the context model is unsure of and the turn alone reads as another intent at ``override`` or
more is taken as that intent, but under ``sure_request`` it is ``unsure``: answered, no write
put forward ("能帮我弄一下吗" after a forgotten password reads as a return at 0.86). And an
unsure first turn that names such a record, says what is wrong with a purchase ("我买的耳机坏
了") or names what the service is about (``subjects``: "any news on my lost parcel?") is not
out of scope when the turn alone and the context model both read it in scope ("my keyboard
order … never arrived"): small talk does none of these; it is ``unsure`` when the two readings
disagree on the intent, whatever their confidence. Later in a conversation, an unsure
turn both readings agree is another intent, and that names a record the conversation has not,
is that intent, ``unsure`` ("好的谢谢，另外我那个<order>还要多久到" after a password reset was
kept on the reset, and the reset's outcome said again).

These rules were checked by cross-validation on synthetic two- and three-turn conversations
built from held-out pack examples (a request followed by a topic switch, another request of the
same intent, a slot value, an elliptical follow-up or an acknowledgement).

Slots accumulate: a new value replaces the old one for the same slot; ``slots_for`` hands a tool
only the slots its intent's schema declares.

References (:meth:`DialogueState.take`): every value of a listed slot the customer names is kept,
in the order named, under the slot's plural (``order_ids``); the current one (``order_id``) is
the first named in the turn, or the one a reference picks — "第二个" / "the second one" (the
second named), "最后一个" / "the last one", "另一个" / "the other one" (the one that is not
current), "这个订单" / "that order" (the current one).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hermes_desk.nlu.acts import NUMBER_NAMED, asks_if_allowed, mentions, request_act
from hermes_desk.nlu.classifier import OOS, IntentPrediction
from hermes_desk.nlu.purchase import says_what_is_wrong
from hermes_desk.nlu.references import find_reference, resolve_reference

__all__ = [
    "DialogueState",
    "ResolvedIntent",
    "is_acknowledgement",
    "is_follow_up",
    "is_short",
    "is_slot_only",
    "mention_key",
    "only_changes_to",
]

_FOLLOW_UP_START = re.compile(
    r"^\s*(那|那么|那个|还有|另外|然后|再|所以|还是|怎么还|是不是"
    r"|and|so|also|then|what about|how about|and what about|is it|is that|still)"
    r"(?![a-z])",
    re.IGNORECASE,
)
_FOLLOW_UP_END = re.compile(r"(呢|呀|啊)\s*[?？!！。.]*\s*$")
_SLOT_ONLY = re.compile(
    r"^\s*(?:(?:for|about|on|关于|是)\s*)?"  # "for order …" after "do coupons expire"
    r"(?:(?:我的|my|the)?\s*(?:订单号?|单号|手机号?|电话|号码|验证码"
    r"|order(?: id| number| no\.?)?|phone(?: number)?|number|code"
    r"|it'?s|that'?s|(?:it|this|that) is|is|是)\s*[:：是]?\s*)*[\d\s+\-]{6,}\s*"
    rf"(?:{NUMBER_NAMED}\s*)?"  # …or the number, then what it is ("202411030861 is the order")
    r"(?:的)?"  # "订单…的" after "发票怎么开": the order it is for (read as a return, 0.89)
    r"[。.!！]?\s*$",
    re.IGNORECASE,
)
# Another record, asked the same of: a follow-up word, the record, and nothing else.
_SAME_OF = re.compile(
    r"^\s*(?:(?:and|what|how)\s+about|and\s+(?:for|with)|and|same\s+for|那|那么|还有|那个)\s*"
    r"(?:(?:the|my)\s+)?(?:order\s*(?:no\.?|number|#)?\s*|订单号?\s*)?\d{6,}\s*"
    r"(?:的呢|呢|也是吗|也一样吗)?\s*[?？。.!！]*\s*$"
    r"|^\s*(?:订单号?\s*)?\d{6,}\s*(?:的呢|呢)\s*[?？。.]*\s*$",
    re.IGNORECASE,
)
# What something should become, its subject left to the turn before ("改成北京市…", "换成大一号的",
# "change it to 88 Jianguo Road", "send it to my office instead").
_CHANGE_TO = re.compile(
    r"^\s*(?:那|那就|就|好|好的|嗯|请|麻烦(?:你|您)?|帮我|给我|[,，\s])*"
    r"(?:改成|改为|改到|换成|换为|换到|新地址是)"
    r"|^\s*(?:(?:ok(?:ay)?|then|so|please|can you|could you)[,\s]+)*"
    r"(?:change|switch|update|make|move|send|ship|deliver)\s+(?:it|that|this|them)\s+(?:over\s+)?to\b"
    r"|^\s*(?:my|the)\s+new\s+address\s+is\b",
    re.IGNORECASE,
)
_ACK_WORD = (
    r"(?:好的?|好吧|好嘞|好滴|好哒|行吧?|可以了?|嗯+|哦+|噢|知道了|明白了?|了解了?|收到了?|懂了"
    r"|谢谢你?们?|谢啦|多谢|感谢|辛苦了?|没事了?|没问题|没有了|再见|拜拜"
    r"|ok(?:ay)?|k|thanks?(?: you| a lot| so much)?|thank u|thx|ty|many thanks|cheers"
    r"|much appreciated|appreciate it|got it|bye|great|fine|cool|sure|alright|perfect|awesome"
    r"|no problem|np|no worries|sounds good|will do|that'?s all|understood|all good|good)"
)
_ACK = re.compile(rf"^\s*(?:{_ACK_WORD}[\s,，.。!！~、啊了呀哈]*)+$", re.IGNORECASE)
# "Another one": with a record not named before, the turn is a new request.
_ANOTHER = re.compile(
    r"另外|此外|还有|另一|别的订单|其他订单|其它订单|对了|顺便"
    r"|\bbtw\b|by the way|\balso\b|\banother\b|\bother\b|\bseparately\b|\bone more\b",
    re.IGNORECASE,
)
# A record's number, written in groups or not ("202405201234", "2024-0520-1234").
_RECORD_NUMBER = re.compile(r"\d[\d\s\-]{4,}\d")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[a-zA-Z]+")


def mention_key(slot: str) -> str:
    """Where the dialogue state keeps every value named for ``slot`` (``order_id`` →
    ``order_ids``)."""
    return f"{slot}s"


def _record_numbers(text: str) -> set[str]:
    numbers = {re.sub(r"\D", "", match) for match in _RECORD_NUMBER.findall(text)}
    return {number for number in numbers if len(number) >= 6}


def is_acknowledgement(text: str) -> bool:
    """Is ``text`` only thanks, agreement or goodbye (no request of its own)?"""
    return _ACK.match(text) is not None


def is_short(text: str, *, cjk_chars: int = 6, words: int = 4) -> bool:
    """At most ``cjk_chars`` Chinese characters (and no Latin words), or at most ``words``
    Latin words (and no Chinese): too little text to state a new request."""
    cjk = len(_CJK_CHAR.findall(text))
    latin = len(_LATIN_WORD.findall(text))
    if cjk:
        return latin == 0 and cjk <= cjk_chars
    return 0 < latin <= words


def is_slot_only(text: str) -> bool:
    """Is ``text`` only a slot value ("订单号是202405201234", "13800138000")?"""
    return _SLOT_ONLY.match(text) is not None


def asks_the_same_of(text: str) -> bool:
    """Does ``text`` only name another record, asking of it what the turn before asked ("and for
    202405181001?", "what about order 202405181001", "那202405181001呢")?

    >>> [asks_the_same_of(t) for t in ("and for 202405181001?", "那订单202405181001呢")]
    [True, True]
    >>> [asks_the_same_of(t) for t in ("202405181001", "202405181001能退吗")]
    [False, False]
    """
    return _SAME_OF.match(text) is not None


def only_changes_to(text: str) -> bool:
    """Does ``text`` only say what something should become, leaving what to the turn before
    ("改成北京市朝阳区…" after "我想改一下收货地址", "change it to 88 Jianguo Road")?

    >>> [only_changes_to(t) for t in ("改成北京市朝阳区建国路88号", "change it to 88 Main St")]
    [True, True]
    >>> [only_changes_to(t) for t in ("我想改地址", "发到邮箱还是要自己下载")]
    [False, False]
    """
    return _CHANGE_TO.search(text) is not None and request_act(text) == "request"


def is_follow_up(text: str) -> bool:
    """Does ``text`` read as a continuation of the previous turn rather than a new request?"""
    return bool(_FOLLOW_UP_START.search(text) or _FOLLOW_UP_END.search(text) or is_slot_only(text))


@dataclass(frozen=True, slots=True)
class ResolvedIntent:
    """The intent a turn is handled under, and why.

    Attributes:
        intent: the intent to act on (``oos`` = no tool may run).
        confidence: the classifier's confidence for its own top label.
        carried: True when the intent came from the conversation, not from this turn alone.
        prediction: the classifier's raw answer.
        in_context: the context model's answer, when the pack trained one.
        unsure: the intent was taken though the reading that gave it is under the threshold
            (another record named; a first turn that names a record): enough to look up and
            answer, not to put a write forward.
    """

    intent: str
    confidence: float
    carried: bool
    prediction: IntentPrediction
    in_context: IntentPrediction | None = None
    unsure: bool = False

    @property
    def out_of_scope(self) -> bool:
        return self.intent == OOS


@dataclass
class DialogueState:
    """Per-session intent and slot memory.

    Args:
        threshold: the out-of-scope threshold (``NluSettings.oos_threshold`` or the model's).
        stickiness: the conversation's intent's probability is multiplied by this before the
            top label is chosen (a conversation tends to stay on its topic); 1 = no prior.
        override: an elliptical turn changes the topic only if the classifier's confidence in
            its own top label is at least this.
        short_window: a short turn without a follow-up marker keeps the intent only if the
            intent is among this many top labels of the classifier's ranking.
        sure_request: with the context model, a request (``request_act``) that names no record
            the conversation has not named and that the turn alone reads as another intent at
            least this surely is that intent: "那我要退货退款" after "快递到哪了" asks for a
            return, whatever the "那".
        another_record: with the context model, a turn that names a record the conversation
            has not and says it is another one is what the turn alone reads at least this
            surely (below the threshold: the marker and the new record say most of it).
    """

    threshold: float = 0.5
    stickiness: float = 2.0
    override: float = 0.85
    short_window: int = 3
    sure_request: float = 0.95
    another_record: float = 0.4
    intent: str | None = None
    slots: dict[str, Any] = field(default_factory=dict)
    turns: int = 0
    last_text: str | None = None
    #: words that name what the service is about (a pack's ``kb_topic`` words: 订单, 包裹,
    #: "parcel", "refund"): an unsure first turn that names one is no small talk
    subjects: tuple[str, ...] = ()

    def resolve(
        self, text: str, prediction: IntentPrediction, *, in_context: IntentPrediction | None = None
    ) -> ResolvedIntent:
        """Decide this turn's intent in context and remember it.

        ``in_context`` is the context model's answer (:mod:`hermes_desk.nlu.context`) when the
        pack trained one: it replaces rules 3–6, rules 1–2 still come first.
        """
        if in_context is None:
            resolved = self._decide(text, prediction)
        else:
            resolved = self._decide_with(text, prediction, in_context)
        self.turns += 1
        self.last_text = text
        if not resolved.out_of_scope:
            self.intent = resolved.intent
        return resolved

    def _decide_with(
        self, text: str, p: IntentPrediction, in_context: IntentPrediction
    ) -> ResolvedIntent:
        previous = self.intent
        if is_acknowledgement(text):
            return ResolvedIntent(OOS, p.confidence, False, p, in_context)
        if previous is not None and is_slot_only(text):
            return ResolvedIntent(previous, p.confidence, True, p, in_context)
        confidence = in_context.confidence
        switched = p.intent not in (OOS, in_context.intent) and previous is not None
        unsure = False
        if (
            switched
            and p.confidence >= self.another_record
            and _ANOTHER.search(text)
            and self._names_new_record(text)
        ):
            chosen = p.intent  # "另外我另一个订单…": another record, another request
            unsure = p.confidence < self.threshold
        elif (
            switched
            and p.confidence >= self.threshold
            and request_act(text) == "question"
            and not asks_if_allowed(text)
            and self._names_new_record(text, besides_one=True)
        ):
            # "where is order B?" after a return of order A: a question about another record,
            # which the turn alone surely reads (the context model leaned on the return); not
            # one whether it may be done ("能退吗 订单B": a request in question form)
            chosen = p.intent
        elif (
            switched
            and p.confidence >= self.sure_request
            and request_act(text) == "request"
            and not self._names_new_record(text)
        ):
            # "那我不要了，退款吧" after a late parcel, "我要退货，订单A" after A's status: asked
            # for, not a follow-up (a number not named before, "用的手机号是186…", is one)
            chosen = p.intent
        elif confidence >= self.threshold:
            chosen = in_context.intent
        elif p.intent != OOS and p.confidence >= self.override:
            # Unsure in context, while the turn alone clearly points elsewhere ("你们支持哪些
            # 支付方式" or "also, has order … shipped?" after a return): a new request, not the
            # conversation's (LABELS.md: a topic switch takes the new intent) — answered, but
            # too unsure to put a write forward: "能帮我弄一下吗" after a forgotten password
            # reads as a return at 0.86 alone.
            chosen = p.intent
            unsure = previous is not None and p.confidence < self.sure_request
        elif (
            previous is None
            and OOS not in (p.intent, in_context.intent)
            and (
                _record_numbers(text)
                or says_what_is_wrong(text)
                or mentions(text.lower(), self.subjects)
            )
        ):
            # Unsure, but both readings are in scope and the turn names a record ("my keyboard
            # order … never arrived", "… says lost, what now?" as a first turn), says what is
            # wrong with a purchase ("我买的耳机坏了" at 0.499 was told "this I cannot help
            # with") or names what the service is about ("any news on my lost parcel?"): small
            # talk does none of these. The surer reading wins; when the two readings disagree it
            # is unsure whatever its confidence ("my keyboard order … says lost": a return at
            # 0.50 alone, the order's status at 0.42 in context — a return put forward).
            chosen = p.intent if p.confidence >= confidence else in_context.intent
            unsure = p.intent != in_context.intent or max(p.confidence, confidence) < self.threshold
        elif (
            previous is not None
            and p.intent == in_context.intent
            and p.intent not in (OOS, previous)
            and self._names_new_record(text)
        ):
            # Unsure, but both readings agree on another intent and the turn names a record the
            # conversation has not ("好的谢谢，另外我那个<order>还要多久到" after a password
            # reset): a new request, not the reset's — answered, too unsure for a write.
            chosen = p.intent
            unsure = True
        elif previous is None or in_context.intent == OOS:
            chosen = OOS  # unsure with nothing to keep, or leaning out of scope
        else:
            chosen = previous  # unsure: the conversation keeps its intent
        return ResolvedIntent(chosen, confidence, chosen != p.intent, p, in_context, unsure)

    def _names_new_record(self, text: str, *, besides_one: bool = False) -> bool:
        """Does ``text`` name a number the conversation has not (in its slots or its previous
        turn)? ``besides_one``: and the conversation has named one already (the first record
        named is no other one)."""
        named = _record_numbers(text)
        if not named:
            return False
        known = _record_numbers(self.last_text or "")
        for value in self.slots.values():
            for item in value if isinstance(value, list) else (value,):
                if isinstance(item, str):
                    known |= _record_numbers(item)
        return not named <= known and (bool(known) or not besides_one)

    def _decide(self, text: str, p: IntentPrediction) -> ResolvedIntent:
        previous = self.intent
        if is_acknowledgement(text):
            return ResolvedIntent(OOS, p.confidence, False, p)
        if previous is None:
            if p.intent != OOS and p.confidence >= self.threshold:
                return ResolvedIntent(p.intent, p.confidence, False, p)
            return ResolvedIntent(OOS, p.confidence, False, p)
        if is_slot_only(text):
            # A bare slot value ("订单号是…", "13800138000") answers the open request.
            return ResolvedIntent(previous, p.confidence, True, p)
        if p.confidence < self.override and self._elliptical(text, p, previous):
            return ResolvedIntent(previous, p.confidence, p.intent != previous, p)
        intent, confidence = self._with_context_prior(p)
        if confidence >= self.threshold and intent != OOS:
            return ResolvedIntent(intent, confidence, intent != p.intent, p)
        if intent == OOS and confidence >= self.threshold:
            return ResolvedIntent(OOS, p.confidence, False, p)
        return ResolvedIntent(previous, p.confidence, p.intent != previous, p)

    def _elliptical(self, text: str, p: IntentPrediction, previous: str) -> bool:
        if is_follow_up(text):
            return True
        top = [label for label, _ in p.ranking[: self.short_window]]
        return is_short(text) and previous in top

    def _with_context_prior(self, p: IntentPrediction) -> tuple[str, float]:
        """Top label after weighting the conversation's intent by ``stickiness``."""
        if self.intent is None or self.stickiness == 1.0 or not p.ranking:
            return p.intent, p.confidence
        weighted = {
            label: prob * (self.stickiness if label == self.intent else 1.0)
            for label, prob in p.ranking
        }
        # Mass outside the ranking is left unweighted.
        total = sum(weighted.values()) + max(0.0, 1.0 - sum(prob for _, prob in p.ranking))
        label, value = max(weighted.items(), key=lambda kv: kv[1])
        return label, value / total

    def update_slots(self, slots: Mapping[str, Any]) -> dict[str, Any]:
        """Merge this turn's slots into the state (new values win); returns all slots."""
        for key, value in slots.items():
            if value is not None and value != "":
                self.slots[key] = value
        return dict(self.slots)

    def take(
        self,
        text: str,
        found: Mapping[str, Any],
        mentions: Mapping[str, Sequence[str]],
        *,
        requested: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Merge one turn's slots, resolving references; returns the turn's slots as resolved.

        ``mentions`` are every value the turn names of each listed slot, in order, with an
        empty list for a listed slot it names none of (the extractor's
        :meth:`~hermes_desk.nlu.SlotExtractor.mentions`). Several values are all
        kept under :func:`mention_key`; the current value is the first the turn names, unless
        the turn picks one by position ("A和B，第二个呢") or ``requested`` names the one its
        request is made of ("A到哪了，另外我想退货B": B). A turn that names none but refers to
        one ("第二个到哪了", "the other one") makes the value it refers to current, and a turn
        that refers to the current one ("这个订单能开发票吗") brings it, as if it named it. A
        turn about another record of the one kind known, with no other named ("where is my
        other order?" after one order), takes the current value away: which one it is, is asked.
        """
        resolved = dict(found)
        reference = find_reference(text)
        current_kinds = [s for s in mentions if self.slots.get(s) not in (None, "")]
        for slot in mentions:
            named = [str(v) for v in mentions.get(slot, ())]
            key = mention_key(slot)
            listed = [str(v) for v in self.slots.get(key) or ()]
            listed += [v for v in dict.fromkeys(named) if v not in listed]
            if listed:
                self.slots[key] = listed
            chosen: str | None = None
            if named:
                chosen = named[0]
                if requested and requested.get(slot) in named:
                    chosen = requested[slot]
                if reference is not None and reference.kind == "ordinal" and len(named) > 1:
                    chosen = resolve_reference(reference, named, None) or chosen
            elif reference is not None and (
                len(listed) > 1 or (listed and reference.kind == "current")
            ):
                current = self.slots.get(slot)
                chosen = resolve_reference(reference, listed, str(current) if current else None)
            elif (
                reference is not None
                and reference.kind == "other"
                and reference.names_a_record
                and current_kinds == [slot]
            ):
                # "where is my other order?" with one order known: not that one, and which one
                # is not known; the turn asks for it rather than answer of the one named.
                del self.slots[slot]
            if chosen is not None:
                resolved[slot] = chosen
        self.update_slots(resolved)
        return resolved

    def slots_for(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """The carried slots an intent declares (``schema``: slot name → JSON Schema), and the
        list of every value named for one of them when there are several (``order_ids``)."""
        props = schema.get("properties", schema) if isinstance(schema, Mapping) else {}
        out = {k: v for k, v in self.slots.items() if k in props}
        for name in props:
            listed = self.slots.get(mention_key(name))
            if isinstance(listed, list) and len(listed) > 1:
                out[mention_key(name)] = list(listed)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "slots": dict(self.slots),
            "turns": self.turns,
            "last_text": self.last_text,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, threshold: float = 0.5) -> DialogueState:
        return cls(
            threshold=threshold,
            intent=data.get("intent"),
            slots=dict(data.get("slots") or {}),
            turns=int(data.get("turns", 0)),
            last_text=data.get("last_text"),
        )
