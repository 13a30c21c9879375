"""What a customer bought, when, and why it goes back: ``product``, ``purchase_date``, ``reason``.

"我昨天买的耳机想退货" → product 耳机, purchase_date = yesterday; "the jacket I ordered last week is
too small" → product jacket, purchase_date = last week's day, reason "too small". Deterministic
and format-light: a product is the noun phrase after a purchase verb ("买的X", "bought a X",
"return the X"), a purchase date is a date mention next to a purchase verb, a reason is the
clause that says what is wrong (size, a defect, a wrong item, a change of mind).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_desk.nlu.dates import DateMention

__all__ = ["find_product", "find_purchase_date", "find_reason", "says_what_is_wrong"]

_ZH_BUY = r"(?:买|购买|订购|订|下单|下的单|入手|收到|拿到|到手)"
_ZH_MEASURE = (
    r"(?:这个|那个|这件|那件|这台|那台|这双|那双|这条|那条|这套|那套"
    r"|一个|一件|一台|一双|一条|一套|一部|一本|一瓶|一盒|一款"
    # alone, only those no product's name starts with: 台灯, 条纹衬衫, 套装, 双肩包, 款式
    r"|个|件)"
)
_ZH_STOP = (
    r"(?=想|要|(?<!功)能|可|怎|坏|有|太|不|出|质|尺|还|已|没|漏|破|碎|裂|开(?:线|裂|胶)|是|很|特|发|用|穿|和|跟|给|少|缺"
    r"|，|,|。|！|!|？|\?|\s|$)"
)
# "收到的时候碎了": when it came, not what was bought.
_ZH_BOUGHT = rf"{_ZH_BUY}(?:了)?的(?!时候)"
_ZH_PRODUCT = re.compile(
    rf"{_ZH_BOUGHT}\s*{_ZH_MEASURE}?\s*(?P<p>[\u4e00-\u9fffA-Za-z0-9]{{1,12}}?){_ZH_STOP}"
)
# 退款 is a refund, not 退 + the measure word 款 ("退款吧" named no product 吧).
_ZH_RETURN_PRODUCT = re.compile(
    rf"(?:想|要)?(?:退(?!款)|换)(?:掉|货)?\s*(?:这|那)?{_ZH_MEASURE}\s*(?P<p>[\u4e00-\u9fffA-Za-z0-9]{{1,12}}?)"
    rf"(?=吧|了|啊|呢|，|,|。|！|!|？|\?|\s|$)"
)
_EN_DET = r"(?:a|an|the|some|these|those|this|that|my|our|two|new|a\s+pair\s+of|a\s+set\s+of)"
_EN_STOP = (
    r"(?=\s+(?:yesterday|today|last|on|from|at|in|for|and|but|which|that|i|it|because|since|as"
    r"|is|are|was|were|has|had|a|two|three|four|five|six|seven|\d)\b|\s*[,.!?;]|\s*$)"
)
_EN_PRODUCT = re.compile(
    rf"\b(?:bought|ordered|purchased|got|received)\s+{_EN_DET}\s+(?P<p>[a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){{0,3}}?){_EN_STOP}",
    re.IGNORECASE,
)
_EN_RETURN_PRODUCT = re.compile(
    rf"\b(?:return|exchange|send\s+back|refund)\s+{_EN_DET}\s+(?P<p>[a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){{0,3}}?){_EN_STOP}",
    re.IGNORECASE,
)
_EN_PRODUCT_BEFORE = re.compile(
    r"\b(?:the|my|this|that|these|those)\s+(?P<p>[a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){0,2}?)\s+"
    r"(?:i|we)\s+(?:just\s+)?(?:bought|ordered|purchased|got|received)\b",
    re.IGNORECASE,
)
_NOT_PRODUCTS = frozenset(
    {"it", "one", "them", "thing", "things", "stuff", "something", "order", "item", "items",
     "product", "东西", "货", "单", "订单", "的", "了", "款", "吗", "吧", "呢", "啊", "呀",
     # what is said of the one wanted instead ("换一个新的" named the product 新)
     "新", "好", "对", "大", "小", "大点", "小点", "大一点", "小一点", "别", "其他", "其它", "一样"}
)  # fmt: skip

_ZH_BUY_AFTER = re.compile(rf"^\s*(?:才|刚|就|时|的时候)?\s*{_ZH_BUY}")
_EN_BUY = re.compile(r"\b(?:bought|ordered|purchased|got|placed)\b", re.IGNORECASE)

_REASON_CUES = re.compile(
    r"太(?:大|小|长|短|紧|松|肥|瘦|薄|厚|重|贵)|有点(?:大|小|长|短|紧|松|肥|瘦)|偏(?:大|小|紧)|尺码|尺寸|不合(?:适|身|脚)|质量|坏了|坏的|破了|破损|碎了|碎的|碎掉|裂了|裂开|开胶|摔坏|压坏|漏水|漏气"
    r"|不亮|没反应|开不了机|用不了|不能用|不好用|发错|错发|少发|漏发|少了(?:一|两|几|[0-9])|缺了|缺少|拍错|买错|买(?:大|小)了|不喜欢|色差"
    r"|(?:颜色|尺码|型号)不对|与描述不符|和描述不符"
    r"|不一样|有问题|故障|划痕|异味|过敏|不想要|不需要|不要了|过期|瑕疵|掉色|起球|开线|杂音|噪音|没声音|不响"
    r"|(?:too|a\s+bit|slightly)\s+(?:big|small|large|tight|loose|long|short|heavy|thin|thick|narrow|wide|loud|dark)"
    r"|(?:doesn'?t|does\s+not|didn'?t|don'?t|do\s+not)\s+fit|shr[au]nk|faded|ripped|fell\s+apart"
    r"|wrong\s+(?:size|item|colou?r|model|one)|(?:size|colou?r|model)\s+is\s+(?:wrong|not\s+right)"
    r"|broken|damaged|defective|faulty|stopped\s+working"
    r"|(?:doesn'?t|does\s+not|isn'?t|is\s+not)\s+working|not\s+working|leak(?:s|ing)?|cracked"
    r"|scratched|(?:don'?t|do\s+not)\s+(?:like|want|need)|not\s+as\s+described|changed\s+my\s+mind"
    r"|missing\s+(?:parts?|pieces?)|poor\s+quality|bad\s+quality|stained|torn",
    re.IGNORECASE,
)
# The size wanted instead ("换大一码", "for a bigger size"): the reason, when nothing is said wrong.
_SIZE_WANTED = re.compile(r"[大小]一[码号]|(?:bigger|smaller|larger)\s+size", re.IGNORECASE)
_CLAUSE = re.compile(r"[，,。.！!？?；;\n]+|\s+(?:and|but|so)\s+", re.IGNORECASE)
# A purchase said before the reason ("上周买的那件外套太大了", "I bought a hoodie"): not the reason.
_ZH_BOUGHT_HEAD = re.compile(rf"^.*?{_ZH_BOUGHT}\s*{_ZH_MEASURE}?")
# Words around the reason that are the request, not the reason.
_ZH_TRIM_TAIL = re.compile(
    r"(?:所以|因此|我)?(?:直接|干脆|就|还是)?(?:给我|帮我)?(?:想|要|能|可以|申请|帮我|请)?"
    r"(?:退货|退款|退掉|退了|退|换货|换一个|换个|换|退换)"
    r"[\u4e00-\u9fff]{0,8}$"
)
_ZH_WHAT_NOW = re.compile(r"[，,\s]*(?:怎么办|咋办|咋整|怎么弄|怎么处理|如何处理)[啊呀呢吧]*$")
_ZH_TRIM_HEAD = re.compile(r"^(?:因为|由于|是因为|就是|但是|可是|而且|结果|发现|那(?=我))")
# A request and the order's label said before the reason without a comma ("我要退货 订单…
# 质量有问题"): the request, not the reason.
_ZH_REQUEST_HEAD = re.compile(
    r"^(?:我|您好|你好)?\s*(?:要|想|想要|需要|申请|帮我)?\s*(?:退货|退款|退换货|换货)(?:退款)?\s+"
    r"(?:订单号?\s*(?:[:：]\s*)?\d*\s+)?"
)
_EN_TRIM_HEAD = re.compile(
    r"^\s*(?:because|since|as|but|and|so|it'?s|it\s+is|they'?re|they\s+are|the\s+\w+\s+is)\s+",
    re.IGNORECASE,
)
_EN_TRIM_TAIL = re.compile(
    r"\s+(?:so\s+)?(?:i\s+)?(?:want|would\s+like|need|'d\s+like)\s+to\s+(?:return|exchange|refund).*$",
    re.IGNORECASE,
)


def _clean_product(value: str) -> str | None:
    value = value.strip(" 的了")
    # "the wrong item", "the same thing": what is said of it names no product
    if not value or value.lower() in _NOT_PRODUCTS or value.lower().split()[-1] in _NOT_PRODUCTS:
        return None
    return value


_PRODUCT_PATTERNS = (
    _ZH_PRODUCT,
    _EN_PRODUCT_BEFORE,
    _EN_PRODUCT,
    _ZH_RETURN_PRODUCT,
    _EN_RETURN_PRODUCT,
)


def find_product(text: str) -> str | None:
    """The product the customer bought or wants to send back, as they named it."""
    patterns = (
        _ZH_PRODUCT,
        _EN_PRODUCT_BEFORE,
        _EN_PRODUCT,
        _ZH_RETURN_PRODUCT,
        _EN_RETURN_PRODUCT,
    )
    for pattern in patterns:
        for m in pattern.finditer(text):
            product = _clean_product(m.group("p"))
            if product is not None:
                return product
    return None


def find_purchase_date(text: str, dates: Sequence[DateMention]) -> DateMention | None:
    """The date mention that says when the purchase was made: right before a purchase verb
    ("昨天买的", "上周下的单"), or at most four words after one ("bought it yesterday", "ordered
    the jacket last week")."""
    for mention in dates:
        if _ZH_BUY_AFTER.match(text[mention.end : mention.end + 6]):
            return mention
        before = text[max(0, mention.start - 40) : mention.start]
        verbs = list(_EN_BUY.finditer(before))
        if verbs and len(before[verbs[-1].end() :].split()) <= 4:
            return mention
    return None


_BECAUSE = re.compile(r"\b(?:because|since|cause|as)\s+", re.IGNORECASE)
_COPULA_BEFORE_CUE = re.compile(r"^.*\b(?:is|are|was|were)\s+$", re.IGNORECASE)


def _after_because(reason: str) -> str:
    """ "… because the screen is cracked" → "the screen is cracked"; "the jacket I ordered is
    too small" → "too small"."""
    parts = _BECAUSE.split(reason)
    if len(parts) > 1 and parts[-1].strip():
        return parts[-1]
    cue = _REASON_CUES.search(reason)
    if cue and _COPULA_BEFORE_CUE.match(reason[: cue.start()]):
        return reason[cue.start() :]
    return reason


def says_what_is_wrong(text: str) -> bool:
    """Does ``text`` say what is wrong with a purchase ("耳机坏了", "the jacket is too small")?"""
    return _REASON_CUES.search(text) is not None


def find_reason(text: str) -> str | None:
    """The clause that says what is wrong with the purchase ("尺码太大", "it leaks"), trimmed of
    the request around it ("想退货", "I want to return it")."""
    wanted: str | None = None  # the size wanted, when no clause says what is wrong
    for clause in _CLAUSE.split(text):
        cue = _REASON_CUES.search(clause)
        if cue is None:
            size = _SIZE_WANTED.search(clause)
            wanted = wanted or (size.group(0) if size else None)
            continue
        reason = clause.strip()
        reason = _ZH_BOUGHT_HEAD.sub("", reason)
        reason = _ZH_REQUEST_HEAD.sub("", reason)
        reason = _ZH_TRIM_TAIL.sub("", reason)
        reason = _ZH_TRIM_HEAD.sub("", reason)
        reason = _ZH_WHAT_NOW.sub("", reason)  # "东西坏了咋整": what is wrong, not the question
        reason = _EN_TRIM_TAIL.sub("", reason)
        reason = _EN_TRIM_HEAD.sub("", reason).strip()
        reason = _after_because(reason)
        # "订单…的衣服有点小", "<number>的杯子是碎的" (its number there, or blanked out by its
        # extractor): the thing, not the label
        reason = re.sub(
            r"^(?:(?:订单号?|order)?\s*\d{6,}|订单号?\s+)\s*(?:的(?=\S))?",
            "",
            reason,
            flags=re.IGNORECASE,
        ).strip()
        reason = re.sub(r"\s+订单号?\s*[:：]?\s*$", "", reason)  # "东西坏了 订单…": the label
        # "I got the wrong item in order …": the label left by the number, in English
        reason = re.sub(
            r"\s+(?:in|for|of|on|from|with)\s+(?:my\s+|the\s+)?order(?:\s+(?:no\.?|number|#))?\s*$",
            "",
            reason,
            flags=re.IGNORECASE,
        )
        # "<number>的杯子是碎的", the number blanked out: the thing, not the 的 that tied it
        # to its number (的确, "indeed", is a word of its own)
        reason = re.sub(r"^的(?!确)(?=\S)", "", reason)
        reason = re.sub(r"\s{2,}", " ", reason)  # an order number blanked out by its extractor
        if not _REASON_CUES.search(reason):
            # The cue was inside the request trimmed away ("换个大一号的", "exchange them for a
            # bigger size"): the cue alone says it.
            reason = cue.group(0)
        if reason:
            return reason[:200]
    return wanted
