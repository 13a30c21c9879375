"""Stage *suggest*: the reply the agent may send, built from what actually happened.

The facts handed to the responder say the truth about outcomes: a write that was only proposed
is "waiting for the agent" (situation ``proposed``), a record the customer does not own or that
does not exist is ``not_found``, a business refusal is ``refused``; nothing is called done unless
its write executed; a value the customer gave a waiting workflow that was rejected (a wrong SMS
code) is ``input_rejected``, with the tries left. A turn that shows negative emotion has the
pack's acknowledgement put before the facts (unless the reply already apologises), and a reply
that promises a follow-up repeats the customer's contact preferences. The reply is then checked
against the pack's compliance rules.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Set
from datetime import date
from typing import Any, Protocol

from hermes_desk.actions import Proposal
from hermes_desk.assist.records import Acting, Plan, Reading, Remembered, Suggestion
from hermes_desk.assist.several import asked_else
from hermes_desk.compliance import ComplianceChecker
from hermes_desk.llm.messages import ResponderInput
from hermes_desk.llm.offline import situation_for
from hermes_desk.nlu import is_slot_only, reports
from hermes_desk.packs import Pack
from hermes_desk.sessions import Session
from hermes_desk.tools import ToolResult, ToolSpec, ToolStatus
from hermes_desk.workflows.machine import APPROVAL_PREFIX
from hermes_desk.workflows.tool_steps import found_nothing

__all__ = ["Explain", "Responder", "TurnSuggester", "facts_of"]

#: What a proposal will do, in a language.
Explain = Callable[[Proposal, str], str]


class Responder(Protocol):
    """What turns a turn's facts into a suggestion: the model chain, ending offline."""

    async def suggest(self, facts: ResponderInput, session: Session) -> tuple[str, str]:
        """Returns ``(text, link)`` where link names who answered (``offline``, a model…)."""
        ...


class TurnSuggester:
    def __init__(
        self,
        *,
        responder: Responder,
        compliance: ComplianceChecker,
        pack: Pack | None = None,
        explain: Explain | None = None,
        specs: Callable[[], Mapping[str, ToolSpec]] | None = None,
        today: Callable[[], date] | None = None,
    ) -> None:
        """``specs`` gives the tools' specs by name and ``today`` the business's date: with
        both, a record whose promised date has passed is told as late (``ToolSpec.due``)."""
        self.responder = responder
        self.compliance = compliance
        self.pack = pack
        # What every turn's facts need of the pack, read once.
        self._workflows = pack.workflows if pack is not None else {}
        self._tails = (
            {name: rule.tail for name, rule in pack.slot_rules.items() if rule.tail}
            if pack is not None
            else {}
        )
        self._slot_names = frozenset(pack.slot_rules) if pack is not None else frozenset()
        self.explain = explain
        self.specs = specs
        self.today = today

    async def suggest(
        self,
        reading: Reading,
        plan: Plan,
        acting: Acting,
        remembered: Remembered,
        session: Session,
    ) -> Suggestion:
        facts = self._facts(reading, plan, acting, remembered)
        text, link = await self.responder.suggest(facts, session)
        situation = situation_for(facts)
        for other in acting.also:  # "订单A和B都到哪了": B answered after A, greeted once
            more, _link = await self.responder.suggest(
                self._facts(other.reading, other.plan, other.acting, remembered), session
            )
            text = _then(text, more, self.pack, facts.language)
        if self.pack is not None:
            text = _framed(text, self.pack, reading, situation, facts)
            text = _one_at_a_time(text, self.pack, reading, acting, situation, facts.language)
            before = _withdrawn_with_the_rest(plan, acting)
            if before is not None:  # "不退了，我要换货": the withdrawal, then the answer
                text = _said_before(text, self.pack, before, facts)
            elif plan.waits_first and "proposal" in facts.slots:
                # "when do I get the money?" while the refund waits: not confirmed yet, first
                text = _said_before(text, self.pack, "still_proposed", facts)
        checked = self.compliance.check(text)
        return Suggestion(
            text=checked.text,
            source=link,
            compliant=checked.passed,
            violations=list(checked.violations),
            situation=situation,
        )

    def _facts(
        self, reading: Reading, plan: Plan, acting: Acting, remembered: Remembered
    ) -> ResponderInput:
        return facts_of(
            reading,
            plan,
            acting,
            remembered,
            workflows=self._workflows,
            explain=self.explain,
            tails=self._tails,
            slot_names=self._slot_names,
            **self._overdue(acting),
        )

    def _overdue(self, acting: Acting) -> dict[str, Any]:
        """``overdue`` and ``today`` for :func:`facts_of`; nothing when no answered record
        promises a date (the date is then not even asked for)."""
        if self.specs is None or self.today is None:
            return {}
        specs = self.specs()
        due = {
            name: (spec.due, r.result)
            for name, r in acting.results.items()
            if r.ok and (spec := specs.get(name)) is not None and spec.due is not None
        }
        if not due:
            return {}
        today = self.today()
        late = {name: rule.days_overdue(result, today) for name, (rule, result) in due.items()}
        return {
            "overdue": {name: days for name, days in late.items() if days is not None},
            "today": today.isoformat(),
        }


def _framed(text: str, pack: Pack, reading: Reading, situation: str, facts: ResponderInput) -> str:
    """The acknowledgement of negative emotion before the reply; the customer's contact
    preferences after a reply that promises a follow-up."""
    acts = pack.acts
    language = facts.language
    if situation == "preference_noted" or situation.startswith("act_"):
        return text
    preferences = facts.slots.get("preferences")
    if preferences and acts.promises_contact(text):
        kept = _template(pack.conversation.get("preference_kept"), language)
        if kept:
            text = f"{text}{'' if language == 'zh' else ' '}{kept.format(preferences=preferences)}"
    if acts.is_negative(reading.text) and not acts.opens_with_apology(text):
        acknowledge = _template(pack.conversation.get("acknowledge"), language)
        if acknowledge:
            text = f"{acknowledge}{'' if language == 'zh' else ' '}{text}"
    return text


def _one_at_a_time(
    text: str, pack: Pack, reading: Reading, acting: Acting, situation: str, language: str
) -> str:
    """After a request put forward (or waiting) for one record, the others the turn named for
    it, said to need a request of their own (``conversation.one_at_a_time``): "I want to return
    A and B" put A forward and said nothing of B; "and B too" while A waited was told "I have
    put in the request for order A". Not a record answered after it, nor one its own clause
    asked something else of."""
    view = acting.workflow
    template = _template(pack.conversation.get("one_at_a_time"), language)
    if view is None or template is None or situation not in ("proposed", "still_proposed"):
        return text
    others: list[str] = []
    answered = {
        v for other in acting.also for v in other.reading.found.values() if isinstance(v, str)
    }
    # a record whose own clause asked something else ("A退货。B取消": B's cancellation) is not
    # one to put in the same way later ("我为您提交")
    answered |= asked_else(reading)
    for slot, value in view.inputs.items():
        rule = pack.slot_rules.get(slot)
        if rule is None or not rule.listed:
            continue  # only a record's id (a listed slot) names another record; a reason does not
        if not isinstance(value, str) or "*" in value:
            continue  # a masked value (a phone) is not compared
        named = reading.listed.get(slot) or (
            [reading.found[slot]] if isinstance(reading.found.get(slot), str) else []
        )
        others += [v for v in named if v != value and v not in answered]
    if not others:
        return text
    listed = ("、" if language == "zh" else ", ").join(dict.fromkeys(others))
    try:  # a pack's template naming another field says it blank, never fails the turn
        said = template.format_map(defaultdict(str, others=listed))
    except (AttributeError, IndexError, KeyError, ValueError):
        said = template
    return f"{text}{'' if language == 'zh' else ' '}{said}"


def _then(text: str, more: str, pack: Pack | None, language: str) -> str:
    """``more`` (the reply about another record the turn named) after ``text``, without the
    greeting it opens with ("您好，") when the pack's acts call that a greeting."""
    head, sep, rest = more.partition("，" if language == "zh" else ", ")
    if sep and rest and pack is not None:
        act = pack.acts.read(head)
        if act.only and act.act == "greeting":
            more = rest[:1].upper() + rest[1:] if language != "zh" else rest
    return f"{text}{'' if language == 'zh' else ' '}{more}"


def _withdrawn_with_the_rest(plan: Plan, acting: Acting) -> str | None:
    """``proposal_withdrawn`` / ``workflow_withdrawn`` when the turn withdrew something and has
    the rest of what it said answered (``Plan.answers_rest``): the reply is about the rest, and
    the withdrawal is said before it. None otherwise."""
    if not plan.answers_rest:
        return None
    if any(p.status == "withdrawn" for p in acting.withdrawals):
        return "proposal_withdrawn"
    return "workflow_withdrawn" if acting.workflow_withdrawn else None


def _said_before(text: str, pack: Pack, situation: str, facts: ResponderInput) -> str:
    """The pack's ``conversation.<situation>_before`` (else its ``<situation>`` reply) before
    ``text``; ``{proposal}`` is what was withdrawn."""
    conversation = pack.conversation
    template = _template(conversation.get(f"{situation}_before"), facts.language) or _template(
        conversation.get(situation), facts.language
    )
    if not template:
        return text
    try:
        said = template.format_map(defaultdict(str, proposal=facts.slots.get("proposal", "")))
    except (AttributeError, IndexError, KeyError, ValueError):
        said = template
    return f"{said}{'' if facts.language == 'zh' else ' '}{text}"


def _template(template: Any, language: str) -> str | None:
    if isinstance(template, str):
        return template
    if isinstance(template, Mapping):
        chosen = template.get(language)
        return chosen if isinstance(chosen, str) else None
    return None


def facts_of(
    reading: Reading,
    plan: Plan,
    acting: Acting,
    remembered: Remembered,
    *,
    workflows: Mapping[str, Any] | None = None,
    explain: Explain | None = None,
    tails: Mapping[str, int] | None = None,
    slot_names: frozenset[str] = frozenset(),
    overdue: Mapping[str, int] | None = None,
    today: str | None = None,
) -> ResponderInput:
    """The structured facts of the turn, for the model prompt and the offline templates.

    Args:
        workflows: the pack's workflow definitions (how many tries a waiting slot has).
        explain: what a proposal will do, in a language (a proposal made in another language
            of the conversation reads in this turn's).
        tails: slots whose last characters replies may show, and how many (the pack's
            ``tail``: ``phone`` → 4 gives ``{phone_tail}``).
        slot_names: the pack's slots: a proposal's arguments of these name its record in a
            reply about it where the turn named none ("好了吗": its order).
        overdue: tools whose record's promised date has passed, and by how many days;
            ``today`` the business's date it was judged on.
    """
    shown: dict[str, Any] = dict(reading.slots)
    if remembered.preferences:
        shown["preferences"] = ("；" if reading.language == "zh" else "; ").join(
            remembered.preferences
        )
    # The conversation's phone (any slot with a ``tail``), also under another intent's turn;
    # one said earlier is carried masked (139****5678): its tail still reads back.
    for slot, length in (tails or {}).items():
        number = reading.slots.get(slot) or reading.state.slots.get(slot)
        if isinstance(number, str):
            shown[f"{slot}_tail"] = number[-length:]
    outputs: dict[str, Any] = {}
    view = acting.workflow
    rest = _withdrawn_with_the_rest(plan, acting) is not None
    if rest and view is not None and view.withdrawn:
        view = None  # the workflow the withdrawal ended: not what the reply is about
    if view is not None:  # a workflow's step results read like tool results in templates
        outputs.update({s.tool: s.output for s in view.steps if s.tool and s.output})
        # A step that answered with a tail (``phone_tail``: where the code went) says what
        # happened, over a number the turn mentions ("my old number was …" while the code
        # waits): the reply never says a code went to a phone it did not go to.
        for step in view.steps:
            output = step.output if isinstance(step.output, Mapping) else {}
            for key, value in output.items():
                if not (key.endswith("_tail") and isinstance(value, str) and value):
                    continue
                if "*" not in value or key not in shown:  # a masked one only fills a gap
                    shown[key] = value
    outputs.update({n: r.result for n, r in _closer_first(acting) if r.ok})
    # A request carried out earlier that the turn asks about: its result, as it came (the
    # ticket's number); nothing ran for it in this turn.
    recalled = [p for p in (*reading.proposals, *reading.earlier) if p.id in plan.recall]
    outputs.update({p.tool: p.result for p in recalled if not p.turned_down and not p.pending})
    for proposal in recalled:  # "好了吗" names no order: the write's own ("订单 — 已办理…")
        own = _named_by(proposal, slot_names)
        shown.update({k: v for k, v in own.items() if k not in shown})
    pending = [p for p in acting.proposals if p.pending]
    if plan.situation == "act_confirmation_pending":
        pending = [p for p in reading.proposals if p.pending][-1:]
    elif plan.situation == "still_proposed":
        pending = [p for p in recalled if p.pending]

    def explained(proposal: Proposal) -> str:
        if explain is not None and proposal.language != reading.language:
            return explain(proposal, reading.language)
        return proposal.explanation

    if pending:
        shown["proposal"] = explained(pending[0])
    waits = [p for p in reading.proposals if p.id == plan.waits_first and p.pending]
    if waits and "proposal" not in shown:  # said before the answer (Plan.waits_first)
        shown["proposal"] = explained(waits[0])
    withdrawn = _withdrawal(acting)
    if withdrawn is not None:
        # What the customer took back, or what an agent approved before they did.
        shown["proposal"] = ("；" if reading.language == "zh" else "; ").join(
            explained(p) for p in withdrawn[1]
        )
    if rest:  # the reply answers the rest of the turn; the withdrawal is said before it
        withdrawn = None
    # What an agent turned down that the turn asks about: a recalled proposal, or the write of
    # the workflow shown (it failed at that approval).
    turned_down = [p for p in recalled if p.turned_down] or [
        p for p in reading.proposals
        if view is not None and view.turned_down and p.workflow_id == view.id and p.turned_down
    ]  # fmt: skip
    if turned_down and "proposal" not in shown:
        shown["proposal"] = explained(turned_down[-1])
    waiting_for = view.waiting_for if view is not None else None
    rejected = _tries_left(plan, view, workflows or {})
    if rejected is not None:
        shown["tries_left"] = rejected
    situation = (
        (withdrawn[0] if withdrawn is not None else None)
        or ("workflow_withdrawn" if acting.workflow_withdrawn and not rest else None)
        or plan.situation
        or (plan.if_found if plan.if_found and _all_found(acting) else None)
        or ("record_not_found" if plan.if_found and _any_not_found(acting) else None)
        or ("input_rejected" if rejected is not None else None)
        or ("turned_down" if turned_down and not pending else None)
        or ("sent_again" if _sent_again(plan, view) else None)
        or _situation(acting, pending, waiting_for)
        or _knowledge_situation(acting, reading.found, value_only=is_slot_only(reading.text))
    )
    if situation == "proposed" and not plan.situation and _asks_about(reading, pending):
        situation = "still_proposed"
    still = situation == "still_proposed" and pending
    done = _done_before(pending[0], reading.proposals) if still else []
    if done:
        # "is it done?" after the agent approved the return: the return is open and the refund
        # waits; "the request (refund …) waits" alone left the return unsaid.
        separator = "；" if reading.language == "zh" else "; "
        shown["done"] = separator.join(explained(p) for p in done)
        situation = "next_step_proposed"
    if pending and situation in _ABOUT_A_PROPOSAL:
        # The reply is about the proposal: it names the record the proposal was made for, not
        # one this turn mentions (a return waiting for order A, re-shown on a turn naming B).
        shown.update(_named_by(pending[0], slot_names | set(shown)))
    return ResponderInput(
        intent=plan.answer_intent,
        slots=shown,
        tool_results=outputs,
        failed_fallbacks=tuple(r.fallback or "" for r in acting.results.values() if not r.answered),
        notes=remembered.note_texts,
        workflow_state=view.status if view is not None else None,
        waiting_for=waiting_for,
        language=reading.language,
        missing_slots=plan.missing_slots,
        situation=situation,
        overdue=dict(overdue or {}),
        today=today,
    )


#: the reply situations whose sentence is about the waiting proposal (``{proposal}``)
_ABOUT_A_PROPOSAL = frozenset(
    {"proposed", "still_proposed", "next_step_proposed", "act_confirmation_pending"}
)


def _done_before(pending: Proposal, proposals: list[Proposal]) -> list[Proposal]:
    """The writes of ``pending``'s workflow that an agent approved and that ran, before it."""
    if pending.workflow_id is None:
        return []
    return [
        p for p in proposals
        if p.workflow_id == pending.workflow_id and p.status == "executed" and p.id != pending.id
    ]  # fmt: skip


def _asks_about(reading: Reading, pending: list[Proposal]) -> bool:
    """Is the turn a question about writes put forward before it ("did the refund go
    through?" while the refund waits for the agent), or a report of how they stand ("退款还没
    到账"), none of them new in this turn?"""
    before = {p.id for p in reading.proposals}
    if not pending or not all(p.id in before for p in pending):
        return False
    return reading.act == "question" or reports(reading.text, reading.intent.status_phrases)


def _named_by(proposal: Proposal, names: Set[str]) -> dict[str, str | int]:
    """The proposal's own values of ``names`` (the reply's fields, the pack's slots): scalars,
    none of its sensitive arguments, nor what is no slot (``user_id``, a ticket's summary)."""
    return {
        name: value
        for name, value in proposal.arguments.items()
        if name in names
        and name not in proposal.sensitive
        and isinstance(value, str | int)
        and not isinstance(value, bool)
    }


def _withdrawal(acting: Acting) -> tuple[str, list[Proposal]] | None:
    """``proposal_withdrawn`` with what the turn withdrew, or ``withdraw_too_late`` with what an
    agent had decided before the customer took it back (never "withdrawn" then); None when the
    turn withdrew nothing."""
    if not acting.withdrawals:
        return None
    taken = [p for p in acting.withdrawals if p.status == "withdrawn"]
    if taken:
        return "proposal_withdrawn", taken
    return "withdraw_too_late", list(acting.withdrawals)


def _knowledge_situation(
    acting: Acting, found: Mapping[str, Any], *, value_only: bool
) -> str | None:
    """A knowledge-base search that found nothing good enough is ``not_found`` (never a
    placeholder); an answer to a turn that names or points at an order ("这个订单能开发票吗")
    is ``answer_for_order`` (it names the order), unless that order was looked up and is not
    the customer's: then the answer is general, or, when the turn gave nothing but the order
    (``value_only``: "订单号…" after the question), ``record_not_found`` (check the number)."""
    kb = acting.results.get("kb_search")
    if kb is None or not kb.ok:
        return None
    missing = any(r.status is ToolStatus.NOT_FOUND for r in acting.results.values())
    if missing and value_only:
        return "record_not_found"
    if not (isinstance(kb.result, Mapping) and kb.result.get("results")):
        return "not_found"
    if missing:
        return None
    return "answer_for_order" if found.get("order_id") else None


def _tries_left(plan: Plan, view: Any, workflows: Mapping[str, Any]) -> int | None:
    """When this turn fed the waiting workflow a value it rejected (it asks for the same slot
    again): how many tries remain. None otherwise."""
    move = plan.workflow
    if move is None or move.kind != "feed" or view is None:
        return None
    slot = view.waiting_for
    if view.status != "waiting_input" or slot is None or slot not in move.inputs:
        return None
    definition = workflows.get(view.name)
    if definition is None:
        return None
    spec = next((step for _phase, step in definition.all_steps() if step.wait_for == slot), None)
    if spec is None:
        return None
    record = next((s for s in view.steps if s.name == spec.name), None)
    if record is None or record.input_round == 0:
        return None
    return max(int(spec.input_attempts) - int(record.input_round), 0)


def _all_found(acting: Acting) -> bool:
    """Every look-up of the turn answered with its record (none missing, none failed)."""
    return bool(acting.results) and all(r.ok for r in acting.results.values())


def _any_not_found(acting: Acting) -> bool:
    """A look-up of the turn found no such record for the customer (the number to check)."""
    return any(r.status is ToolStatus.NOT_FOUND for r in acting.results.values())


def _sent_again(plan: Plan, view: Any) -> bool:
    """Did this turn start the waiting workflow again with nothing changed ("收不到验证码":
    the code sent anew), and does it wait for the customer's slot again?"""
    move = plan.workflow
    if move is None or move.kind != "restart" or move.inputs or view is None:
        return False
    waiting = view.waiting_for
    return (
        view.status == "waiting_input" and bool(waiting) and not waiting.startswith(APPROVAL_PREFIX)
    )


def _situation(acting: Acting, pending: list[Any], waiting_for: str | None) -> str | None:
    if waiting_for and waiting_for.startswith(APPROVAL_PREFIX):
        return "proposed"
    view = acting.workflow
    if view is not None and view.turned_down:
        return "turned_down"  # an agent said no (or let it expire): it will not be done
    if (
        view is not None
        and view.status == "failed"
        and any(found_nothing(step.error) for step in view.steps)
    ):
        # A step found no such record for this customer (a phone not on their account):
        # that is the answer, not a failure to try again later.
        return "not_found"
    if pending and (acting.workflow is None or acting.workflow.status == "waiting_input"):
        return "proposed"
    statuses: Mapping[str, ToolStatus] = {n: r.status for n, r in acting.results.items()}
    if ToolStatus.NOT_FOUND in statuses.values() and ToolStatus.OK not in statuses.values():
        return "not_found"  # only when nothing was found: an unshipped order is still an order
    if ToolStatus.REFUSED in statuses.values():
        return "refused"
    return None


def _closer_first(acting: Acting) -> list[tuple[str, ToolResult]]:
    """The turn's results, each record that another told more closely right after that one
    (``Acting.told``): the reply's ``<situation>_<status>`` takes the closer status first (a
    delivered parcel's order being returned: ``ok_returning`` before ``ok_delivered``)."""
    closers = set(acting.told.values())
    ordered: list[tuple[str, ToolResult]] = []
    for name, result in acting.results.items():
        if name in closers:
            continue
        closer = acting.told.get(name)
        if closer is not None and closer in acting.results:
            ordered.append((closer, acting.results[closer]))
        ordered.append((name, result))
    placed = {name for name, _ in ordered}
    ordered += [(n, r) for n, r in acting.results.items() if n not in placed]
    return ordered
