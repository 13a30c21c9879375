"""The backend's in-memory world: sample data, business rules, idempotency, faults and log.

A fresh :class:`BackendState` holds its own deep copy of the sample data, so every app instance
starts from the same known state and nothing touches the disk.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import datetime as dt
import hashlib
import json
import random
import re
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from demo_backend.faults import FaultTable
from demo_backend.log import RequestLog

__all__ = [
    "FEATURES",
    "SHIPMENT_STATUS_TEXT",
    "BackendState",
    "Refused",
    "StoredResult",
    "business_today",
    "load_sample_data",
]

SHIPMENT_STATUS_TEXT: dict[str, str] = {
    "pending": "待揽收",
    "in_transit": "运输中",
    "out_for_delivery": "派送中",
    "delivered": "已签收",
    "delayed": "延误",
    "lost": "丢失",
    "returned": "已退回",
}
ORDER_STATUS_TEXT: dict[str, str] = {
    "pending_payment": "待付款",
    "paid": "已付款，待发货",
    "shipped": "已发货",
    "delivered": "已签收",
    "returning": "退货中",
    "refunded": "已退款",
    "cancelled": "已取消",
}
#: Features a user may or may not have (``GET /users/{id}/supports/{feature}``).
FEATURES: dict[str, str] = {
    "cod": "货到付款 / cash on delivery",
    "invoice": "电子发票 / invoices",
    "installments": "分期付款 / installments",
    "express_delivery": "次日达 / next-day delivery",
    "price_protection": "价格保护 / price protection",
}
_NO_RETURN = {"pending_payment", "cancelled", "refunded"}
_NO_REFUND = {"pending_payment", "cancelled"}
#: Orders whose goods have left the warehouse: no refund before their return is received.
_LEFT_WAREHOUSE = {"shipped", "delivered", "returning"}
#: Shipments whose goods are not with the customer (lost on the way, or back with the shop):
#: there is nothing to send back, so their refund need not wait for a return.
_NOT_WITH_CUSTOMER = {"lost", "returned"}
#: How long a correct SMS code proves the phone's owner for a password change, by default.
VERIFIED_FOR_S = 600.0


class Refused(Exception):
    """A business refusal that becomes a JSON error response (404 unknown id, 409 conflict…)."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": self.message, **self.extra}


@dataclass(frozen=True, slots=True)
class StoredResult:
    """What an idempotency key maps to: the request's fingerprint and the answer given."""

    fingerprint: str
    status: int
    body: dict[str, Any]


def load_sample_data() -> dict[str, Any]:
    """The bundled sample data (users, orders, shipments, payment methods, feature flags)."""
    text = resources.files("demo_backend").joinpath("data.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


#: The "today" of the bundled sample data: its shipments were last updated on this day.
SAMPLE_TODAY = dt.date(2024, 5, 28)
#: The sample business's time zone: its timestamps are +08:00 and its days are Shanghai's.
SAMPLE_ZONE = dt.timezone(dt.timedelta(hours=8), "Asia/Shanghai")


def business_today() -> dt.date:
    """Today in the sample business's time zone: the day :class:`BackendState` moves the
    data to, so a parcel due today is due today for a service on the same zone."""
    return dt.datetime.now(SAMPLE_ZONE).date()


_ISO_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})(.*)$")


def _shift_dates(record: dict[str, Any], shift: dt.timedelta) -> dict[str, Any]:
    """Move every ISO date or timestamp value of a record by ``shift`` (ids are left alone)."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        match = _ISO_DATE.match(value) if isinstance(value, str) else None
        if match and not key.endswith("_id"):
            day = dt.date.fromisoformat(match.group(1)) + shift
            value = day.isoformat() + match.group(2)
        out[key] = value
    return out


def _cents(amount: float) -> int:
    return round(float(amount) * 100)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class BackendState:
    """Everything one backend instance knows and remembers.

    Args:
        seed: seeds the random source (SMS codes, captcha ids, error-rate rolls).
        rng: a ready random source; wins over ``seed``.
        now: wall clock in epoch seconds (log times, SMS code expiry).
        sleep: awaited for latency and hang faults; tests may pass an instant one.
        data: sample data to use instead of the bundled ``data.json`` (copied, never mutated).
        sms_code_ttl_s: how long a sent code stays valid.
        verified_for_s: how long a correct SMS code proves the phone's owner: a password
            reset or change must come within this time of ``POST /sms/verify``.
        require_verified_phone: accepted for callers of older versions and ignored: a
            password reset or change always needs the phone verified by SMS code.
        today: the day the sample data is moved to (its dates keep their distance from
            :data:`SAMPLE_TODAY`), so a parcel "7 days in transit" is due in the coming days
            whenever the demo runs; ``None`` keeps the dates as written.
    """

    def __init__(
        self,
        *,
        seed: int | None = None,
        rng: random.Random | None = None,
        now: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        data: Mapping[str, Any] | None = None,
        sms_code_ttl_s: float = 300.0,
        verified_for_s: float = VERIFIED_FOR_S,
        require_verified_phone: bool = False,
        today: dt.date | None = None,
    ) -> None:
        self.rng = rng if rng is not None else random.Random(seed)
        self.now = now
        self.sleep = sleep
        self.sms_code_ttl_s = sms_code_ttl_s
        self.verified_for_s = verified_for_s
        self.require_verified_phone = require_verified_phone
        self.faults = FaultTable(self.rng)
        self.log = RequestLog(now)
        raw = copy.deepcopy(dict(data) if data is not None else load_sample_data())
        if today is not None:
            shift = today - SAMPLE_TODAY
            raw["orders"] = [_shift_dates(o, shift) for o in raw["orders"]]
            raw["shipments"] = [_shift_dates(s, shift) for s in raw["shipments"]]
        self.users: dict[str, dict[str, Any]] = {u["user_id"]: u for u in raw["users"]}
        self.orders: dict[str, dict[str, Any]] = {o["order_id"]: o for o in raw["orders"]}
        for order in self.orders.values():
            # What has been paid back so far; a refunded order has nothing left to refund.
            paid_back = order["amount"] if order["status"] == "refunded" else 0.0
            order.setdefault("refunded_amount", paid_back)
        self.shipments: dict[str, dict[str, Any]] = {s["order_id"]: s for s in raw["shipments"]}
        self.payment_methods: dict[str, list[dict[str, Any]]] = raw["payment_methods"]
        self.supports: dict[str, dict[str, bool]] = raw["supports"]
        self.phones: dict[str, str] = {u["phone"]: uid for uid, u in self.users.items()}
        self.password_digests: dict[str, str] = {}
        self.sms_outbox: dict[str, dict[str, Any]] = {}
        self.sms_messages: dict[str, list[str]] = {}
        self.verified_phones: dict[str, float] = {}
        self._spent_codes: set[str] = set()
        self.captchas: dict[str, dict[str, str]] = {}
        self.returns: dict[str, dict[str, Any]] = {}
        self.refunds: dict[str, dict[str, Any]] = {}
        self.tickets: dict[str, dict[str, Any]] = {}
        self._idempotency: dict[tuple[str, str], StoredResult] = {}
        self._lock = threading.Lock()

    # -- idempotency ---------------------------------------------------------------------------

    def stored(self, endpoint: str, key: str) -> StoredResult | None:
        with self._lock:
            return self._idempotency.get((endpoint, key))

    def store(self, endpoint: str, key: str, result: StoredResult) -> None:
        with self._lock:
            self._idempotency[(endpoint, key)] = result

    # -- look-ups ------------------------------------------------------------------------------

    def user(self, user_id: str) -> dict[str, Any]:
        user = self.users.get(user_id)
        if user is None:
            raise Refused(404, f"user {user_id} not found")
        return {k: v for k, v in user.items()}

    def phone(self, phone: str) -> dict[str, Any]:
        user_id = self.phones.get(phone)
        if user_id is None:
            return {"phone": phone, "registered": False, "user_id": None}
        return {"phone": phone, "registered": True, "user_id": user_id}

    def order(self, order_id: str) -> dict[str, Any]:
        order = self.orders.get(order_id)
        if order is None:
            raise Refused(404, f"order {order_id} not found")
        out = copy.deepcopy(order)
        out["status_text"] = ORDER_STATUS_TEXT.get(order["status"], order["status"])
        return out

    def orders_of(self, user_id: str) -> dict[str, Any]:
        self.user(user_id)
        orders = [self.order(oid) for oid, o in self.orders.items() if o["user_id"] == user_id]
        orders.sort(key=lambda o: o["created_at"], reverse=True)
        return {"user_id": user_id, "orders": orders}

    def shipment(self, order_id: str) -> dict[str, Any]:
        self.order(order_id)
        shipment = self.shipments.get(order_id)
        if shipment is None:
            raise Refused(404, f"order {order_id} has no shipment yet")
        out = dict(shipment)
        out["user_id"] = self.orders[order_id]["user_id"]
        out["status_text"] = SHIPMENT_STATUS_TEXT.get(shipment["status"], shipment["status"])
        return out

    def list_payment_methods(self, user_id: str) -> dict[str, Any]:
        self.user(user_id)
        methods = copy.deepcopy(self.payment_methods.get(user_id, []))
        return {"user_id": user_id, "methods": methods}

    def support(self, user_id: str, feature: str) -> dict[str, Any]:
        self.user(user_id)
        if feature not in FEATURES:
            raise Refused(404, f"unknown feature {feature}", features=sorted(FEATURES))
        supported = bool(self.supports.get(user_id, {}).get(feature, False))
        return {"user_id": user_id, "feature": feature, "supported": supported}

    # -- account security ----------------------------------------------------------------------

    def _token(self, prefix: str) -> str:
        return f"{prefix}-{self.rng.getrandbits(48):012x}"

    def send_sms(self, phone: str) -> dict[str, Any]:
        code = f"{self.rng.randrange(1_000_000):06d}"
        request_id = self._token("sms")
        self.sms_outbox[phone] = {"code": code, "sent_at": self.now(), "request_id": request_id}
        return {"sent": True, "request_id": request_id, "phone_tail": phone[-4:]}

    def outbox(self, phone: str) -> dict[str, Any]:
        sent = self.sms_outbox.get(phone)
        if sent is None and phone not in self.sms_messages:
            raise Refused(404, "no code was sent to this phone")
        return {"phone": phone, **(sent or {}), "messages": list(self.sms_messages.get(phone, []))}

    def make_captcha(self, phone: str) -> dict[str, Any]:
        alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
        answer = "".join(self.rng.choice(alphabet) for _ in range(4))
        captcha_id = self._token("cap")
        # The phone's latest captcha replaces the older ones, as a new SMS code does.
        self.captchas = {k: v for k, v in self.captchas.items() if v["phone"] != phone}
        self.captchas[captcha_id] = {"answer": answer, "phone": phone}
        return {"captcha_id": captcha_id, "image": _captcha_image(answer)}

    def verify_captcha(self, captcha_id: str, answer: str) -> dict[str, Any]:
        """Case-insensitive, as captchas are. Like an SMS code, checking the same answer again
        gives the same answer (a check re-sent after a crash must not fail), until a new captcha
        for the phone replaces it."""
        captcha = self.captchas.get(captcha_id)
        if captcha is None:
            raise Refused(404, "no such captcha")
        # A captcha deters bots; it proves nothing about who is on the line (its picture is on
        # the agent's screen), so it never verifies the phone.
        return {"valid": captcha["answer"] == answer.strip().upper()}

    def verify_sms(self, phone: str, code: str) -> dict[str, Any]:
        """Only the latest code, within its time to live, and not one a password change has
        already used. A correct code proves the phone's owner for :attr:`verified_for_s`."""
        sent = self.sms_outbox.get(phone)
        valid = (
            sent is not None
            and sent["code"] == code
            and sent["request_id"] not in self._spent_codes
            and self.now() - float(sent["sent_at"]) <= self.sms_code_ttl_s
        )
        if valid:
            self.verified_phones[phone] = self.now()
        return {"valid": valid}

    def _verified_owner(self, phone: str) -> str:
        """The account of a phone whose SMS code was read back within the window. The proof
        (and the code behind it) is used up by the password change it allows: a second change
        needs a new code. A captcha never counts."""
        user_id = self.phones.get(phone)
        if user_id is None:
            raise Refused(404, "phone is not registered", code="not_found")
        verified_at = self.verified_phones.get(phone)
        if verified_at is None or self.now() - verified_at > self.verified_for_s:
            raise Refused(409, "phone has not been verified by SMS code", code="not_verified")
        del self.verified_phones[phone]
        sent = self.sms_outbox.get(phone)
        if sent is not None:
            self._spent_codes.add(sent["request_id"])
        return user_id

    def update_password(self, phone: str, new_password: str) -> dict[str, Any]:
        user_id = self._verified_owner(phone)
        # Only a digest is kept: the demo never needs the password back.
        self.password_digests[user_id] = _digest(new_password)
        return {"updated": True, "user_id": user_id}

    def reset_password(self, phone: str) -> dict[str, Any]:
        """A temporary password, sent by SMS to the verified phone; the answer never holds it."""
        user_id = self._verified_owner(phone)
        temporary = f"{self.rng.getrandbits(40):010x}"
        self.password_digests[user_id] = _digest(temporary)
        self.sms_messages.setdefault(phone, []).append(
            f"您的临时密码 / your temporary password: {temporary}"
        )
        return {"sent": True, "channel": "sms", "phone_tail": phone[-4:], "user_id": user_id}

    # -- after-sales ---------------------------------------------------------------------------

    def _owned_order(self, order_id: str, user_id: str) -> dict[str, Any]:
        """The order, if it exists and is the customer's: unknown and foreign read alike."""
        order = self.orders.get(order_id)
        if order is None or order["user_id"] != user_id:
            raise Refused(404, f"order {order_id} not found", code="not_found")
        return order

    def _with_customer(self, order: Mapping[str, Any]) -> bool:
        """Has the order's parcel left the warehouse and reached (or is on its way to) the
        customer, so that a refund must wait for the goods to come back?"""
        if order["status"] not in _LEFT_WAREHOUSE:
            return False
        shipment = self.shipments.get(order["order_id"])
        return shipment is None or shipment["status"] not in _NOT_WITH_CUSTOMER

    def create_return(self, order_id: str, reason: str, user_id: str) -> dict[str, Any]:
        order = self._owned_order(order_id, user_id)
        if order["status"] in _NO_RETURN:
            raise Refused(409, f"order {order_id} cannot be returned", order_status=order["status"],
                          code="not_returnable")  # fmt: skip
        if any(r["order_id"] == order_id and not r["closed"] for r in self.returns.values()):
            raise Refused(409, f"order {order_id} already has an open return", code="return_exists")
        status = "approved" if order["status"] in {"delivered", "returning"} else "pending_review"
        return_id = self._next_id("RT", self.returns)
        record = {"return_id": return_id, "order_id": order_id, "reason": reason, "status": status}
        # Goods that are not with the customer have nothing to send back: received at once.
        received = not self._with_customer(order)
        self.returns[return_id] = {**record, "received": received, "closed": False}
        if order["status"] in _LEFT_WAREHOUSE:
            order["status"] = "returning"
        # Whether the refund may be issued now, or waits for the goods to come back.
        return {**record, "received": received}

    def receive_return(self, return_id: str) -> dict[str, Any]:
        """The warehouse got the goods back (an admin action in the demo); idempotent."""
        record = self.returns.get(return_id)
        if record is None:
            raise Refused(404, f"return {return_id} not found", code="not_found")
        record["received"] = True
        return {"return_id": return_id, "order_id": record["order_id"], "received": True}

    def issue_refund(self, order_id: str, amount: float, user_id: str) -> dict[str, Any]:
        order = self._owned_order(order_id, user_id)
        if order["status"] in _NO_REFUND:
            raise Refused(409, f"order {order_id} cannot be refunded", order_status=order["status"],
                          code="not_refundable")  # fmt: skip
        # In cents, so that refunds of 0.1 and 0.2 never drift from the paid amount.
        paid, refunded = _cents(order["amount"]), _cents(order["refunded_amount"])
        asked = _cents(amount)
        if asked <= 0:
            raise Refused(422, "a refund is at least 0.01", code="invalid_amount")
        refundable = (paid - refunded) / 100
        if asked > paid - refunded:
            raise Refused(409, f"at most {refundable:.2f} can still be refunded",
                          code="over_refundable", refundable=refundable)  # fmt: skip
        returns = [r for r in self.returns.values() if r["order_id"] == order_id]
        if self._with_customer(order) and not any(r["received"] for r in returns):
            raise Refused(409, f"order {order_id} has shipped: its return must be received first",
                          code="return_not_received")  # fmt: skip
        refund_id = self._next_id("RF", self.refunds)
        record: dict[str, Any] = {
            "refund_id": refund_id,
            "order_id": order_id,
            "amount": asked / 100,
            "status": "processing",
            "expected_days": 3,
        }
        self.refunds[refund_id] = record
        order["refunded_amount"] = (refunded + asked) / 100
        if refunded + asked == paid:
            # Paid back in full: a cancellation if the goods never left, else a refunded order.
            order["status"] = "refunded" if order["status"] in _LEFT_WAREHOUSE else "cancelled"
            for r in returns:
                r["closed"] = True
        return dict(record)

    @staticmethod
    def _next_id(prefix: str, taken: Mapping[str, Any]) -> str:
        n = len(taken) + 1
        while f"{prefix}{n:08d}" in taken:
            n += 1
        return f"{prefix}{n:08d}"

    # -- tickets -------------------------------------------------------------------------------

    def create_ticket(self, user_id: str, order_id: str | None, summary: str) -> dict[str, Any]:
        self.user(user_id)
        if order_id is not None:
            self._owned_order(order_id, user_id)
        ticket_id = self._next_id("TK", self.tickets)
        record: dict[str, Any] = {
            "ticket_id": ticket_id,
            "user_id": user_id,
            "order_id": order_id,
            "summary": summary,
            "status": "open",
            "notes": [],
        }
        self.tickets[ticket_id] = record
        return {"ticket_id": ticket_id, "status": "open"}

    def add_ticket_note(self, ticket_id: str, user_id: str, note: str) -> dict[str, Any]:
        """A note on the customer's own ticket: unknown and foreign tickets read alike."""
        ticket = self.tickets.get(ticket_id)
        if ticket is None or ticket["user_id"] != user_id:
            raise Refused(404, f"ticket {ticket_id} not found", code="not_found")
        ticket["notes"].append(note)
        return {"ticket_id": ticket_id, "status": ticket["status"], "notes": len(ticket["notes"])}


_CAPTCHA_TEXT = re.compile(r">([A-Z0-9]{4})</text>")


def _captcha_image(answer: str) -> str:
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="96" height="32">'
        '<rect width="96" height="32" fill="#eef"/>'
        f'<text x="14" y="23" font-family="monospace" font-size="20">{answer}</text></svg>'
    )
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode("ascii")


def read_captcha(image: str) -> str:
    """What a customer reads off a captcha this backend drew (its ``image`` data URL): for
    demos, tests and benchmarks that play the customer.

    Raises:
        ValueError: the image is not one of this backend's captchas.
    """
    try:
        svg = base64.b64decode(image.split(",", 1)[1]).decode()
    except (IndexError, ValueError) as exc:
        raise ValueError("not a captcha image of the demo backend") from exc
    match = _CAPTCHA_TEXT.search(svg)
    if match is None:
        raise ValueError("not a captcha image of the demo backend")
    return match.group(1)
