"""Session lifecycle (spec S1–S3): create, get and renew, append, close, expire, resume, sweep.

Rules kept here, whatever the store:

- A session belongs to one (tenant, user). An unknown id, an expired one and another user's id
  all raise the same :class:`~hermes_desk.errors.NotFoundError`, so ids cannot be probed.
- A session expires after ``idle_ttl_s`` without use (idle time, not age): every ``get`` and
  ``append_turn`` renews it. Expiry happens lazily on access and in :meth:`SessionManager.sweep`,
  which :meth:`SessionManager.run_sweeper` calls in the background.
- Close and expiry retire the session in one atomic store step, so the destroy hooks (hand
  short-term facts to memory, …) run once, with reason ``"closed"`` or ``"expired"``. A failing
  hook is reported as an event and never stops the others. With an archive, the session is
  archived (pending) before it is retired and settled after its hooks ran; a process killed in
  between leaves the row pending, and the next :meth:`SessionManager.sweep` (the sweeper runs one
  as the service starts) runs the hooks then: a close or expiry interrupted by a crash still
  hands the key facts to memory (at least once).
- Appending to a closed session raises :class:`~hermes_desk.errors.ConflictError`.
- No acknowledged turn is lost (spec D1). A write is a compare-and-set on the session's version:
  a session read, changed and saved while someone else saved it raises
  ``ConflictError("the session changed meanwhile; retry")`` (HTTP 409) instead of overwriting
  the other write; read again and redo. Within one process, :meth:`SessionManager.turn_lock`
  runs the turns of one session one at a time, so they never collide there; across processes
  the compare-and-set refuses the loser.
- The same user coming back within the idle window gets the open session back
  (:meth:`SessionManager.open_or_resume`).
- A session opened while the same customer (same tenant, same user) has others open carries
  their short-term key facts (``Session.open_contacts``), read once as it is created or resumed
  through the store's index of open sessions per owner: its notes show them before those
  sessions end, and no turn pays for the look-up.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio

from hermes_desk.clock import Clock, SystemClock
from hermes_desk.config import SessionSettings
from hermes_desk.errors import ConflictError, NotFoundError
from hermes_desk.events import Event, EventSink
from hermes_desk.ids import digest, session_id
from hermes_desk.sessions.archive import SessionArchive
from hermes_desk.sessions.session import Session, Turn
from hermes_desk.sessions.store import SaveResult, SessionStore

__all__ = ["DestroyHook", "DestroyReason", "SessionManager"]

DestroyReason = Literal["closed", "expired"]
DestroyHook = Callable[[Session, DestroyReason], Awaitable[None] | None]

_logger = logging.getLogger("hermes_desk.sessions")
_CREATE_ATTEMPTS = 5
#: Other open sessions read for a new one's notes (the most recently active first).
_OPEN_CONTACTS = 10


class SessionManager:
    """The lifecycle of sessions over any :class:`SessionStore`.

    Args:
        store: where live sessions are kept.
        settings: the ``sessions`` settings section.
        clock: time source (a ``FakeClock`` in tests).
        archive: when given, every closed or expired session is archived, before its hooks run.
        events: sink for ``session.*`` events (user ids appear only as digests).
    """

    def __init__(
        self,
        store: SessionStore,
        settings: SessionSettings | None = None,
        *,
        clock: Clock | None = None,
        archive: SessionArchive | None = None,
        events: EventSink | None = None,
    ) -> None:
        self.store = store
        self.settings = settings or SessionSettings()
        self.clock = clock or SystemClock()
        self.archive = archive
        self._events = events
        self._hooks: list[DestroyHook] = []
        # One turn at a time per session in this process: (lock, holders + waiters).
        self._turn_locks: dict[str, tuple[anyio.Lock, int]] = {}
        # Sessions whose close or expiry is under way here (the sweeper leaves them alone).
        self._ending: set[str] = set()
        self._key = self.settings.user_hash_key.encode() or None

    # -- hooks -----------------------------------------------------------------------------------

    def on_destroy(self, callback: DestroyHook) -> DestroyHook:
        """Register ``callback(session, reason)`` (sync or async) for close and expiry.

        Hooks run in registration order, after the session is archived. Usable as a decorator.
        """
        self._hooks.append(callback)
        return callback

    # -- lifecycle -------------------------------------------------------------------------------

    @asynccontextmanager
    async def turn_lock(self, session_id: str) -> AsyncIterator[None]:
        """Hold the session's turn lock: turns of one session run one at a time in this process
        (a turn reads what the previous one wrote, and its index ``len(session.turns)`` is its
        own). Waiters go first come, first served; a lock is dropped as soon as nobody holds or
        waits for it, so the table stays as small as the number of turns in flight.

        Usage: ``async with manager.turn_lock(session_id): ...``
        """
        entry = self._turn_locks.get(session_id)
        # fast_acquire: a lock nobody holds is taken without a trip through the event loop
        lock, users = entry if entry is not None else (anyio.Lock(fast_acquire=True), 0)
        self._turn_locks[session_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._turn_locks[session_id]
            if users <= 1:
                del self._turn_locks[session_id]
            else:
                self._turn_locks[session_id] = (lock, users - 1)

    async def create(self, tenant: str, user: str) -> Session:
        """A new open session for (tenant, user), with an unguessable unique id, carrying the
        short-term key facts of the customer's other open sessions (``open_contacts``)."""
        now = self.clock.now()
        carried = await self.open_contact_facts(tenant, user)
        for _ in range(_CREATE_ATTEMPTS):
            session = Session(
                id=session_id(user, self._key),
                tenant=tenant,
                user=user,
                created_at=now,
                last_active=now,
                open_contacts=list(carried),
            )
            if await self.store.save(session, create=True) is SaveResult.WRITTEN:
                self._emit("session.created", session)
                return session
        raise ConflictError("could not allocate a session id")  # 128 random bits: never

    async def get(
        self, tenant: str, user: str, session_id: str, *, saving: bool = False
    ) -> Session:
        """The session, renewed; its tombstone (``status == "closed"``) if it was just closed.

        ``saving``: the caller saves the session before long (a turn), and the save renews it;
        it is renewed here only once half its idle time has passed, so that it cannot expire
        while the caller works — one write fewer per turn.

        Raises:
            NotFoundError: unknown, expired or another user's id.
        """
        session = await self._load_owned(tenant, user, session_id)
        if session.is_open:
            now = self.clock.now()
            if saving and now - session.last_active < self.settings.idle_ttl_s / 2:
                return session
            session.last_active = now
            if not await self.store.touch(session):
                return await self._reload_after_race(tenant, user, session_id)
        return session

    async def append_turn(self, tenant: str, user: str, session_id: str, turn: Turn) -> Session:
        """Append ``turn`` (stamped with the current time if it has none) and renew the session.

        Raises:
            NotFoundError: unknown, expired or another user's id.
            ConflictError: the session is closed, or it was written between this call's read and
                its write (retry).
        """
        session = await self._load_owned(tenant, user, session_id)
        if not session.is_open:
            raise ConflictError("the session is closed", session_id=session_id)
        now = self.clock.now()
        if not turn.ts:
            turn.ts = now
        session.turns.append(turn)
        session.last_active = now
        await self._write(session)
        return session

    async def save(self, session: Session) -> None:
        """Persist changes made to a session (turns, slots, short-term facts, summary) and renew
        it. ``session`` must come from :meth:`get` (or a previous save): the write succeeds only
        if nobody wrote the session since, and then raises ``session.version`` by one.

        Raises:
            NotFoundError: it expired or is gone.
            ConflictError: it was closed meanwhile, or written meanwhile (stale: get it again,
                redo the change, save again).
        """
        session.last_active = self.clock.now()
        await self._write(session)

    async def close(self, tenant: str, user: str, session_id: str) -> Session:
        """Close the session: archive it and run the destroy hooks (reason ``"closed"``).

        Raises:
            NotFoundError: unknown, expired or another user's id, or closed already.
        """
        session = await self._load_owned(tenant, user, session_id)
        if not session.is_open or not await self._destroy(session, "closed"):
            raise NotFoundError("session not found", session_id=session_id)
        return session

    async def open_or_resume(self, tenant: str, user: str) -> tuple[Session, bool]:
        """The user's open session if one is still within the idle window, else a new one.

        Returns:
            ``(session, resumed)``.
        """
        existing = await self.store.find_open(tenant, user)
        if existing is not None:
            try:
                session = await self.get(tenant, user, existing)
            except NotFoundError:
                pass
            else:
                if session.is_open:
                    await self._refresh_open_contacts(session)
                    self._emit("session.resumed", session)
                    return session, True
        return await self.create(tenant, user), False

    async def open_sessions(
        self, tenant: str, user: str, *, exclude: str | None = None
    ) -> list[Session]:
        """The customer's open sessions within their idle time, most recently active first
        (at most 10), without ``exclude``. Reads; expires nothing."""
        found = await self.store.list_open(tenant, user, _OPEN_CONTACTS + 1)
        return [
            s
            for s in found
            if s.id != exclude and s.is_open and s.owned_by(tenant, user) and not self._expired(s)
        ][:_OPEN_CONTACTS]

    async def open_contact_facts(
        self, tenant: str, user: str, *, exclude: str | None = None
    ) -> list[dict[str, Any]]:
        """The short-term key facts of the customer's open sessions (but ``exclude``), each with
        the ``session_id`` it was said in, that session's ``last_active`` as ``at`` and its
        ``language``, without the utterance itself; the most recently active session first."""
        return [
            {
                **{k: v for k, v in fact.items() if k != "text"},  # not the words said there
                "session_id": other.id,
                "at": other.last_active,
                "language": other.language,
            }
            for other in await self.open_sessions(tenant, user, exclude=exclude)
            for fact in other.short_term
            if isinstance(fact, dict) and fact.get("key")
        ]

    async def sweep(self, *, batch: int = 1000) -> int:
        """Finish closes and expiries a crash interrupted (their hooks run now), then expire
        every session idle for longer than the TTL. Returns how many expired."""
        await self._finish_interrupted(batch)
        expired = 0
        while True:
            cutoff = self.clock.now() - self.settings.idle_ttl_s
            ids = await self.store.idle_before(cutoff, batch)
            progressed = 0
            for sid in ids:
                session = await self.store.load(sid)
                if session is None or not session.is_open or not self._expired(session):
                    continue
                progressed += 1
                if await self._destroy(session, "expired"):
                    expired += 1
            if len(ids) < batch or progressed == 0:
                return expired

    async def run_sweeper(self, interval_s: float | None = None) -> None:
        """Sweep forever every ``interval_s`` (default from settings); cancel to stop."""
        interval = interval_s or self.settings.sweep_interval_s
        while True:
            try:
                await self.sweep()
            except Exception:  # a store outage must not kill the sweeper; retry next round
                _logger.exception("session sweep failed")
            await anyio.sleep(interval)

    async def aclose(self) -> None:
        """Release the store's connections and threads."""
        await self.store.aclose()

    # -- internals -------------------------------------------------------------------------------

    async def _refresh_open_contacts(self, session: Session) -> None:
        """A resumed session reads its customer's other open sessions again; kept when it can be
        written now (a turn writing meanwhile keeps the last copy, which is shown this once)."""
        carried = await self.open_contact_facts(session.tenant, session.user, exclude=session.id)
        if carried == session.open_contacts:
            return
        session.open_contacts = carried
        if await self.store.save(session) is not SaveResult.WRITTEN:
            _logger.info("session %s changed while resuming: open contacts not kept", session.id)

    def _expired(self, session: Session) -> bool:
        return self.clock.now() >= session.idle_deadline(self.settings.idle_ttl_s)

    async def _load_owned(self, tenant: str, user: str, sid: str) -> Session:
        session = await self.store.load(sid)
        if session is None or not session.owned_by(tenant, user):
            raise NotFoundError("session not found", session_id=sid)
        if session.is_open and self._expired(session):
            await self._destroy(session, "expired")
            raise NotFoundError("session not found", session_id=sid)
        return session

    async def _reload_after_race(self, tenant: str, user: str, sid: str) -> Session:
        # Closed or expired between load and touch: answer with what is there now.
        session = await self.store.load(sid)
        if session is None or not session.owned_by(tenant, user) or session.is_open:
            raise NotFoundError("session not found", session_id=sid)
        return session

    async def _write(self, session: Session) -> None:
        result = await self.store.save(session)
        if result is SaveResult.WRITTEN:
            return
        if result is SaveResult.STALE:
            raise ConflictError("the session changed meanwhile; retry", session_id=session.id)
        current = await self.store.load(session.id)
        if current is not None and not current.is_open:
            raise ConflictError("the session is closed", session_id=session.id)
        raise NotFoundError("session not found", session_id=session.id)

    async def _destroy(self, session: Session, reason: DestroyReason) -> bool:
        """Retire the session; the one caller that wins runs the hooks. Returns if it won."""
        now = self.clock.now()
        session.status = "closed"
        session.closed_at = now
        # Expired sessions leave no tombstone: to their owner they are simply gone.
        tombstone_s = self.settings.idle_ttl_s if reason == "closed" else 0.0
        if session.id in self._ending:
            return False  # ending here already: that caller wins or loses the race
        self._ending.add(session.id)
        try:
            archived = False
            if self.archive is not None:
                try:  # before retiring: what the hooks need survives a crash in between
                    archived = await self.archive.archive(
                        session, reason, ended_at=now, pending=True
                    )
                except Exception as exc:
                    # No end without its archive: the session stays open (the close answers
                    # the error, 503 for an outage; the sweeper tries an expiry again).
                    _logger.exception("session archive failed")
                    self._emit("session.hook_failed", session, hook="archive", error=repr(exc))
                    session.status, session.closed_at = "open", None
                    raise
            if not await self.store.retire(session, tombstone_s=tombstone_s):
                if archived and self.archive is not None:
                    await self.archive.discard(session.id)  # another process ended it
                return False
            self._emit(f"session.{reason}", session, turns=len(session.turns))
            await self._run_hooks(session, reason)
        finally:
            self._ending.discard(session.id)
        return True

    async def _finish_interrupted(self, batch: int) -> None:
        """Run the hooks of sessions retired by a process that died before running them."""
        if self.archive is None:
            return
        for session, reason in await self.archive.unsettled(batch):
            if session.id in self._ending:
                continue
            live = await self.store.load(session.id)
            if live is not None and live.is_open:
                continue  # the crash came before the retire: it is still open
            _logger.info("finishing the interrupted end of session %s", session.id)
            await self._run_hooks(session, "expired" if reason == "expired" else "closed")

    async def _run_hooks(self, session: Session, reason: DestroyReason) -> None:
        for hook in list(self._hooks):
            try:
                outcome = hook(session, reason)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as exc:
                _logger.exception("session destroy hook failed")
                self._emit("session.hook_failed", session, hook=_name(hook), error=repr(exc))
        if self.archive is not None:
            try:
                await self.archive.settle(session.id)
            except Exception:  # the row stays pending: the next start runs the hooks again
                _logger.exception("session archive settle failed")

    def _emit(self, name: str, session: Session, **data: object) -> None:
        if self._events is None:
            return
        payload = {"tenant": session.tenant, "user": digest(session.user), **data}
        self._events.emit(Event(name, session.id, self.clock.now(), payload))


def _name(hook: object) -> str:
    return str(getattr(hook, "__qualname__", None) or type(hook).__name__)
