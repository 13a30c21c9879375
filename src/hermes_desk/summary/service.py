"""After-contact and transfer summaries with a proposed disposition (spec R2).

- On request (``GET …/summary``) for a live session: written now from what happened so far; a
  ``transfer`` summary hands the conversation to another agent.
- When a session ends (closed or expired, a session-manager destroy hook): the after-contact
  summary is written and stored with the archive, unless the agent confirmed one already.
- The agent edits the text and confirms it with a disposition from the pack's list
  (``PUT …/summary``); the confirmed summary replaces the archive's.

The offline summary is always written first; with a model chain the model rewrites it and the
offline one is the fallback (:class:`~hermes_desk.summary.writer.SummaryWriter`).
"""

from __future__ import annotations

from hermes_desk.actions import ActionService
from hermes_desk.clock import Clock, SystemClock
from hermes_desk.errors import NotFoundError, ValidationError
from hermes_desk.masking import Masking
from hermes_desk.packs import Pack, PackLabels
from hermes_desk.sessions import DestroyReason, Session, SessionArchive, SessionManager
from hermes_desk.summary.facts import SummaryKind, gather, offline_summary, outcome_of
from hermes_desk.summary.store import SqliteSummaryStore, Summary
from hermes_desk.summary.writer import SummaryWriter
from hermes_desk.workflows import WorkflowService

__all__ = ["MAX_SUMMARY_CHARS", "SummaryService"]

MAX_SUMMARY_CHARS = 4_000


class SummaryService:
    """Writes, keeps and confirms summaries. Built by the runtime."""

    def __init__(
        self,
        *,
        pack: Pack,
        sessions: SessionManager,
        archive: SessionArchive,
        store: SqliteSummaryStore,
        actions: ActionService | None = None,
        workflows: WorkflowService | None = None,
        writer: SummaryWriter | None = None,
        masking: Masking | None = None,
        clock: Clock | None = None,
        labels: PackLabels | None = None,
    ) -> None:
        self.pack = pack
        self.labels = labels
        self.sessions = sessions
        self.archive = archive
        self.store = store
        self.actions = actions
        self.workflows = workflows
        self.writer = writer or SummaryWriter(None)
        self.masking = masking or Masking()
        self.clock = clock or SystemClock()

    async def summarize(self, session: Session, kind: SummaryKind = "after_contact") -> Summary:
        """Write the summary of ``session`` now (not stored)."""
        proposals = (
            await self.actions.for_session(session.id, tenant=session.tenant, user=session.user)
            if self.actions is not None
            else []
        )
        workflows = (
            await self.workflows.for_session(session.id) if self.workflows is not None else []
        )
        facts = gather(
            session, self.pack, proposals=proposals, workflows=workflows, labels=self.labels
        )
        mask = self.masking.for_tenant(session.tenant)
        dispositions = self.pack.dispositions
        proposed = dispositions.for_outcome(outcome_of(facts, kind))
        labels = {d.id: d.label_in(facts.language) for d in dispositions.dispositions}
        draft = offline_summary(facts, kind, disposition=labels[proposed])
        text, source = await self.writer.write(
            facts, kind, draft=mask.text(draft), disposition=labels[proposed], request_id=session.id
        )
        return Summary(
            session_id=session.id,
            kind=kind,
            tenant=session.tenant,
            user=session.user,
            language=facts.language,
            text=mask.text(text),
            source=source,
            proposed=proposed,
            disposition=proposed,
            choices=labels,
            facts=mask.data(facts.to_dict()),
            written_at=self.clock.now(),
        )

    async def get(
        self, tenant: str, user: str, session_id: str, kind: SummaryKind = "after_contact"
    ) -> Summary:
        """The session's summary: a confirmed or stored one, else written now (and kept).

        Raises:
            NotFoundError: unknown session or another customer's.
        """
        stored = await self.store.get(tenant, user, session_id, kind)
        if stored is not None and (
            stored.confirmed or not await self._live(tenant, user, session_id)
        ):
            return stored
        session = await self._session(tenant, user, session_id)
        summary = await self.summarize(session, kind)
        return await self.store.put(summary, keep_confirmed=True)

    async def confirm(
        self,
        tenant: str,
        user: str,
        session_id: str,
        *,
        agent_id: str,
        text: str,
        disposition: str,
        kind: SummaryKind = "after_contact",
    ) -> Summary:
        """The agent's summary (edited or as proposed) and disposition, kept as confirmed.

        Raises:
            NotFoundError: unknown session or another customer's.
            ValidationError: empty or oversized text, or a disposition not in the pack's list
                (nothing is changed).
        """
        said = text.strip()
        if not said:
            raise ValidationError("the summary text is empty", field="text")
        if len(said) > MAX_SUMMARY_CHARS:
            raise ValidationError(
                f"the summary is longer than {MAX_SUMMARY_CHARS} characters", field="text"
            )
        choices = self.pack.dispositions.ids
        if disposition not in choices:
            raise ValidationError(
                f"unknown disposition {disposition!r}; expected one of {choices}",
                field="disposition",
            )
        current = await self.get(tenant, user, session_id, kind)
        mask = self.masking.for_tenant(tenant)
        confirmed = current.confirm(
            agent_id=agent_id, text=mask.text(said), disposition=disposition, at=self.clock.now()
        )
        stored = await self.store.put(confirmed)
        if kind == "after_contact":
            await self.archive.set_summary(session_id, stored.text)
        return stored

    async def session_ended(self, session: Session, reason: DestroyReason) -> None:
        """Destroy hook: write and keep the after-contact summary with the archive."""
        existing = await self.store.get(session.tenant, session.user, session.id, "after_contact")
        if existing is not None and existing.confirmed:
            await self.archive.set_summary(session.id, existing.text)
            return
        summary = await self.store.put(await self.summarize(session), keep_confirmed=True)
        await self.archive.set_summary(session.id, summary.text)

    async def _live(self, tenant: str, user: str, session_id: str) -> bool:
        session = await self.sessions.store.load(session_id)
        return session is not None and session.is_open and session.owned_by(tenant, user)

    async def _session(self, tenant: str, user: str, session_id: str) -> Session:
        live = await self.sessions.store.load(session_id)
        if live is not None and live.is_open and live.owned_by(tenant, user):
            return await self.sessions.get(tenant, user, session_id)
        ended = await self.archive.session(tenant, user, session_id)
        if ended is None:
            raise NotFoundError("session not found", session_id=session_id)
        return ended
