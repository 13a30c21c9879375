"""Proposals and the agent's decisions: the only way a write reaches a business system (X2).

:class:`ActionService` proposes writes (from a turn, a workflow step or an MCP client), and
carries out the agent's decision: approve (maybe with edited arguments, checked against the
tool's schema), reject with a reason, or let it expire. The customer may withdraw a request that
still waits ("不退了", "I'll keep it"): nothing runs, and the agent can no longer approve it.
A decision is a compare-and-set on the proposal's status, so approving twice — or from two
workers — executes the write once; the write also carries the proposal id as its idempotency
key, so a retry after a crash is answered from the backend's record.

While a proposal waits, a detail the customer gives afterwards (the return's reason) amends its
arguments; each amendment is a new revision, and an approval naming the revision it saw is
refused once the proposal changed, so an agent never approves what they did not see.

Events: ``action.proposed``, ``action.amended`` (the arguments changed and the revision),
``action.amend_refused`` (the arguments it would have changed, and ``conflict`` or
``validation_error``),
``action.approved``, ``action.rejected``, ``action.expired``, ``action.withdrawn``,
``action.executed`` (with ``ok`` and the result status), each with the agent id when one
decided.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import anyio

from hermes_desk.actions.proposal import Proposal
from hermes_desk.actions.store import ProposalStore
from hermes_desk.clock import Clock
from hermes_desk.config import ActionSettings
from hermes_desk.errors import ConflictError, NotFoundError, ValidationError
from hermes_desk.events import Event, EventSink
from hermes_desk.ids import digest, new_id
from hermes_desk.masking import Masking
from hermes_desk.tools import CallContext, ToolExecutor, ToolSpec
from hermes_desk.workflows import WorkflowService, WorkflowView
from hermes_desk.workflows.service import ApprovalRequest

__all__ = ["ActionService", "needs_approval"]

_logger = logging.getLogger(__name__)

#: Arguments that bind a write to its customer: an agent's edit may not change them.
_BOUND_ARGUMENTS = ("user_id",)


def needs_approval(spec: ToolSpec) -> bool:
    """A write needs an agent's approval unless the pack exempts it (with its reason)."""
    return spec.effect == "write" and not spec.approval_exempt


class ActionService:
    """Propose writes and carry out the agent's decisions."""

    def __init__(
        self,
        *,
        store: ProposalStore,
        tools: ToolExecutor,
        workflows: WorkflowService | None,
        settings: ActionSettings,
        clock: Clock,
        events: EventSink,
        masking: Masking | None = None,
    ) -> None:
        self.store = store
        # Arguments stay clear while the write waits (the tool needs them); a decided
        # proposal keeps them masked, and ``why`` is masked from the start (spec D3).
        self.masking = masking or Masking()
        self.tools = tools
        self.workflows = workflows
        self.settings = settings
        self.clock = clock
        self.events = events

    # -- proposing ---------------------------------------------------------------------------

    async def propose(
        self,
        *,
        tenant: str,
        user: str,
        session_id: str | None,
        tool: str,
        arguments: Mapping[str, Any],
        why: Mapping[str, Any],
        language: str,
        topic: str | None = None,
        workflow_id: str | None = None,
        step: str | None = None,
        proposal_id: str | None = None,
    ) -> Proposal:
        """Record a proposed write. With ``topic``, a pending proposal of the same session and
        topic is updated instead of a second one being made (one ticket per complaint). With
        ``proposal_id``, proposing the same id again answers the first proposal."""
        spec = self._spec(tool)
        now = self.clock.now()
        arguments = self.masking.for_tenant(tenant).prose(arguments)
        if topic is not None and session_id is not None:
            for existing in await self.store.for_session(session_id):
                if existing.topic != topic:
                    continue
                current: Proposal | None = existing
                while current is not None and current.pending:
                    updated = replace(
                        current,
                        arguments=dict(arguments),
                        why=self.masking.for_tenant(tenant).data(dict(why)),
                        explanation=spec.explanation(dict(arguments), language),
                        language=language,
                        expires_at=now + self.settings.proposal_ttl_s,
                        revision=current.revision + 1,
                    )
                    if await self.store.replace(
                        updated, expected="proposed", revision=current.revision
                    ):
                        self._emit("action.proposed", updated, updated=True)
                        return updated
                    # decided meanwhile (a new proposal follows), or updated by another turn:
                    # that one is updated in turn, never a second proposal beside it
                    current = await self.store.get(current.id)
        proposal = Proposal(
            id=proposal_id or new_id("act"),
            tenant=tenant,
            user=user,
            session_id=session_id,
            tool=tool,
            arguments=dict(arguments),
            why=self.masking.for_tenant(tenant).data(dict(why)),
            explanation=spec.explanation(dict(arguments), language),
            language=language,
            created_at=now,
            expires_at=now + self.settings.proposal_ttl_s,
            workflow_id=workflow_id,
            step=step,
            topic=topic,
            sensitive=tuple(spec.sensitive),
        )
        if not await self.store.add(proposal):
            first = await self.store.get(proposal.id)
            assert first is not None  # proposals are never deleted while referenced
            return first
        self._emit("action.proposed", proposal)
        return proposal

    async def propose_for_workflow(
        self, view: WorkflowView | None, *, language: str, why: Mapping[str, Any]
    ) -> Proposal | None:
        """The proposal for the write step ``view``'s workflow waits on: made once per wait (a
        second call finds the first), or ``None`` when it waits for no approval."""
        if view is None or self.workflows is None:
            return None
        request = await self.workflows.awaiting_approval(view.id)
        if request is None:
            return None
        topic = _workflow_topic(request)
        # One proposal per wait, whichever worker or request gets there first; the one made
        # already is kept as it is (an amendment the customer gave stays in it).
        proposal = await self.store.get(f"act_{digest(topic)}") or await self.propose(
            tenant=request.tenant,
            user=request.user,
            session_id=request.session_id,
            tool=request.tool,
            arguments=request.arguments,
            why={**why, "workflow": request.workflow, "step": request.step},
            language=language,
            topic=topic,
            workflow_id=request.workflow_id,
            step=request.step,
            proposal_id=f"act_{digest(topic)}",
        )
        if proposal.status == "executing":
            # Approved, but a crash came before the workflow heard of it: tell it now.
            return await self._execute(proposal)
        return proposal

    # -- reading -----------------------------------------------------------------------------

    async def get(self, proposal_id: str, *, tenant: str, user: str | None) -> Proposal:
        """The proposal, lazily expired.

        Raises:
            NotFoundError: unknown, or another tenant's or customer's.
        """
        proposal = await self.store.get(proposal_id)
        if proposal is None or not proposal.owned_by(tenant, user):
            raise NotFoundError(f"no proposal {proposal_id}")
        if proposal.pending and proposal.expires_at <= self.clock.now():
            return await self._expire(proposal)
        return proposal

    async def for_session(self, session_id: str, *, tenant: str, user: str) -> list[Proposal]:
        return [p for p in await self.store.for_session(session_id) if p.owned_by(tenant, user)]

    async def earlier(self, session_id: str, *, tenant: str, user: str) -> list[Proposal]:
        """The customer's writes that ran in their other contacts within
        ``earlier_contacts_days`` (a ticket opened yesterday), oldest first: a complaint made
        again adds to that ticket, and "any news on my complaint?" is answered with it."""
        since = self.clock.now() - self.settings.earlier_contacts_days * 86400
        ran = await self.store.executed_for(tenant, user, since=since)
        return [p for p in reversed(ran) if p.session_id != session_id and p.owned_by(tenant, user)]

    # -- deciding ----------------------------------------------------------------------------

    async def approve(
        self,
        proposal_id: str,
        *,
        tenant: str,
        user: str | None,
        agent_id: str,
        arguments: Mapping[str, Any] | None = None,
        revision: int | None = None,
    ) -> Proposal:
        """Approve (with ``arguments`` edited by the agent, if given) and execute once.
        ``revision``: the one the agent saw; a proposal amended since is not approved.

        Raises:
            NotFoundError: unknown, or another tenant's or customer's.
            ConflictError: decided already (approved, rejected, expired), or amended since
                ``revision``.
            ValidationError: edited arguments break the tool's schema or change the customer.
        """
        proposal = await self.get(proposal_id, tenant=tenant, user=user)
        _require_pending(proposal)
        if revision is not None and revision != proposal.revision:
            raise ConflictError(
                f"proposal {proposal_id} changed since it was shown (revision {revision}, now "
                f"{proposal.revision}): look at it again before approving",
                status=proposal.status,
                revision=proposal.revision,
            )
        chosen = dict(proposal.arguments) if arguments is None else dict(arguments)
        if arguments is not None:
            self._check_edit(proposal, chosen)
        approved = replace(
            proposal,
            status="executing",
            agent_id=agent_id,
            decided_at=self.clock.now(),
            executed_arguments=chosen,
        )
        # Kept clear until the write ends (masked then): a crash in between leaves what the
        # restart needs to carry it out. Amended meanwhile: not what was approved, not run.
        if not await self.store.replace(approved, expected="proposed", revision=proposal.revision):
            raise ConflictError(
                f"proposal {proposal_id} was decided or changed meanwhile",
                status=await self._status(approved),
            )
        self._emit("action.approved", approved, edited=arguments is not None)
        # The write runs to its end even if the agent's request gives up waiting.
        with anyio.CancelScope(shield=True):
            done = await self._execute(approved)
        return done

    async def reject(
        self,
        proposal_id: str,
        *,
        tenant: str,
        user: str | None,
        agent_id: str,
        reason: str,
    ) -> Proposal:
        """Reject with a reason; nothing runs. A waiting workflow follows its failure path.

        Raises:
            NotFoundError / ConflictError as :meth:`approve`.
        """
        proposal = await self.get(proposal_id, tenant=tenant, user=user)
        _require_pending(proposal)
        rejected = self._settled(
            proposal,
            status="rejected",
            agent_id=agent_id,
            decided_at=self.clock.now(),
            reason=reason,
        )
        if not await self.store.replace(rejected, expected="proposed", revision=proposal.revision):
            raise ConflictError(
                f"proposal {proposal_id} was decided or changed meanwhile",
                status=await self._status(rejected),
            )
        self._emit("action.rejected", rejected, reason=reason)
        await self._tell_workflow(rejected, "rejected")
        return rejected

    async def withdraw(self, proposal_id: str, *, tenant: str, user: str, reason: str) -> Proposal:
        """The customer withdrew the request before an agent decided it: nothing runs. A
        waiting workflow follows its failure path, as on a rejection.

        Raises:
            NotFoundError: unknown, or another tenant's or customer's.
            ConflictError: decided already (an agent approved it first: it is not withdrawn).
        """
        proposal = await self.get(proposal_id, tenant=tenant, user=user)
        _require_pending(proposal)
        withdrawn = self._settled(
            proposal, status="withdrawn", decided_at=self.clock.now(), reason=reason
        )
        if not await self.store.replace(withdrawn, expected="proposed"):
            raise ConflictError(
                f"proposal {proposal_id} was decided meanwhile",
                status=await self._status(withdrawn),
            )
        self._emit("action.withdrawn", withdrawn, reason=reason)
        await self._tell_workflow(withdrawn, "withdrawn")
        return withdrawn

    async def amend(
        self, proposal_id: str, changes: Mapping[str, Any], *, tenant: str, user: str
    ) -> Proposal:
        """Change arguments of a proposal still waiting for the agent: a detail the customer
        gave after the request ("尺码太小了" as the return's reason). The agent approves what it
        says then; an approval naming the revision before is refused.

        Raises:
            NotFoundError: unknown, or another tenant's or customer's.
            ConflictError: decided (or amended) meanwhile.
            ValidationError: the changed arguments break the tool's schema or change the
                customer.
        """
        proposal = await self.get(proposal_id, tenant=tenant, user=user)
        try:
            _require_pending(proposal)
            arguments = self.masking.for_tenant(tenant).prose({**proposal.arguments, **changes})
            self._check_edit(proposal, arguments)
            amended = replace(
                proposal,
                arguments=arguments,
                explanation=self._spec(proposal.tool).explanation(arguments, proposal.language),
                revision=proposal.revision + 1,
            )
            if not await self.store.replace(
                amended, expected="proposed", revision=proposal.revision
            ):
                raise ConflictError(
                    f"proposal {proposal_id} was decided or changed meanwhile",
                    status=await self._status(amended),
                )
        except (ConflictError, ValidationError) as refused:
            # What the customer added did not reach the write: the audit says so (the fields and
            # why, never the values), and the agent decides what the proposal says.
            self._emit(
                "action.amend_refused", proposal, changed=sorted(changes), error=refused.code
            )
            raise
        self._emit("action.amended", amended, changed=sorted(changes), revision=amended.revision)
        return amended

    async def expire_due(self, limit: int = 100) -> int:
        """Expire the pending proposals past their time. Returns how many this call expired."""
        expired = 0
        for proposal in await self.store.due(self.clock.now(), limit):
            if (await self._expire(proposal)).status == "expired":
                expired += 1
        return expired

    async def resume_executing(self, limit: int = 100) -> int:
        """Carry out the approvals a crash or a lost worker left under way. A workflow's is handed
        to it at once (it takes a decision once); a plain write runs again, with its idempotency
        key, once its approval is ``resume_after_s`` old, so a write still running on another
        worker is never raced. Returns how many this call carried out."""
        cutoff = self.clock.now() - self.settings.resume_after_s
        resumed = 0
        for proposal in await self.store.executing(limit):
            if proposal.workflow_id is None and (proposal.decided_at or 0.0) > cutoff:
                continue
            with anyio.CancelScope(shield=True):
                done = await self._execute(proposal)
            _logger.info("approved write %s resumed: %s", done.id, done.status)
            resumed += 1
        return resumed

    async def run_expiry(self) -> None:
        """Background job, every ``expiry_interval_s``: expire what is due and carry out the
        approvals left under way."""
        while True:
            await anyio.sleep(self.settings.expiry_interval_s)
            try:
                await self.expire_due()
                await self.resume_executing()
            except Exception:  # a store outage must not end the job; the next round retries
                _logger.exception("proposal expiry failed")

    # -- inside ------------------------------------------------------------------------------

    async def _expire(self, proposal: Proposal) -> Proposal:
        expired = self._settled(proposal, status="expired", decided_at=self.clock.now())
        if not await self.store.replace(expired, expected="proposed"):
            current = await self.store.get(proposal.id)
            return current or proposal
        self._emit("action.expired", expired)
        await self._tell_workflow(expired, "expired")
        return expired

    async def _execute(self, approved: Proposal) -> Proposal:
        """Carry out an ``executing`` proposal to its end: hand it to its workflow, or run the
        write with the proposal id as idempotency key. Doing it twice (a resume after a crash)
        changes nothing more: the workflow takes a decision once, the backend a key once."""
        arguments = dict(approved.executed_arguments or approved.arguments)
        if approved.workflow_id is not None and approved.step is not None:
            view = await self._tell_workflow(approved, "approved", arguments=arguments)
            record = (
                next((s for s in view.steps if s.name == approved.step), None) if view else None
            )
            if record is None or record.status in ("pending", "running", "waiting_input"):
                # Handed over: the workflow's own record tells the end.
                done = self._settled(approved, status="approved")
            else:
                done = self._settled(
                    approved,
                    status="executed" if record.status == "succeeded" else "failed",
                    executed_at=self.clock.now(),
                    result_status=record.status,
                    result=record.output or {"error": record.error},
                )
            settled = await self._settle_execution(done)
            # The workflow may move on to its next write: that one is proposed in turn.
            why = {k: v for k, v in approved.why.items() if k not in ("workflow", "step")}
            await self.propose_for_workflow(view, language=approved.language, why=why)
            return settled
        outcome = await self.tools.execute(
            {"name": approved.tool, "arguments": arguments},
            request_id=approved.session_id or approved.id,
            allowed_tools=None,  # the agent approved this very call
            context=CallContext(
                request_id=approved.session_id or approved.id,
                idempotency_key=approved.id,
                customer=approved.user,
                tenant=approved.tenant,
            ),
        )
        return await self._settle_execution(
            self._settled(
                approved,
                status="executed" if outcome.ok else "failed",
                executed_at=self.clock.now(),
                result_status=outcome.status.value,
                result=outcome.result if outcome.answered else None,
            )
        )

    async def _settle_execution(self, done: Proposal) -> Proposal:
        if not await self.store.replace(done, expected="executing"):
            return await self.store.get(done.id) or done  # carried out meanwhile (a resume)
        if done.status != "approved":
            self._emit(
                "action.executed", done, ok=done.status == "executed",
                result_status=done.result_status,
            )  # fmt: skip
        return done

    async def _tell_workflow(
        self, proposal: Proposal, decision: str, *, arguments: Mapping[str, Any] | None = None
    ) -> WorkflowView | None:
        if self.workflows is None or proposal.workflow_id is None or proposal.step is None:
            return None
        payload: dict[str, Any] = {
            "decision": decision,
            "agent_id": proposal.agent_id,
            "proposal_id": proposal.id,
            "reason": proposal.reason,
        }
        if arguments is not None:
            payload["arguments"] = dict(arguments)
        try:
            return await self.workflows.decide(
                proposal.workflow_id, proposal.step, payload, tenant=proposal.tenant
            )
        except NotFoundError:
            return None  # the workflow expired meanwhile: nothing waits for this decision

    def _check_edit(self, proposal: Proposal, arguments: dict[str, Any]) -> None:
        entry = self.tools.registry.get(proposal.tool)
        if entry is None:
            raise ValidationError(f"tool '{proposal.tool}' is no longer registered", field="tool")
        problems = entry.arguments.problems(arguments)
        if problems:
            raise ValidationError(
                "the edited arguments do not fit the tool: " + "; ".join(problems),
                field="arguments",
                problems=problems,
            )
        for name in _BOUND_ARGUMENTS:
            if name in proposal.arguments and arguments.get(name) != proposal.arguments[name]:
                raise ValidationError(
                    f"'{name}' names the customer and cannot be edited", field=name
                )

    def _settled(self, proposal: Proposal, **changes: Any) -> Proposal:
        """``proposal`` decided (``changes``), its personal numbers masked: nothing runs with
        its arguments any more."""
        done = replace(proposal, **changes)
        mask = self.masking.for_tenant(proposal.tenant)
        return replace(
            done,
            arguments=mask.data(done.arguments),
            executed_arguments=mask.data(done.executed_arguments)
            if done.executed_arguments is not None
            else None,
            result=mask.data(done.result),
        )

    def _spec(self, tool: str) -> ToolSpec:
        entry = self.tools.registry.get(tool)
        if entry is None:
            raise NotFoundError(f"no tool named '{tool}'")
        return entry.spec

    async def _status(self, proposal: Proposal) -> str:
        current = await self.store.get(proposal.id)
        return current.status if current else "unknown"

    def _emit(self, name: str, proposal: Proposal, **extra: Any) -> None:
        data: dict[str, Any] = {
            "proposal_id": proposal.id,
            "tool": proposal.tool,
            "status": proposal.status,
            "agent_id": proposal.agent_id,
            "workflow_id": proposal.workflow_id,
            **extra,
        }
        self.events.emit(Event(name, proposal.session_id or proposal.id, self.clock.now(), data))


def _require_pending(proposal: Proposal) -> None:
    if not proposal.pending:
        raise ConflictError(
            f"proposal {proposal.id} is {proposal.status} already", status=proposal.status
        )


def _workflow_topic(request: ApprovalRequest) -> str:
    # One proposal per wait: a step asked again after a restart finds the first.
    return f"wf:{request.workflow_id}:{request.step}:{request.round}"
