"""Fault injection: latency, error rate and hangs, settable per endpoint at run time."""

from __future__ import annotations

import random
import threading

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ENDPOINTS", "WILDCARD", "FaultConfig", "FaultTable"]

#: Every route that can be faulted, by name.
ENDPOINTS: tuple[str, ...] = (
    "health",
    "get_user",
    "check_phone",
    "get_order",
    "list_orders",
    "get_shipment",
    "list_payment_methods",
    "get_support",
    "send_sms",
    "sms_outbox",
    "make_captcha",
    "verify_captcha",
    "verify_sms",
    "update_password",
    "create_return",
    "issue_refund",
    "create_ticket",
    "reset_password",
    "add_ticket_note",
)
#: A fault set under this name applies to every endpoint that has none of its own.
WILDCARD = "*"


class FaultConfig(BaseModel):
    """What goes wrong on one endpoint.

    Applied in this order: wait ``latency_ms``; if ``timeout``, hang for ``hang_s`` (released
    early when the client goes away or the fault is cleared) and then answer normally; with
    probability ``error_rate``, answer ``status_code`` instead of doing the work.
    """

    model_config = ConfigDict(extra="forbid")

    latency_ms: int = Field(default=0, ge=0, le=600_000)
    error_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    timeout: bool = False
    status_code: int = Field(default=503, ge=400, le=599)
    hang_s: float = Field(default=30.0, ge=0.0, le=3600.0)


class FaultTable:
    """Fault configs by endpoint name, plus the random source that decides error rolls."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._faults: dict[str, FaultConfig] = {}
        self._lock = threading.Lock()

    @staticmethod
    def known(name: str) -> bool:
        return name == WILDCARD or name in ENDPOINTS

    def set(self, name: str, config: FaultConfig) -> None:
        with self._lock:
            self._faults[name] = config

    def clear(self, name: str | None = None) -> bool:
        """Remove one fault (or all when ``name`` is None); True if something was removed."""
        with self._lock:
            if name is None:
                had = bool(self._faults)
                self._faults.clear()
                return had
            return self._faults.pop(name, None) is not None

    def all(self) -> dict[str, FaultConfig]:
        with self._lock:
            return dict(self._faults)

    def for_endpoint(self, name: str) -> FaultConfig | None:
        """The endpoint's own fault, else the wildcard's, else None."""
        with self._lock:
            return self._faults.get(name) or self._faults.get(WILDCARD)

    def roll_error(self, config: FaultConfig) -> bool:
        if config.error_rate <= 0.0:
            return False
        with self._lock:
            return self._rng.random() < config.error_rate
