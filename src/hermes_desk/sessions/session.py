"""A conversation: its owner, its turns, the dialogue state it carries and its short-term facts.

Every stored session carries a ``version``: the number of times it has been written. A store
writes a session only if the version it holds is the one the writer loaded (compare-and-set), so
two turns that read the same session cannot both write it and lose one another's turns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Role", "Session", "SessionStatus", "Turn", "turn_key"]

Role = Literal["user", "agent", "system", "tool"]
SessionStatus = Literal["open", "closed"]

_ROLES = frozenset({"user", "agent", "system", "tool"})


@dataclass(slots=True)
class Turn:
    """One utterance or tool exchange.

    A tool call is an ``agent`` turn with ``tool_call_id`` set; its result is a ``tool`` turn with
    the same ``tool_call_id``. The trimmer keeps or drops the two together.
    """

    role: Role
    text: str
    ts: float = 0.0
    tool_call_id: str | None = None
    name: str | None = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.role not in _ROLES:
            raise ValueError(f"unknown turn role {self.role!r}")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "text": self.text, "ts": self.ts}
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            data["name"] = self.name
        if self.meta:
            data["meta"] = self.meta
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        return cls(
            role=data["role"],
            text=data["text"],
            ts=float(data.get("ts", 0.0)),
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            meta=data.get("meta"),
        )


@dataclass(slots=True)
class Session:
    """The live state of one conversation, owned by one (tenant, user).

    ``slots`` is the dialogue state carried between turns (written by the turn pipeline);
    ``short_term`` holds short-term facts (dicts) that a destroy hook hands to memory.
    ``open_contacts`` holds the short-term facts of the same customer's other open sessions as
    they stood when this one was opened or resumed (:meth:`SessionManager.create`), each with
    the ``session_id`` it was said in, that session's ``last_active`` (``at``) and ``language``:
    shown in this session's notes, never handed to memory from here (their own session does
    that as it ends).

    ``version`` is the stored version this copy was loaded at (0: never written, or written
    before sessions had versions); a successful ``SessionStore.save`` raises it by one. A turn's
    index is its position in ``turns``.
    """

    id: str
    tenant: str
    user: str
    created_at: float
    last_active: float
    status: SessionStatus = "open"
    turns: list[Turn] = field(default_factory=list)
    slots: dict[str, Any] = field(default_factory=dict)
    short_term: list[dict[str, Any]] = field(default_factory=list)
    open_contacts: list[dict[str, Any]] = field(default_factory=list)
    summary: str = ""
    closed_at: float | None = None
    version: int = 0

    @property
    def is_open(self) -> bool:
        return self.status == "open"

    @property
    def language(self) -> str | None:
        """The language of the customer's latest turn that had one (``zh``/``en``), if any."""
        for turn in reversed(self.turns):
            if turn.role == "user" and turn.meta and isinstance(turn.meta.get("language"), str):
                return str(turn.meta["language"])
        return None

    @property
    def customer_language(self) -> str | None:
        """This session's language, else that of the customer's other open contacts (a session
        just opened has no turns yet), else ``None``."""
        own = self.language
        if own is not None:
            return own
        for fact in self.open_contacts:
            if isinstance(fact.get("language"), str):
                return str(fact["language"])
        return None

    def owned_by(self, tenant: str, user: str) -> bool:
        return self.tenant == tenant and self.user == user

    def idle_deadline(self, idle_ttl_s: float) -> float:
        """The time at which this session expires unless it is used again."""
        return self.last_active + idle_ttl_s

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tenant": self.tenant,
            "user": self.user,
            "created_at": self.created_at,
            "last_active": self.last_active,
            "status": self.status,
            "turns": [turn.to_dict() for turn in self.turns],
            "slots": self.slots,
            "short_term": self.short_term,
            "open_contacts": self.open_contacts,
            "summary": self.summary,
            "closed_at": self.closed_at,
            "version": self.version,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Session:
        return cls(
            id=data["id"],
            tenant=data["tenant"],
            user=data["user"],
            created_at=float(data["created_at"]),
            last_active=float(data["last_active"]),
            status=data.get("status", "open"),
            turns=[Turn.from_dict(t) for t in data.get("turns", [])],
            slots=dict(data.get("slots", {})),
            short_term=list(data.get("short_term", [])),
            open_contacts=list(data.get("open_contacts", [])),
            summary=data.get("summary", ""),
            closed_at=data.get("closed_at"),
            version=int(data.get("version", 0)),
        )

    def copy(self) -> Session:
        """A copy whose containers (turns, slots, short-term facts) are its own.

        The :class:`Turn` objects and the values inside the containers are shared: a stored turn
        is a record, replaced rather than changed in place.
        """
        return Session(
            id=self.id,
            tenant=self.tenant,
            user=self.user,
            created_at=self.created_at,
            last_active=self.last_active,
            status=self.status,
            turns=list(self.turns),
            slots=dict(self.slots),
            short_term=list(self.short_term),
            open_contacts=list(self.open_contacts),
            summary=self.summary,
            closed_at=self.closed_at,
            version=self.version,
        )


def turn_key(session_id: str, turn_index: int, *scope: str) -> str:
    """An idempotency key for what one turn does: ``<session id>:<turn index>[:<scope>…]``.

    Turn indices are positions in ``Session.turns``; turns of one session are serialised
    (``SessionManager.turn_lock`` in a process, the store's compare-and-set across processes), so
    no two turns share an index and the key names one turn's action, stable across its retries.
    ``scope`` tells apart the several actions of one turn (a tool name, a step).
    """
    if turn_index < 0:
        raise ValueError(f"a turn index is a position in the transcript, not {turn_index}")
    return ":".join((session_id, str(turn_index), *scope))
