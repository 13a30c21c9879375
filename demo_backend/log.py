"""The request log: one entry per call to a business endpoint, readable by tests."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Literal

__all__ = ["Outcome", "RequestLog"]

#: executed = the work ran; replayed = a stored result for a repeated idempotency key;
#: fault = an injected fault answered; error = refused (unknown id, bad body, conflict).
Outcome = Literal["executed", "replayed", "fault", "error"]


class RequestLog:
    """Append-only, bounded, with a sequence number that never goes back (even after clear)."""

    def __init__(self, now: Callable[[], float], maxlen: int = 10_000) -> None:
        self._now = now
        self._entries: deque[dict[str, Any]] = deque(maxlen=maxlen)
        self._seq = 0
        self._lock = threading.Lock()

    def record(
        self,
        endpoint: str,
        method: str,
        outcome: Outcome,
        status: int,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        with self._lock:
            self._seq += 1
            entry = {
                "seq": self._seq,
                "endpoint": endpoint,
                "method": method,
                "idempotency_key": idempotency_key,
                "outcome": outcome,
                "status": status,
                "at": self._now(),
            }
            self._entries.append(entry)
            return dict(entry)

    def since(self, seq: int = 0) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(e) for e in self._entries if e["seq"] > seq]

    @property
    def last_seq(self) -> int:
        with self._lock:
            return self._seq

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
