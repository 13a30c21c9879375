"""What the simulated customers say: the article's mix of conversations and their lines.

Shared by the Locust agents (:mod:`hermes_desk.bench.locustfile`) and the turn-CPU driver
(:mod:`hermes_desk.bench.turn_cpu`), so both measure the same conversations.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

__all__ = ["CODE", "MIX", "pick_kind", "script"]

MIX = (("order", 0.60), ("password_reset", 0.20), ("logistics", 0.15), ("complaint", 0.05))
#: stands for the SMS code the customer reads off their phone (the agents fill it in)
CODE = "<sms code>"

ORDER_FOLLOW_UPS = (
    "那什么时候能到？",
    "现在到哪里了？",
    "订单{order}是什么状态",
    "能帮我看看物流吗",
    "好的，我知道了",
    "请不要给我打电话，有事发短信",
)
LOGISTICS_FOLLOW_UPS = (
    "快递到哪了？",
    "怎么这么慢，什么时候能送到",
    "请不要再给我发短信了",
    "能不能催一下快递",
    "好吧，谢谢",
)
COMPLAINT_FOLLOW_UPS = (
    "我要求给个说法",
    "请不要给我打电话，有事发短信",
    "你们的服务太差了",
    "好吧，先这样",
)
RESET_FOLLOW_UPS = ("好的，收到新密码了", "谢谢", "请不要给我打电话，有事发短信", "好的")


def pick_kind(rng: random.Random) -> str:
    """A conversation kind drawn from :data:`MIX`."""
    return rng.choices([k for k, _ in MIX], weights=[w for _, w in MIX])[0]


def script(kind: str, customer: Mapping[str, Any], order: str, rng: random.Random) -> list[str]:
    """The customer's 3–6 lines of a ``kind`` conversation about ``order``; a password reset's
    second line is :data:`CODE`."""
    n = rng.randint(3, 6)
    pool: tuple[str, ...]
    if kind == "password_reset":
        first = [f"我忘记密码了，手机号{customer['phone']}", CODE]
        pool = RESET_FOLLOW_UPS
    elif kind == "logistics":
        first = [f"订单{order}的快递已经超过{rng.randint(3, 9)}天了还没到，我很着急"]
        pool = LOGISTICS_FOLLOW_UPS
    elif kind == "complaint":
        first = [f"我要投诉订单{order}，客服打了{rng.randint(2, 5)}次电话都没人解决，太差劲了"]
        pool = COMPLAINT_FOLLOW_UPS
    else:
        first = [f"帮我查一下订单{order}"]
        pool = ORDER_FOLLOW_UPS
    rest = [rng.choice(pool).format(order=order) for _ in range(n - len(first))]
    return first + rest
