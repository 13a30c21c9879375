"""Is the customer asking about something, or asking for it? (SPEC §8 X4: asking is not
requesting.)

"退货运费谁承担？" and "how long does a refund take?" ask about a policy: they are answered and
propose nothing. "我要退货，订单…", "please refund order …" and the polite "能帮我退一下吗" ask
for an action. The pack's labelling guide (``LABELS.md``, *Questions and requests*) settles the
cases; this module reads them deterministically, in Chinese and English, in this order:

1. Asking to be told is set aside first: "我想问一下…", "请问…", "帮我查一下…", "can you tell
   me…", "I'd like to know…", and a record's state named as a thing ("refund status …", "退款进度
   …") ask for information, not for an action.
2. A desire, an imperative or a helper verb makes a **request** — even in a question ("能帮我退一下
   吗", "can you refund order …?") and even next to a question ("我要退货，退款多久到账？").
3. Otherwise a question form makes a **question**: a question mark, 吗/呢/多久/怎么/谁/是否/能不能,
   "how long", "who pays", "can I", "do I" … ("Can I …?" without a helper verb asks *whether*).
   Rhetorical complaints ("什么破服务", "怎么这么慢") are not question forms.
4. Otherwise a turn that only asked to be told is a question, and a plain statement is a request:
   it names a problem of the customer's own ("东西坏了", "the refund is short") or answers an open
   request (an order number, a code).

No model and no I/O: the same text always gets the same act, in microseconds.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

__all__ = [
    "DialogueAct", "asks_for", "asks_for_something", "asks_if_allowed", "asks_if_done",
    "asks_why", "mentions", "named", "reports", "request_act", "tells_what_happened",
]  # fmt: skip

DialogueAct = Literal["question", "request"]

#: Where a turn breaks into clauses: punctuation, line breaks, wide spaces.
CLAUSES = re.compile(r"[,，.。!！?？;；:：、~～\n]+|\s{2,}")

# 1. Asking to be told: information, not an action.
_INFO = re.compile(
    r"我?想(?:问|咨询|了解|知道|确认)一?下?|(?:请|麻烦|顺便|再)?问一?下|请问|咨询一?下|了解一下"
    r"|(?:帮我|给我|帮忙)?(?:查|看|确认)(?:一下|一查|一看|下|查|看)"
    r"|\b(?:i'?d|i would|i) (?:like|want|wanna) to (?:know|ask|check|understand|find out)\b"
    r"|\bi need to know\b|\bi (?:was )?wonder(?:ing)?\b|\bjust wondering\b|\bquick question\b"
    r"|\b(?:can|could|would) you (?:please )?(?:tell|show) me\b|\b(?:please )?(?:tell|show) me\b"
    r"|\b(?:can|could|would) you (?:please )?(?:check|confirm|see|look|find out|let me know)\b"
    r"|\blet me know\b|\bfind out\b|\blook up\b|\bjust checking\b|\bchecking (?:on|in)\b"
    r"|\bfollowing up\b"
    # how a record stands, named as a thing ("refund status …", "退款进度 …"): asked to be told
    r"|\bstatus\b|\bprogress\b|\btimeline\b|\btime\s?frame\b|进度|状态",
    re.IGNORECASE,
)
# 2. Desire, imperative and helper verbs ("为什么不给我登记" reproaches: a question, not a request;
# "能不能帮我" is asked for by the modal's own alternative; 给我 after a verb is where the verb
# goes, "钱什么时候退给我" asks when, "把钱退给我" is a request by being a statement; after
# 已经, 答应, 承诺, 保证, 说 or 会 it tells what was done or promised: "客服答应给我退款").
_REQUEST = re.compile(
    r"(?<!不)我要(?!怎么|如何|去哪|到哪|在哪|等多久|多久|提供什么|准备什么|什么)"
    r"|(?<!不)我想(?!问|咨询|了解|知道|确认)|(?<!不)想要|我需要(?!(?:提供|准备)?(?:什么|哪些|啥))"
    # (not help given before: "谢谢你们上次帮我处理的退货")
    r"|(?<!不)(?<!上次)(?<!之前)(?<!那次)(?:帮我|帮忙|(?<![退还寄发送转补经应诺证说会])给我|替我|帮他|帮她)"
    r"|我要求|要求(?=赔|退|换|补|处理|给)"
    r"|(?:能|可以|能不能|可不可以|能否|可否)(?:帮|给|替|赔|补偿)"
    r"|麻烦(?!问)(?:你|您)?(?:帮|给|把|尽快|处理|安排)|请(?:你|您)?(?:帮|给|把|为|尽快|马上|安排)"
    r"|(?<!do )\bi want\b(?! to (?:know|ask))|\bi wanna\b(?! (?:know|ask))"
    r"|(?<!do )\bi need\b(?! to know)"
    r"|\bi(?:'d| would) like\b(?! to (?:know|ask|check|understand|find out))"
    r"|\b(?:can|could|would) you\b|\bhelp me\b|\bi demand\b|\bget me\b|\bsend me\b"
    r"|\bgive me\b|\blet me (?:talk|speak)\b|\blet'?s\b|\bgo ahead\b",
    re.IGNORECASE,
)
# Forms that look like questions but are not: complaints ("什么破快递", "怎么这么慢",
# "有没有人管"), and "还没…呢" ("it hasn't shipped yet").
_NOT_QUESTION = re.compile(
    r"什么(?:破|鬼|垃圾|烂)|什么(?:服务|态度|玩意)(?:啊|呀|嘛)?(?=$|[!！。，,])|凭什么|干什么吃的"
    r"|搞什么|怎么(?:这么|那么)|是不是(?:故意|有病|骗|欺负)|有没有人(?:管|理)"
    r"|能不能(?:靠谱|用心|用点心|上点心|负点责|长点心)|还没[^，,。？?！!]*呢(?=$|[，,。！!])"
    r"|\bwhat kind of (?:service|joke)\b|\bare you (?:kidding|serious)\b|\bwhat the\b",
    re.IGNORECASE,
)
# 3. Question forms ("can't log in" opens no question: "can" then "'t" is a word's end).
_QUESTION = re.compile(
    r"[?？]|吗|嘛|么(?=$|[，,。！!\s])|呢|多久|多长|(?<![好十这那])几|(?<!不)怎|咋|如何"
    r"|为什么|为啥|谁|是否|能否|可否|能不能|可不可以|行不行|会不会|要不要|是不是|有没有|(?<![没不]是)什么|啥"
    r"|(?<!哪)哪(?!怕)|多少|是[^，,。！!？?]{0,12}还是|了没有?(?=$|[，,。！!\s])|是吧|对吧|对吗|对不对"
    r"|(?:^|[,.;!]\s*|\b(?:and|so|but|ok|okay|then|also|hi|hello|hey)\b,?\s+)"
    r"(?:how|what|whats|what's|when|where|where's|who|why|which|is|are|can(?!'t)|could"
    r"|(?:do|does)(?! (?:it|the|that|this)\b)|did|will|would|should|has|have|any|am)\b"
    # "was my return approved" — at a sentence's start only: "…and was super rude" states.
    r"|(?:^|[.;!?]\s*)(?:was|were)\b(?! told\b)"
    r"|\b(?:how (?:long|many|much|soon|do|does|can|to)|who (?:pays|covers)|what if|is it|is there"
    r"|are there|do i|does it|can i|will i|should i|when will|when do)\b",
    re.IGNORECASE,
)


#: What a number given alone is, said after it ("202411030861 is the order"): the number is
#: the turn's only content (``is_slot_only`` reads it so too).
NUMBER_NAMED = r"(?:is|was)\s+(?:the|my)\s+(?:order|number|phone|code)(?:\s+(?:number|id|no\.?))?"
_LEADING_RECORD = re.compile(
    r"^(?:(?:my\s+)?order\s*(?:no\.?|number|#)?\s*|订单号?\s*[:：]?\s*)?\d{6,}\s*[,，:：.。]?\s*"
    rf"(?!{NUMBER_NAMED}\W*$)",  # …unless all that follows says what the number is
    re.IGNORECASE,
)


def request_act(text: str) -> DialogueAct:
    """``"request"`` when the customer asks for an action, ``"question"`` when they ask about
    one (a policy, a process, a time, whether something is allowed, the state of a record).

    >>> request_act("退货运费谁承担？"), request_act("能帮我退一下吗")
    ('question', 'request')
    >>> request_act("how long does a refund take?"), request_act("I want to return order 1234")
    ('question', 'request')
    """
    # A record's number first ("202405181001 is this eligible for a return") opens the sentence
    # the question starts after.
    stripped = _LEADING_RECORD.sub("", " ".join(text.split()))
    asked_to_be_told = _INFO.search(stripped) is not None
    # Nothing to blank out when nothing asked to be told (saves a second scan of the text).
    rest = _INFO.sub(" ", stripped) if asked_to_be_told else stripped
    if _REQUEST.search(rest):
        return "request"
    if asked_to_be_told or _QUESTION.search(_NOT_QUESTION.sub(" ", rest)):
        return "question"
    return "request"


# Whether the customer may do something: a modal right before a verb of doing ("能换吗", "能不能
# 直接退", "可以寄回吗"), "can I / could we / so I can …". Not "什么时候能好" (a time) or "can you
# tell me…" (asking to be told).
_ALLOWED = re.compile(
    r"(?:能|可以|能不能|可不可以|能否|可否|还能)(?:直接|先|再|帮我|给我)?(?:退|换|寄|申请|办|修|保修)"
    r"|\b(?:can|could|may)\s+(?:i|we)\b|\b(?:i|we)\s+(?:can|could)\s+(?!not\b|n't)"
    r"|\bis\s+it\s+(?:possible|ok|okay)\b|\bam\s+i\s+allowed\b",
    re.IGNORECASE,
)


def asks_for_something(text: str) -> bool:
    """Whether the turn asks us for something: the words of a request, a look-up included
    ("帮我", "帮我查一下", "I want", "can you"), or an imperative ("ok cancel it then", "好 那取消
    吧"; not "I'll send it", "那我自己寄吧")."""
    stripped = " ".join(text.split())
    if _REQUEST.search(stripped) is not None:
        return True
    return _IMPERATIVE.search(stripped) is not None and _SELF.search(stripped) is None


# Telling us to do it: a verb of the back office before what it acts on (a record's number
# included) or after "please", or before 吧 in Chinese
# ("取消吧", "退了吧") when no 我 / 自己 does it.
_IMPERATIVE = re.compile(
    r"\b(?:cancel|refund|return|send|resend|change|reset|ship|replace|exchange|deliver|process"
    r"|escalate|check)\s+(?:it|them|that|this|my|the|me|(?:order\s+)?#?\d{6,})\b"
    r"|\bplease\s+(?:cancel|refund|return|resend|reset|replace|exchange|process|escalate)\b"
    r"|(?<!我)(?<!去)(?<!自己)(?:取消|退|换|发|寄|改|催|处理|查)(?:一下|掉|了)?吧",
    re.IGNORECASE,
)
# …unless the customer says they will do it themselves.
_SELF = re.compile(
    r"\b(?:i'll|i will|i'm|i am|i can|i'd|we'll|let me|gonna|going to)\b|我自己|我去|我来|我再",
    re.IGNORECASE,
)


def asks_if_allowed(text: str) -> bool:
    """Does ``text`` ask whether the customer may do something ("能换吗", "can I return them?")
    — a request in question form — rather than about a state or a time ("退款什么时候到账",
    "where's my refund")?

    >>> [asks_if_allowed(t) for t in ("鞋子小了 能换吗", "能不能直接退", "can I send it back")]
    [True, True, True]
    >>> [asks_if_allowed(t) for t in ("退货什么时候能好", "我的退货怎么样了", "where's my refund")]
    [False, False, False]
    """
    return _ALLOWED.search(text) is not None


# A question about a time or a duration ("退款什么时候到", "how long will the refund take?").
_WHEN = re.compile(
    r"什么时候|啥时候|多久|多长时间|几天|几个工作日|哪天|\bhow\s+(?:long|soon)\b|\bwhen\b",
    re.IGNORECASE,
)


def asks_when(text: str) -> bool:
    """Does ``text`` ask about a time or a duration?

    >>> [asks_when(t) for t in ("那退款什么时候到", "how long will the refund take?", "通过了吗")]
    [True, True, False]
    """
    return _WHEN.search(text) is not None


# Right before a phrase: it is not asked for ("没取消", "没点取消", "已经取消了", "被取消",
# "I didn't cancel", "never cancel").
# Not wanted either ("不想换货", "I don't want a replacement", "I refuse the replacement"); and
# 退 right before: "退换货" is a return or an exchange, not an exchange asked for.
# English "not": n't, or typed without its apostrophe ("dont", "cant") — never the "nt" that
# ends "want" or "sent" ("I want the right one" read as not wanted).
_NOT_EN = (
    r"(?:n['’]t|\b(?:do|does|did|ca|could|wo|would|is|was|are|were|have|has|had|should)nt"
    r"|\bnot|\bnever)"
)
_NOT_ASKED = re.compile(
    r"(?:(?:没有?|不想要?|不要|不用|别|不|未)(?:点|按|去)?|被|已经?|自动|退)$"
    rf"|(?:{_NOT_EN}|\bno)\s+$"
    rf"|{_NOT_EN}\s+(?:want|need|send\s+me)\s+(?:a|an|the|another|any)?\s*$"
    r"|\b(?:refuse|reject|decline)\s+(?:a|an|the|another|any)?\s*$",
    re.IGNORECASE,
)
# Right before a phrase, in a question: whether or how it can be done ("能取消吗", "怎么取消",
# "can I still cancel it?") — not whether it was done ("取消了吗").
_HOW = re.compile(
    r"(?:能|可以|能不能|可不可以|怎么|怎样|如何|还能)\s*$"
    # "能让快递员送之前给我打电话吗": whether someone named can do it
    r"|(?:能|可以|能不能|可不可以)让[^，,。？?\s]{1,10}$"
    # "can the courier leave it at the door?": who would do it, named
    r"|\b(?:can|could)\s+(?:i|we|you|u|they|it|he|she|the\s+(?:courier|driver|delivery\s+\w+))"
    r"\s+(?:still\s+|just\s+)?$|\bhow\s+(?:do|can|could)\s+(?:i|we)\s+$"
    # "can you make it faster?", "could u get it here sooner?"
    r"|\b(?:can|could)\s+(?:you|u)\s+(?:make|get|have)\s+it(?:\s+(?:here|there))?\s+$"
    # "could I get it one size up?", "can I have a bigger size?"
    r"|\b(?:can|could)\s+(?:i|we)\s+(?:still\s+|just\s+)?(?:get|have)\s+(?:it|them|this|that|one\s+in)?\s*$"
    r"|\bhow\s+to\s+$|\bpossible\s+to\s+$",
    re.IGNORECASE,
)


def asks_for(text: str, phrases: tuple[str, ...], *, act: DialogueAct = "request") -> bool:
    """Does ``text`` ask for what one of ``phrases`` names (Chinese phrases anywhere, Latin ones
    as whole words): a request for it, not negated or passive right before it, or (``act`` a
    question) a question whether or how it can be done, or a question with a clause of its own
    that asks for it?

    >>> asks_for("帮我取消掉吧", ("取消", "cancel")), asks_for("我没取消订单啊", ("取消",))
    (True, False)
    >>> asks_for("it says cancelled but I didn't cancel", ("cancel",))
    False
    >>> [asks_for(t, ("取消",), act="question") for t in ("能取消吗", "取消了吗")]
    [True, False]
    >>> asks_for("能送到公司吗，地址改成高新路100号", ("地址改",), act="question")
    True
    >>> asks_for("could I get it one size up?", ("one size up",), act="question")
    True
    >>> asks_for("could the driver leave it with my neighbour?", ("leave it",), act="question")
    True
    >>> asks_for("ok can u make it faster", ("faster",), act="question")
    True
    >>> asks_for("I want the right one sent", ("the right one",))
    True
    >>> asks_for("i dont want a new one", ("a new one",))
    False
    """
    if not phrases:
        return False
    pattern = _phrase_pattern(phrases)
    for clause in CLAUSES.split(text):
        for match in pattern.finditer(clause):
            before = clause[max(0, match.start() - 32) : match.start()]
            if _NOT_ASKED.search(before):
                continue
            # A question may hold a request in a clause of its own ("能送到公司吗，地址改成…").
            if act == "request" or _HOW.search(before) or request_act(clause) == "request":
                return True
    return False


# Right before a phrase: it did not happen ("没有破损", "not damaged").
_NEGATED = re.compile(rf"(?:没有?|不|未|无)$|(?:{_NOT_EN}|\bno)\s+$", re.IGNORECASE)


def reports(text: str, phrases: tuple[str, ...]) -> bool:
    """Does ``text`` report what one of ``phrases`` names (Chinese phrases anywhere, Latin ones
    as whole words), not negated right before it? A question about it ("碎了怎么办"), a passive
    ("被压坏了") and a past one ("已经碎了") report it too.

    >>> reports("钢化膜碎了一张", ("碎了",)), reports("外包装没有破损", ("破损",))
    (True, False)
    >>> reports("the mug was broken", ("broken",)), reports("it wasn't damaged", ("damaged",))
    (True, False)
    """
    if not phrases:
        return False
    pattern = _phrase_pattern(phrases)
    for clause in CLAUSES.split(text):
        for match in pattern.finditer(clause):
            if not _NEGATED.search(clause[max(0, match.start() - 16) : match.start()]):
                return True
    return False


def mentions(text: str, phrases: tuple[str, ...]) -> bool:
    """Does ``text`` name one of ``phrases`` (Chinese phrases anywhere, Latin ones as whole
    words), however it says it?

    >>> mentions("how long does a complaint take", ("complaint",)), mentions("多久", ("投诉",))
    (True, False)
    """
    return bool(phrases) and _phrase_pattern(phrases).search(text) is not None


def named(text: str, phrases: tuple[str, ...]) -> str | None:
    """The first of ``phrases`` that ``text`` names (as :func:`mentions` finds it), as written
    in the text; None when it names none.

    >>> named("I was refunded but the money isn't here", ("refund", "refunded", "return"))
    'refunded'
    >>> named("还没到账", ("退款",)) is None
    True
    """
    found = _phrase_pattern(phrases).search(text) if phrases else None
    return found.group() if found is not None else None


@functools.lru_cache(maxsize=128)  # a pack's phrase lists: a few per intent
def _phrase_pattern(phrases: tuple[str, ...]) -> re.Pattern[str]:
    parts = [
        rf"(?<![a-z]){re.escape(p)}(?![a-z])" if p.isascii() else re.escape(p)
        for p in sorted(phrases, key=len, reverse=True)
    ]
    return re.compile("|".join(parts), re.IGNORECASE)


# What was done, said or is under way ("I exchanged it last week", "I was told I'd get a
# refund", "退款一直在处理中", "客服说可以退"): a record's history, told.
_HISTORY = re.compile(
    r"\b(?:was|were|been|got|get) told\b|\bpromised\b|\bassured me\b|\b(?:supposed|meant) to\b"
    r"|\b(?:you|they|he|she|someone|somebody|agent|rep|representative|colleague|staff|support"
    r"|seller|shop|store)\s+(?:said|told me)\b"
    r"|\bi(?:'ve| have| had)?\s+(?:already\s+|just\s+)?(?:exchanged|returned|cancell?ed|requested"
    r"|applied|sent|shipped|mailed|posted|dropped off)\b"
    r"|\b(?:was|were|been|got|has been|have been)\s+(?:already\s+)?(?:approved|rejected|declined"
    r"|refused|processed|exchanged|replaced)\b"
    r"|\bpending\b|\bin progress\b|\bbeing (?:processed|handled|reviewed)\b|\bunder review\b"
    r"|(?:客服|你们|商家|卖家|店家|他们|那边|之前|上次|当时)[^，,。！!？?]{0,4}(?:说|答应|承诺|保证)"
    r"|答应|承诺过?|(?:退|换|申请|寄|取消|办|处理)过|已经(?:给我)?(?:退|换|寄|申请|取消|办|处理)"
    r"|(?:处理|审核|办理|审批)中|在(?:处理|审核|办理|审批)"
    r"|(?:寄|发)回(?:去|来)?了(?![吗嘛么没])|退回去了(?![吗嘛么没])",
    re.IGNORECASE,
)


def tells_what_happened(text: str) -> bool:
    """Does ``text`` tell what was done, said or is under way with a record — the customer's
    own step ("I exchanged it last week", "我已经退了"), a promise ("I was told I'd get a
    refund", "客服答应给我退款"), a decision ("my return was approved") or a wait ("refund
    pending for two weeks", "一直在处理中")? It asks for nothing by itself: what to do is
    asked for in words of its own ("…, please refund me").

    >>> [tells_what_happened(t) for t in ("i exchanged it last week", "我已经退了", "退款审核中")]
    [True, True, True]
    >>> [tells_what_happened(t) for t in ("i want to exchange it", "我要退货", "能退吗")]
    [False, False, False]
    """
    return _HISTORY.search(text) is not None


# Whether what was asked for is done, in a few words and nothing else ("好了吗", "重置好了吗",
# "登记了吗", "is it done?", "did it go through?"): the turn names no record and no other need.
_DONE_ZH = re.compile(
    r"(?:那|请问|所以|现在|都|已经|我的)*[\u4e00-\u9fff]{0,4}?"
    r"(?:(?:好|完成|成功|搞定|通过|批|办|登记|提交|处理|重置|改|修改|更改|加上|加进去|添加|补充上|补充|补上|记上|记下"
    r"|能登录|可以登录|能登上)"
    r"(?:了|下来了)(?:吗|嘛|么|没有?)"
    r"|怎么样了[吗呢]?|有结果了[吗没]?)"
)
_DONE_EN = re.compile(
    r"(?:(?:so|ok|okay|and|well|hi|hey|sorry|thanks|thank you)\s+)*"
    r"(?:(?:is|was|has|have|did|are)\s+(?:it|that|this|everything|my \w+)\s+(?:been\s+|all\s+)?)?"
    r"(?:done|finished|completed?|sorted(?: out)?|through|approved|processed|logged|gone through"
    r"|added|filed|submitted|recorded|saved|changed|updated|can i (?:log ?in|sign in)(?: again)?"
    r"|went through|go through|work(?:ed)?|all set|all done|ready|ok now"
    r"|any (?:update|news|luck)|how is it going|how's it going)"
    r"(?:\s+(?:yet|now|then|already))?",
    re.IGNORECASE,
)
_PUNCTUATION = re.compile(r"[\s,，.。!！?？~～…]+")


def asks_if_done(text: str) -> bool:
    """Is ``text`` only a question whether what was asked for is done?

    >>> [asks_if_done(t) for t in ("好了吗", "重置好了吗", "登记了没", "is it done?", "done yet")]
    [True, True, True, True, True]
    >>> [asks_if_done(t) for t in ("is it added?", "补充上了吗", "加上了吗", "was it filed")]
    [True, True, True, True]
    >>> [asks_if_done(t) for t in ("thanks! can I log in now?", "谢谢 现在能登录了吗")]
    [True, True]
    >>> [asks_if_done(t) for t in ("好了", "发货了吗", "退款什么时候到", "is it done by friday?")]
    [False, False, False, False]
    """
    return _says_only(text, _DONE_ZH, _DONE_EN)


_CJK = re.compile(r"[\u4e00-\u9fff]")


def _says_only(text: str, chinese: re.Pattern[str], english: re.Pattern[str]) -> bool:
    """Is ``text``, punctuation aside, all one of the pattern of its script?"""
    said = _PUNCTUATION.sub(" ", text).strip()
    if _CJK.search(said):
        return chinese.fullmatch(said.replace(" ", "")) is not None
    return english.fullmatch(said) is not None


# "Why?" and nothing else ("为什么不行", "凭什么", "why not?").
_WHY_ZH = re.compile(
    r"(?:那|可是|但是)?(?:为什么|为啥|凭什么|怎么)"
    r"(?:不行|不可以|不给退|不给办|不给|不让|拒绝|没通过|没批)?[了呢啊呀吗]*"
)
_WHY_EN = re.compile(
    r"(?:(?:but|so|and|ok|okay)\s+)?why(?:\s+not|\s+is\s+that|\s+was\s+it\s+rejected)?", re.I
)


def asks_why(text: str) -> bool:
    """Is ``text`` only "why?" ("为什么不行", "凭什么", "why not?")?

    >>> [asks_why(t) for t in ("为什么不行", "凭什么啊", "why not?", "为什么还没发货", "why me")]
    [True, True, True, False, False]
    """
    return _says_only(text, _WHY_ZH, _WHY_EN)
