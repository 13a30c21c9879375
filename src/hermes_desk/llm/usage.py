"""Token use and cost per session, summed over every model call the session made."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from hermes_desk.llm.messages import Usage

__all__ = ["SessionUsage", "UsageLedger"]


@dataclass(frozen=True, slots=True)
class SessionUsage:
    """One session's model use: totals, calls, and totals by link."""

    calls: int = 0
    usage: Usage = field(default_factory=Usage)
    by_link: Mapping[str, Usage] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "total_tokens": self.usage.total_tokens,
            "cost_usd": self.usage.cost_usd,
            "by_link": {
                link: {
                    "prompt_tokens": u.prompt_tokens,
                    "completion_tokens": u.completion_tokens,
                    "cost_usd": u.cost_usd,
                }
                for link, u in self.by_link.items()
            },
        }


class UsageLedger:
    """In-process per-session usage; thread-safe. Call :meth:`pop` when a session ends."""

    def __init__(self) -> None:
        self._sessions: dict[str, SessionUsage] = {}
        self._lock = threading.Lock()

    def record(self, session_id: str, link: str, usage: Usage) -> None:
        with self._lock:
            current = self._sessions.get(session_id, SessionUsage())
            by_link = dict(current.by_link)
            by_link[link] = by_link.get(link, Usage()) + usage
            self._sessions[session_id] = SessionUsage(
                calls=current.calls + 1, usage=current.usage + usage, by_link=by_link
            )

    def get(self, session_id: str) -> SessionUsage:
        with self._lock:
            return self._sessions.get(session_id, SessionUsage())

    def pop(self, session_id: str) -> SessionUsage:
        with self._lock:
            return self._sessions.pop(session_id, SessionUsage())

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._sessions)
