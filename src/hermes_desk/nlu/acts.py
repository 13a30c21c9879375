"""Is the customer asking about something, or asking for it? (SPEC §8 X4: asking is not
requesting.)

"退货运费谁承担？" and "how long does a refund take?" ask about a policy: they are answered and
propose nothing. "我要退货，订单…", "please refund order …" and the polite "能帮我退一下吗" ask
for an action. The rule is deterministic and bilingual: desire and imperative forms win (a
polite request phrased as a question is still a request); otherwise question words or a question
mark make a question; a bare statement with no question form is a request (it names a problem
the agent acts on: "我的订单还没到").
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["DialogueAct", "request_act"]

DialogueAct = Literal["question", "request"]

# Desire, imperative and polite-request forms: "I want", "please", "帮我", "能帮我…吗".
_REQUEST = re.compile(
    r"我要|我想要?|我需要|帮我|给我|替我|麻烦你?|请你?帮|请(?:给|把|为)|申请|办理|要求"
    r"|能不能帮|可以帮|能帮|帮忙|赶紧|马上|立刻|直接(?:给|帮)"
    r"|\bi(?:'d| would) like\b|\bi want\b|\bi need\b|\bplease\b|\bcan you\b|\bcould you\b"
    r"|\bwould you\b|\bi'd like to\b|\bhelp me\b|\bi wanna\b|\blet me\b",
    re.IGNORECASE,
)
# Question forms about a policy or a process.
_QUESTION = re.compile(
    r"[?？]|吗$|吗[?？。！!]?$|呢|多久|多长时间|几天|怎么|如何|为什么|谁|是否|能否|可不可以|可以吗"
    r"|有没有|什么|哪些|哪个|几个|多少|会不会|要不要|是不是"
    r"|^(?:how|what|when|who|why|which|where|do|does|is|are|can|will|should)\b",
    re.IGNORECASE,
)


def request_act(text: str) -> DialogueAct:
    """``request`` when the customer asks for an action, ``question`` when they ask about one."""
    stripped = text.strip()
    if _REQUEST.search(stripped):
        return "request"
    if _QUESTION.search(stripped):
        return "question"
    return "request"
