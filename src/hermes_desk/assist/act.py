"""Stage *act*: run the plan's read tools, move the workflow, record the proposed writes.

Nothing here executes a write: writes become proposals (:class:`~hermes_desk.actions.ActionService`)
and run only once an agent approves them; a request the customer takes back is withdrawn. Every
call names the session's customer, so the tools check the records they read against that
customer (X3).
"""

from __future__ import annotations

from typing import Any

from hermes_desk.actions import ActionService, Proposal
from hermes_desk.assist.records import Acting, Lookup, Plan, Reading
from hermes_desk.errors import ConflictError, ValidationError
from hermes_desk.sessions import Session
from hermes_desk.tools import CallContext, ToolExecutor, ToolResult, ToolStatus
from hermes_desk.workflows import WorkflowService, WorkflowView

__all__ = ["TurnActor"]


class TurnActor:
    def __init__(
        self, *, tools: ToolExecutor, workflows: WorkflowService | None, actions: ActionService
    ) -> None:
        self.tools = tools
        self.workflows = workflows
        self.actions = actions

    async def act(
        self, plan: Plan, reading: Reading, session: Session, turn_index: int, *, part: int = 0
    ) -> Acting:
        """``part``: which of the records the turn named this is (0: the first; the others'
        calls get keys of their own)."""
        suffix = f"#{part}" if part else ""
        allowed = reading.intent.tools if plan.answer_intent == reading.intent.name else None
        results: dict[str, ToolResult] = {}
        told: dict[str, str] = {}  # a record's tool → the one whose record tells its status

        async def call(lookup: Lookup) -> ToolResult:
            arguments = _with_status(lookup, results, told, reading.language)
            result = await self.tools.execute(
                {"name": lookup.tool, "arguments": arguments},
                request_id=session.id,
                allowed_tools=allowed if allowed is not None else (lookup.tool,),
                context=CallContext(
                    request_id=session.id,
                    idempotency_key=f"{session.id}:{turn_index}:{lookup.tool}{suffix}",
                    customer=session.user,
                    tenant=session.tenant,
                ),
            )
            results[lookup.tool] = result
            return result

        for planned in plan.lookups:
            lookup: Lookup | None = planned
            while lookup is not None and lookup.tool not in results:
                result = await call(lookup)
                closer = _detail_of(lookup, result)
                if closer is not None and closer.tool not in results and (await call(closer)).ok:
                    told[lookup.tool] = closer.tool
                # Nothing found: the record may still be there another way (``if_not_found``).
                lookup = lookup.instead if result.status is ToolStatus.NOT_FOUND else None
        why = {"intent": reading.intent.name, "slots": dict(reading.slots), "rule": plan.rule}
        proposals: list[Proposal] = []
        for write in plan.writes:
            checked = results.get(write.requires) if write.requires else None
            if checked is not None and checked.status is ToolStatus.NOT_FOUND:
                continue  # not the customer's record (or none such): nothing is put forward
            proposals.append(
                await self.actions.propose(
                    tenant=session.tenant,
                    user=session.user,
                    session_id=session.id,
                    tool=write.tool,
                    arguments=write.arguments,
                    why={**why, "rule": write.rule},
                    language=reading.language,
                    topic=write.topic,
                )
            )
        withdrawals = [await self._withdraw(proposal_id, session) for proposal_id in plan.withdraw]
        if plan.withdraw_workflow is not None:
            view, ended = await self._withdraw_workflow(plan.withdraw_workflow, session)
            return Acting(
                results, view, proposals, withdrawals, workflow_withdrawn=ended, told=told
            )
        if plan.amend is not None:
            await self._amend(*plan.amend, session)
        view = await self._move_workflow(plan, session)
        view = view or await self._ended_by(withdrawals, session)
        # A workflow's write is its intent's, whatever the turn that moved it read as ("好了吗"
        # read as small talk while the refund came up after the approved return).
        waiting = await self.actions.propose_for_workflow(
            view, language=reading.language, why={**why, "intent": plan.answer_intent}
        )
        if waiting is not None and waiting.pending:
            proposals.append(waiting)
        return Acting(
            results=results, workflow=view, proposals=proposals, withdrawals=withdrawals, told=told
        )

    async def _ended_by(self, withdrawals: list[Proposal], session: Session) -> WorkflowView | None:
        """The workflow a withdrawn proposal belonged to, as the withdrawal left it (ended): the
        turn shows it, so nobody reads the write as still on its way."""
        ended = [p.workflow_id for p in withdrawals if p.status == "withdrawn" and p.workflow_id]
        if not ended or self.workflows is None:
            return None
        return await self.workflows.get(ended[-1], tenant=session.tenant, user=session.user)

    async def _withdraw_workflow(
        self, workflow_id: str, session: Session
    ) -> tuple[WorkflowView | None, bool]:
        """End the workflow the customer took back; one that moved on meanwhile (the code came
        through another turn) comes back as it stands, with False."""
        if self.workflows is None:
            return None, False
        try:
            view = await self.workflows.withdraw(
                workflow_id, tenant=session.tenant, user=session.user
            )
        except ConflictError:
            view = await self.workflows.get(workflow_id, tenant=session.tenant, user=session.user)
            return view, False
        return view, True

    async def _withdraw(self, proposal_id: str, session: Session) -> Proposal:
        """Withdraw a waiting proposal; one an agent decided first comes back as it stands."""
        try:
            return await self.actions.withdraw(
                proposal_id, tenant=session.tenant, user=session.user,
                reason="the customer took the request back",
            )  # fmt: skip
        except ConflictError:
            return await self.actions.get(proposal_id, tenant=session.tenant, user=session.user)

    async def _amend(self, proposal_id: str, changes: dict[str, Any], session: Session) -> None:
        """Give a waiting proposal the detail the customer added; one an agent decided first
        (or a value its tool refuses) stays as it was, and the reply shows it as it stands."""
        try:
            await self.actions.amend(proposal_id, changes, tenant=session.tenant, user=session.user)
        except (ConflictError, ValidationError):
            return

    async def _move_workflow(self, plan: Plan, session: Session) -> WorkflowView | None:
        move = plan.workflow
        if move is None or self.workflows is None:
            return None
        if move.kind == "start":
            return await self.workflows.start(
                move.name, move.inputs, tenant=session.tenant, user=session.user,
                session_id=session.id,
            )  # fmt: skip
        assert move.workflow_id is not None
        if move.kind == "restart":
            return await self.workflows.restart(
                move.workflow_id, move.inputs, tenant=session.tenant, user=session.user
            )
        if move.kind == "feed":
            return await self.workflows.provide_input(
                move.workflow_id, move.inputs, tenant=session.tenant
            )
        return await self.workflows.get(move.workflow_id, tenant=session.tenant)


def _detail_of(lookup: Lookup, result: ToolResult) -> Lookup | None:
    """The look-up that tells the found record's status more closely (``Lookup.detail``: a
    shipped order's parcel), if its status is one that has one."""
    if not lookup.detail or not result.ok or not isinstance(result.result, dict):
        return None
    status = result.result.get("status")
    return next((closer for when, closer in lookup.detail if when == status), None)


def _status_words(found: ToolResult | None, language: str) -> str | None:
    """A found record's status in the turn's language (``status_text`` for Chinese)."""
    if found is None or not found.ok or not isinstance(found.result, dict):
        return None
    record = found.result
    words = record.get("status_text") if language == "zh" else None
    words = words if isinstance(words, str) and words else record.get("status")
    return words.replace("_", " ") if isinstance(words, str) and words else None


def _with_status(
    lookup: Lookup, results: dict[str, ToolResult], told: dict[str, str], language: str
) -> dict[str, Any]:
    """The look-up's arguments with the status of the record looked up before it
    (``status_of``) as the search's ``state`` (it joins the ranking, yet an article only it
    matches is no answer) — or the status of the record that tells it more closely (``told``:
    the parcel's 丢失, not the order's 已发货) — or as its ``about`` (``status_in``: it only picks
    the passage; both records' then, "已发货 丢失", each a case an article may speak of): each
    record's ``status_text`` for a Chinese turn when it has one, else its ``status`` — words in
    the turn's language, so the passage quoted is in it too."""
    if not lookup.status_of or "query" not in lookup.arguments:
        return lookup.arguments
    closer = told.get(lookup.status_of)
    if lookup.status_in == "about":
        tools = [lookup.status_of, *([closer] if closer else [])]
    else:
        tools = [closer or lookup.status_of]
    said = [w for tool in tools if (w := _status_words(results.get(tool), language))]
    if not said:
        return lookup.arguments
    words = " ".join(said)
    if lookup.status_in == "about":
        return {**lookup.arguments, "about": words}
    return {**lookup.arguments, "state": words}
