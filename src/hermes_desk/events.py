"""Structured events: every step is observable, and nothing personal leaks.

Each event carries the request id, which is the session id (or the workflow id for work that
runs outside a turn). Values of sensitive fields (phones, codes, passwords…) are masked before
an event is built, so no sink can ever see them raw.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

__all__ = [
    "Event",
    "EventSink",
    "FanoutSink",
    "LoggingSink",
    "MemorySink",
    "TurnCollector",
    "mask_fields",
    "mask_value",
]

_SENSITIVE = re.compile(r"phone|mobile|code|captcha|password|passwd|secret|token|otp|id_card", re.I)
# Secrets: not even their last characters are shown (a code's tail is most of the code).
_SECRET = re.compile(r"code|captcha|password|passwd|secret|token|otp", re.I)
_logger = logging.getLogger("hermes_desk.events")
# What orjson cannot write (an integer past 64 bits) is written by the standard
# library; one encoder for every such line: ``json.dumps`` with options builds one per call.
_LINE = json.JSONEncoder(ensure_ascii=False, default=str)
_LINE_OPTIONS = orjson.OPT_NON_STR_KEYS


def _event_line(data: dict[str, Any]) -> str:
    """An event as its log line: compact JSON, non-ASCII text as it is (orjson, in C: a turn
    logs three or four events)."""
    try:
        return orjson.dumps(data, default=str, option=_LINE_OPTIONS).decode()
    except orjson.JSONEncodeError:
        return _LINE.encode(data)


def mask_value(value: Any) -> Any:
    """Keep a hint of the shape (length, last two characters) and nothing else."""
    if value is None:
        return None
    text = str(value)
    if len(text) <= 2:
        return "*" * len(text)
    return "*" * (len(text) - 2) + text[-2:]


def mask_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """Mask the values of keys that look sensitive, recursively."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            out[key] = mask_fields(value)
        elif _sensitive_key(key) and not _a_tail(key, value):
            out[key] = mask_value(value)
        else:
            out[key] = value
    return out


def _a_tail(key: str, value: Any) -> bool:
    """A personal number's last four characters at most, under ``…_tail`` (``phone_tail``):
    what the replies show of it anyway ("the phone ending 5678"), so not masked again. A
    secret's tail (``code_tail``) is masked like the secret."""
    return (
        key.endswith("_tail")
        and isinstance(value, str)
        and len(value) <= 4
        and _SECRET.search(key) is None
    )


@functools.lru_cache(maxsize=4096)
def _sensitive_key(key: str) -> bool:
    # The same few keys every turn (a workflow's inputs and step outputs): decided once.
    return _SENSITIVE.search(key) is not None


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened. ``name`` is dotted: ``tool.call``, ``session.closed``…"""

    name: str
    request_id: str
    at: float
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.name, "request_id": self.request_id, "at": self.at, **self.data}


class EventSink(Protocol):
    def emit(self, event: Event) -> None: ...


class MemorySink:
    """Keeps the last ``maxlen`` events; the default sink and the test double."""

    def __init__(self, maxlen: int = 10_000) -> None:
        self._events: deque[Event] = deque(maxlen=maxlen)
        self._lock = threading.Lock()

    def emit(self, event: Event) -> None:
        with self._lock:
            self._events.append(event)

    def events(self, request_id: str | None = None, name: str | None = None) -> list[Event]:
        with self._lock:
            snapshot = list(self._events)
        return [
            e
            for e in snapshot
            if (request_id is None or e.request_id == request_id)
            and (name is None or e.name == name)
        ]

    def clear(self) -> None:
        with self._lock:
            self._events.clear()


class LoggingSink:
    """One JSON line per event on the ``hermes_desk.events`` logger."""

    def emit(self, event: Event) -> None:
        if _logger.isEnabledFor(logging.INFO):
            _logger.info(_event_line(event.to_dict()))


class FanoutSink:
    def __init__(self, sinks: Iterable[EventSink]) -> None:
        self._sinks = list(sinks)

    def emit(self, event: Event) -> None:
        for sink in self._sinks:
            sink.emit(event)


_TURN_EVENTS: ContextVar[list[Event] | None] = ContextVar("hermes_turn_events", default=None)


class TurnCollector:
    """A sink that hands each event to the turn running in the emitting task, if any.

    A turn opens :meth:`collect`; every event emitted in its task (and in tasks it starts,
    which inherit the context) lands in the turn's own list — no global buffer to read back."""

    def emit(self, event: Event) -> None:
        bucket = _TURN_EVENTS.get()
        if bucket is not None:
            bucket.append(event)

    @staticmethod
    @contextmanager
    def collect() -> Iterator[list[Event]]:
        bucket: list[Event] = []
        token = _TURN_EVENTS.set(bucket)
        try:
            yield bucket
        finally:
            _TURN_EVENTS.reset(token)
