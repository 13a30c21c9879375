"""The short-term tier: candidate facts of one session, kept with the session until it ends.

The session store holds the list (``to_list()`` is plain JSON, so in-process and Redis stores
both keep it, under the session's own TTL); on session end the destroy hook hands it to
:meth:`hermes_desk.memory.service.MemoryService.promote_short_term`, which moves the facts that
qualify into mid-term.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hermes_desk.memory.fact import CandidateFact, canonical_json

__all__ = ["ShortTermMemory", "qualifies"]


def qualifies(candidate: CandidateFact, floor: float) -> bool:
    """Whether a short-term fact is promoted: it passed the key-fact filter and is confident."""
    return candidate.is_key_fact and candidate.confidence >= floor


class ShortTermMemory:
    """An ordered, de-duplicated list of a session's candidate facts (latest value per key)."""

    def __init__(self, items: Iterable[CandidateFact] = ()) -> None:
        self._items: dict[str, CandidateFact] = {}
        for item in items:
            self.add(item)

    def add(self, candidate: CandidateFact) -> None:
        """Keep the latest value per key; the same value said again keeps the higher confidence."""
        old = self._items.pop(candidate.key, None)
        if old is not None and canonical_json(old.value) == canonical_json(candidate.value):
            candidate = CandidateFact(
                key=candidate.key,
                value=candidate.value,
                confidence=max(old.confidence, candidate.confidence),
                signals=tuple(dict.fromkeys((*old.signals, *candidate.signals))),
                is_key_fact=old.is_key_fact or candidate.is_key_fact,
                text=candidate.text,
                valid_hours=candidate.valid_hours,
            )
        self._items[candidate.key] = candidate

    def extend(self, candidates: Iterable[CandidateFact]) -> None:
        for candidate in candidates:
            self.add(candidate)

    def items(self) -> list[CandidateFact]:
        return list(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def to_list(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self._items.values()]

    @classmethod
    def from_list(cls, data: Iterable[Mapping[str, Any]] | None) -> ShortTermMemory:
        return cls(CandidateFact.from_dict(dict(d)) for d in data or [])
