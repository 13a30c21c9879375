"""What each memory operation does to the mid-term tier, as pure decisions.

A store loads the rows an operation needs inside one transaction, asks a :class:`Planner` what to
do, and applies the returned operations before committing. The rules (reinforce, supersede or
conflict; verify; archive on decay; review) live here once, so every backend behaves the same and
every change is atomic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermes_desk.ids import new_id
from hermes_desk.memory.decay import DecayPolicy
from hermes_desk.memory.fact import (
    CandidateFact,
    Fact,
    FactHistory,
    FactOrigin,
    FactStatus,
    LongTermTag,
    TagStatus,
    canonical_json,
)

__all__ = ["AddTag", "Delete", "Op", "Outcome", "Planner", "Save"]


@dataclass(frozen=True, slots=True)
class Save:
    """Insert or replace the row with this fact's id (an upsert)."""

    fact: Fact


@dataclass(frozen=True, slots=True)
class Delete:
    fact_id: str


@dataclass(frozen=True, slots=True)
class AddTag:
    """Add a long-term tag candidate unless the tag already exists."""

    tag: LongTermTag


Op = Save | Delete | AddTag


@dataclass(frozen=True, slots=True)
class Outcome:
    """The decision: ``kind`` names it (stored, reinforced, superseded, conflict, pending,
    verified, approved, edited, rejected, archived, deleted), ``fact`` is the resulting row."""

    kind: str
    fact: Fact | None
    ops: tuple[Op, ...] = ()
    previous: Fact | None = None
    archived: tuple[Fact, ...] = ()


class Planner:
    """Pure decisions; time and ids come in as arguments or injected callables."""

    def __init__(
        self,
        policy: DecayPolicy,
        *,
        is_long_term: Callable[[str], bool] = lambda _key: False,
        make_id: Callable[[], str] = lambda: new_id("fact"),
    ) -> None:
        self.policy = policy
        self._is_long_term = is_long_term
        self._make_id = make_id

    def valid_until(
        self, confidence: float, last_confirmed_at: float, valid_hours: float | None
    ) -> float:
        until = self.policy.threshold_time(confidence, last_confirmed_at)
        if valid_hours is not None:
            until = min(until, last_confirmed_at + valid_hours * 3600.0)
        return until

    def current_confidence(self, fact: Fact, now: float) -> float:
        return self.policy.decayed(fact.confidence, fact.last_confirmed_at, now)

    def is_expired(self, fact: Fact, now: float) -> bool:
        return now >= fact.valid_until or (
            self.current_confidence(fact, now) < self.policy.archive_below
        )

    def new_fact(
        self,
        tenant: str,
        user_id: str,
        candidate: CandidateFact,
        *,
        now: float,
        status: FactStatus,
        origin: FactOrigin,
        source_session: str | None,
        conflicts_with: str | None = None,
    ) -> Fact:
        return Fact(
            id=self._make_id(),
            tenant=tenant,
            user_id=user_id,
            key=candidate.key,
            value=candidate.value,
            confidence=candidate.confidence,
            status=status,
            origin=origin,
            valid_until=self.valid_until(candidate.confidence, now, candidate.valid_hours),
            created_at=now,
            updated_at=now,
            last_confirmed_at=now,
            source_session=source_session,
            conflicts_with=conflicts_with,
        )

    # -- writes -----------------------------------------------------------------------------

    def remember(
        self,
        tenant: str,
        user_id: str,
        candidate: CandidateFact,
        current: Fact | None,
        *,
        now: float,
        source_session: str | None,
        origin: FactOrigin = FactOrigin.RULE,
    ) -> Outcome:
        """A fact said (rule or person): store, reinforce, supersede, or keep as a conflict."""
        ops: list[Op] = []
        archived: tuple[Fact, ...] = ()
        if current is not None and self.is_expired(current, now):
            gone = self.archive(current, now)
            ops.extend(gone.ops)
            archived = gone.archived
            current = None
        if current is None:
            fact = self.new_fact(
                tenant, user_id, candidate, now=now, status=FactStatus.ACTIVE, origin=origin,
                source_session=source_session,
            )  # fmt: skip
            return Outcome("stored", fact, (*ops, Save(fact)), archived=archived)
        if canonical_json(current.value) == canonical_json(candidate.value):
            confidence = max(candidate.confidence, current.confidence)
            fact = current.evolve(
                confidence=confidence,
                last_confirmed_at=now,
                updated_at=now,
                confirmations=current.confirmations + 1,
                valid_until=self.valid_until(confidence, now, candidate.valid_hours),
                source_session=source_session or current.source_session,
            )
            return Outcome("reinforced", fact, (Save(fact),), previous=current)
        if candidate.confidence >= self.current_confidence(current, now):
            entry = FactHistory(
                current.value, current.confidence, now, "superseded", current.source_session
            )
            fact = current.evolve(
                value=candidate.value,
                confidence=candidate.confidence,
                origin=origin,
                last_confirmed_at=now,
                updated_at=now,
                confirmations=1,
                valid_until=self.valid_until(candidate.confidence, now, candidate.valid_hours),
                source_session=source_session,
                history=(*current.history, entry),
            )
            return Outcome("superseded", fact, (Save(fact),), previous=current)
        fact = self.new_fact(
            tenant, user_id, candidate, now=now, status=FactStatus.CONFLICT, origin=origin,
            source_session=source_session, conflicts_with=current.id,
        )  # fmt: skip
        return Outcome("conflict", fact, (Save(fact),), previous=current)

    def propose(
        self, tenant: str, user_id: str, candidate: CandidateFact, *, now: float,
        source_session: str | None,
    ) -> Outcome:  # fmt: skip
        """A model's fact: pending until a verifier or a person signs it."""
        fact = self.new_fact(
            tenant, user_id, candidate, now=now, status=FactStatus.PENDING,
            origin=FactOrigin.MODEL, source_session=source_session,
        )  # fmt: skip
        return Outcome("pending", fact, (Save(fact),))

    def accept(self, fact: Fact, current: Fact | None, *, now: float, kind: str) -> Outcome:
        """Make ``fact`` the active value of its key (verified, approved or edited).

        The displaced active row is folded into the winner's history and removed, so one row per
        key carries the whole story.
        """
        valid_until = self.valid_until(fact.confidence, now, None)
        if fact.status is FactStatus.ACTIVE or current is None or current.id == fact.id:
            done = fact.evolve(
                status=FactStatus.ACTIVE, conflicts_with=None, last_confirmed_at=now,
                updated_at=now, valid_until=valid_until,
            )  # fmt: skip
            return Outcome(kind, done, (Save(done),))
        same = canonical_json(current.value) == canonical_json(fact.value)
        history = current.history
        if not same:
            history = (
                *history,
                FactHistory(current.value, current.confidence, now, "superseded",
                            current.source_session),
            )  # fmt: skip
        done = fact.evolve(
            status=FactStatus.ACTIVE,
            conflicts_with=None,
            created_at=current.created_at if same else fact.created_at,
            confirmations=current.confirmations + 1 if same else fact.confirmations,
            last_confirmed_at=now,
            updated_at=now,
            valid_until=valid_until,
            history=(*history, *fact.history),
        )
        return Outcome(kind, done, (Delete(current.id), Save(done)), previous=current)

    def edit(self, fact: Fact, value: Any, current: Fact | None, *, now: float) -> Outcome:
        """A person sets the value: it is trusted (confidence 1) and becomes active."""
        entry = FactHistory(fact.value, fact.confidence, now, "edited", fact.source_session)
        edited = fact.evolve(
            value=value, confidence=1.0, origin=FactOrigin.AGENT, history=(*fact.history, entry)
        )
        return self.accept(edited, current, now=now, kind="edited")

    def reject(self, fact: Fact, *, now: float, kind: str = "rejected") -> Outcome:
        entry = FactHistory(fact.value, fact.confidence, now, "rejected", fact.source_session)
        done = fact.evolve(
            status=FactStatus.REJECTED, updated_at=now, history=(*fact.history, entry)
        )
        return Outcome(kind, done, (Save(done),))

    def archive(self, fact: Fact, now: float) -> Outcome:
        """Move a decayed fact out of mid-term: kept as archived, and a long-term tag candidate
        when its key is a preference. Never deletes."""
        confidence = self.current_confidence(fact, now)
        entry = FactHistory(fact.value, confidence, now, "archived", fact.source_session)
        done = fact.evolve(
            status=FactStatus.ARCHIVED, updated_at=now, history=(*fact.history, entry)
        )
        ops: list[Op] = [Save(done)]
        if self._is_long_term(fact.key):
            tag = LongTermTag(
                tenant=fact.tenant,
                user_id=fact.user_id,
                tag=fact.key,
                value=fact.value,
                status=TagStatus.CANDIDATE,
                source_fact_id=fact.id,
                created_at=now,
            )
            ops.append(AddTag(tag))
        return Outcome("archived", done, tuple(ops), previous=fact, archived=(done,))

    def sweep_one(self, fact: Fact, now: float) -> Outcome | None:
        if fact.status is not FactStatus.ACTIVE or not self.is_expired(fact, now):
            return None
        return self.archive(fact, now)

    def delete(self, fact: Fact) -> Outcome:
        return Outcome("deleted", fact, (Delete(fact.id),))
