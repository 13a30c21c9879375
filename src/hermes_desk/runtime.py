"""Assemble the service from settings: stores, pack, modules, background jobs.

Built only by the service and the CLI (no import-time state). ``start`` opens what needs an event
loop and starts the background jobs (session sweeper, workflow watchdog and recovery, memory
verification and decay sweeps); ``stop`` ends them and closes every connection.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import anyio.abc
import anyio.to_thread
import httpx

from hermes_desk.actions import ActionService, build_proposal_store, require_approvals
from hermes_desk.assist import Assistant, Responder
from hermes_desk.clock import Clock, SystemClock
from hermes_desk.compliance import ComplianceChecker
from hermes_desk.config import Settings
from hermes_desk.errors import BackendUnavailableError
from hermes_desk.events import Event, FanoutSink, LoggingSink, MemorySink, TurnCollector
from hermes_desk.feedback import SuggestionFeedback, SuggestionMetrics, build_feedback_store
from hermes_desk.llm.messages import ResponderInput
from hermes_desk.llm.offline import OfflineResponder
from hermes_desk.llm.slots import ModelSlotChannel
from hermes_desk.llm.usage import UsageLedger
from hermes_desk.masking import Masking, MaskingSink
from hermes_desk.memory import (
    HttpSupportsVerifier,
    KeyFactFilter,
    MemoryService,
    VerificationScheduler,
    VerifierRegistry,
    build_memory_store,
)
from hermes_desk.nlu import SlotExtractor, TurnReader, load_or_train
from hermes_desk.packs import Pack, PackLabels, load_labels, load_pack
from hermes_desk.sentiment import (
    SentimentLexicon,
    SentimentModel,
    load_labelled,
    load_or_train_sentiment,
)
from hermes_desk.sessions import (
    Session,
    SessionManager,
    Turn,
    build_session_archive,
    build_session_store,
)
from hermes_desk.storage import SqliteDatabase
from hermes_desk.summary import SqliteSummaryStore, SummaryService, SummaryWriter
from hermes_desk.supervision import AlertDetector, SupervisorBoard
from hermes_desk.tools import (
    BackendHttp,
    KnowledgeBase,
    ToolExecutor,
    ToolMetrics,
    build_breaker_store,
    load_pack_tools,
)
from hermes_desk.workflows import WorkflowService, build_snapshot_store
from hermes_desk.workflows.tool_steps import ToolStepExecutor

__all__ = ["OfflineSuggester", "Runtime", "build_runtime", "load_intent_model"]

_logger = logging.getLogger(__name__)
_MCP_RETRY_S = 30.0
_PING_TIMEOUT_S = 5.0


class _Pingable(Protocol):
    """What every store offers the readiness check."""

    async def ping(self) -> None: ...


class OfflineSuggester:
    """The deterministic responder as the turn pipeline's :class:`Responder`."""

    def __init__(self, offline: OfflineResponder) -> None:
        self._offline = offline

    async def suggest(self, facts: ResponderInput, session: Session) -> tuple[str, str]:
        return self._offline.reply(facts), self._offline.name


@dataclass
class Runtime:
    """Everything one service process runs, built from :class:`Settings`."""

    settings: Settings
    clock: Clock
    pack: Pack
    events: MemorySink
    sink: FanoutSink
    database: SqliteDatabase
    sessions: SessionManager
    intents: TurnReader
    slot_extractor: SlotExtractor
    http: httpx.AsyncClient
    kb: KnowledgeBase
    tools: ToolExecutor
    workflows: WorkflowService
    memory: MemoryService
    verifiers: VerifierRegistry
    compliance: ComplianceChecker
    responder: Responder
    usage: UsageLedger
    actions: ActionService
    assistant: Assistant
    feedback: SuggestionFeedback
    labels: PackLabels
    board: SupervisorBoard
    masking: Masking
    summaries: SummaryService
    sentiment: SentimentModel | None = None
    mcp: Any = None
    _group: anyio.abc.TaskGroup | None = field(default=None, repr=False)
    _closers: list[Callable[[], Awaitable[Any]]] = field(default_factory=list, repr=False)

    async def start(self) -> None:
        """Open async resources and start the background jobs."""
        if self.settings.llm.mcp_servers:
            from hermes_desk.tools.mcp_binding import McpToolSource

            source = McpToolSource(self.settings.llm.mcp_servers)
            added = await source.refresh(self.tools.registry)
            _logger.info("MCP tools: %s; unreachable: %s", added, source.errors)
            self.mcp = source
        if self.settings.llm.chain != ["offline"]:
            from hermes_desk.llm.litellm_model import import_litellm

            # LiteLLM takes seconds to import: pay it at start, not in the first customer turn.
            await anyio.to_thread.run_sync(import_litellm)
        await self.workflows.__aenter__()
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self.sessions.run_sweeper)
        scheduler = VerificationScheduler(
            self.memory,
            self.verifiers,
            clock=self.clock,
            interval_s=self.settings.memory.verify_interval_s,
        )
        self._group.start_soon(scheduler.run_forever)
        self._group.start_soon(self._decay_sweeper)
        self._group.start_soon(self.actions.run_expiry)
        # jieba loads its dictionary on first use (about a second of CPU): pay it now, beside
        # the start, rather than in the first customer's turn.
        self._group.start_soon(anyio.to_thread.run_sync, _warm_tokenizer)
        if self.mcp is not None:
            self._group.start_soon(self._mcp_retry, self.mcp)
        resumed = await self.workflows.recover()
        if resumed:
            _logger.info("resumed %d workflows", len(resumed))
        # An approval recorded just before a crash: its workflow hears of it now (or, with the
        # proposal store down at start, in the sweep once it is back: /readyz names it meanwhile).
        try:
            await self.actions.resume_executing()
        except BackendUnavailableError as exc:
            _logger.warning("approvals under way not resumed at start: %s", exc)

    async def _mcp_retry(self, source: Any) -> None:
        """A server that was down at start is listed again until its tools are in."""
        while source.errors:
            await anyio.sleep(_MCP_RETRY_S)
            added = await source.refresh(self.tools.registry)
            if added:
                _logger.info("MCP tools back: %s", added)

    async def _decay_sweeper(self) -> None:
        while True:
            await anyio.sleep(self.settings.memory.verify_interval_s)
            try:
                await self.memory.sweep_decay()
            except Exception:  # a store outage must not end the job; next round retries
                _logger.exception("memory decay sweep failed")

    def stores(self) -> dict[str, _Pingable]:
        """Every store the service uses, by name: session, breaker, snapshot, proposal, memory,
        feedback and the session archive."""
        return {
            "session": self.sessions.store,
            "breaker": self.tools.store,
            "snapshot": self.workflows.store,
            "proposal": self.actions.store,
            "memory": self.memory.store,
            "feedback": self.feedback.store,
            **({"archive": self.sessions.archive} if self.sessions.archive is not None else {}),
        }

    async def check_stores(self, *, timeout_s: float = _PING_TIMEOUT_S) -> dict[str, str | None]:
        """Ping every store at once: name → ``None`` if it answered within ``timeout_s``, else
        why not (the error's message)."""
        results: dict[str, str | None] = {}

        async def check(name: str, store: _Pingable) -> None:
            try:
                with anyio.fail_after(timeout_s):
                    await store.ping()
            except TimeoutError:
                results[name] = f"no answer within {timeout_s:g} s"
            except Exception as exc:  # any failure is the answer: the store is not usable
                results[name] = str(exc) or type(exc).__name__
            else:
                results[name] = None

        async with anyio.create_task_group() as group:
            for name, store in self.stores().items():
                group.start_soon(check, name, store)
        return {name: results[name] for name in self.stores()}

    async def stop(self) -> None:
        if self._group is not None:
            self._group.cancel_scope.cancel()
            with contextlib.suppress(BaseException):
                await self._group.__aexit__(None, None, None)
            self._group = None
        await self.workflows.__aexit__(None, None, None)
        await self.workflows.store.aclose()
        await self.tools.aclose()
        await self.sessions.aclose()
        if self.sessions.archive is not None:
            await self.sessions.archive.aclose()
        await self.memory.close()
        await self.actions.store.aclose()
        await self.feedback.store.aclose()
        for close in reversed(self._closers):
            await close()
        await self.http.aclose()
        self.kb.close()
        self.database.close()


def _warm_tokenizer() -> None:
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()


def _model_side(
    settings: Settings,
    pack: Pack,
    tools: ToolExecutor,
    sink: FanoutSink,
    clock: Clock,
    usage: UsageLedger,
) -> tuple[Responder, ModelSlotChannel | None, Callable[[], Awaitable[Any]] | None, SummaryWriter]:
    """Offline only (the default), or the model chain ending in the offline responder, which
    also serves as the second slot channel and writes the summaries."""
    offline = OfflineResponder(pack.replies, conversation=pack.conversation, terms=pack.terms)
    if settings.llm.chain == ["offline"]:
        return OfflineSuggester(offline), None, None, SummaryWriter(None)
    from hermes_desk.llm.factory import build_chain
    from hermes_desk.llm.responder import ModelResponder
    from hermes_desk.sessions import build_trimmer

    chain = build_chain(settings.llm, offline, events=sink, clock=clock, usage=usage)
    trimmer = build_trimmer(settings.sessions)
    budget = settings.sessions.context_budget_tokens

    def history(session: Session) -> list[Turn]:
        turns = list(session.turns)
        if not turns:
            return []
        *before, current = turns
        return trimmer.trim(before, current.text, budget).turns

    responder = ModelResponder(
        chain,
        offline,
        executor=tools,
        # A model may look things up; it never writes (writes are proposals for the agent).
        allowed_tools=lambda intent: _read_tools(pack.intent(intent).tools, tools),
        intent_descriptions={name: spec.description for name, spec in pack.intents.items()},
        history=history,
        max_tool_rounds=settings.llm.max_tool_rounds,
        rules=dict(pack.manifest.rules) or None,
    )
    writer = SummaryWriter(
        chain if settings.summary.use_model else None,
        timeout_s=settings.summary.timeout_s,
        max_chars=settings.summary.max_chars,
    )
    return responder, ModelSlotChannel(chain, events=sink, clock=clock), chain.aclose, writer


def _read_tools(names: Sequence[str], tools: ToolExecutor) -> list[str]:
    return [
        name
        for name in names
        if (entry := tools.registry.get(name)) is not None and entry.spec.effect == "read"
    ]


def load_intent_model(pack: Pack, settings: Settings) -> TurnReader:
    """The pack's intent model (classifier + context model), trained once and cached."""
    examples, dialogues = pack.training_data()
    return load_or_train(examples, settings.nlu, settings.model_dir, dialogues=dialogues)


def load_sentiment_model(pack: Pack, settings: Settings) -> SentimentModel | None:
    """The pack's sentiment model, trained once from ``sentiment.jsonl`` (and the settings'
    ``extra_corpus``) with ``sentiment_lexicon.yaml`` and ``sentiment_polarity_zh.tsv``, and
    cached; None when the pack has no labelled turns or sentiment is switched off."""
    options = settings.sentiment
    labelled = pack.optional_file("sentiment.jsonl")
    if not options.enabled or labelled is None:
        return None
    lexicon = SentimentLexicon.from_folder(pack.root)
    pairs = load_labelled(labelled)
    if options.extra_corpus is not None:
        pairs += load_labelled(options.extra_corpus, limit=options.extra_limit)
    model = load_or_train_sentiment(
        pairs, lexicon, settings.model_dir, c=options.c, balanced=options.balanced
    )
    model.negative_threshold = options.negative_threshold
    return model


def build_runtime(settings: Settings, *, clock: Clock | None = None) -> Runtime:
    """Load the pack, train or load the intent model, and wire every module."""
    clock = clock or SystemClock()
    data_dir = settings.service.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    variables = {"backend_url": settings.service.backend_url.rstrip("/")}
    pack = load_pack(settings.service.pack, variables=variables)
    labels = load_labels(pack)

    recent = MemorySink()
    masking = Masking(settings.privacy)
    board = SupervisorBoard()
    # Every event is masked once, before any sink (recent, the turn's own, the log, the
    # supervisor board) sees it.
    sink = FanoutSink(
        [MaskingSink(FanoutSink([recent, TurnCollector(), LoggingSink(), board]), masking)]
    )
    database = SqliteDatabase(settings.database_path)

    archive = build_session_archive(settings.sessions, database=database, masking=masking)
    sessions = SessionManager(
        build_session_store(settings.sessions, data_dir=data_dir, clock=clock),
        settings.sessions,
        clock=clock,
        archive=archive,
        events=sink,
    )
    intents = load_intent_model(pack, settings)
    sentiment = load_sentiment_model(pack, settings)
    slot_extractor = SlotExtractor(pack.slot_rules, clock, pack.manifest.timezone)

    http = httpx.AsyncClient()  # the fact verifiers' client
    tools_http = BackendHttp()  # the HTTP tools' (a fifth of httpx's CPU per backend call)
    registry, kb = load_pack_tools(
        pack.root,
        variables=variables,
        client=tools_http,
        kb_db_path=":memory:",
        kb_min_score=settings.knowledge.min_score,
    )
    tools = ToolExecutor(
        registry,
        settings=settings.tools,
        store=build_breaker_store(settings.tools.breaker),
        events=sink,
        metrics=ToolMetrics(),
        clock=clock,
    )
    workflows = WorkflowService(
        definitions=require_approvals(
            pack.workflows, registry, folder=str(pack.root / "workflows")
        ),
        executor=ToolStepExecutor(tools),
        store=build_snapshot_store(settings.workflows, data_dir=data_dir, clock=clock),
        settings=settings.workflows,
        clock=clock,
        events=sink,
        masking=masking,
    )
    keyfacts = (
        KeyFactFilter.from_pack(pack.root, min_signals=settings.memory.key_fact_min_signals)
        if pack.keyfacts_file.exists()
        else None
    )
    memory = MemoryService(
        build_memory_store(settings.memory, database=database),
        settings.memory,
        clock=clock,
        keyfacts=keyfacts,
        events=sink,
    )
    verifiers = VerifierRegistry()
    for checked in pack.manifest.verifiers:  # facts checked against the back office
        verifier = HttpSupportsVerifier(
            variables["backend_url"], prefix=checked.prefix, path=checked.path, client=http
        )
        verifiers.register(f"{checked.prefix}*", verifier)

    usage = UsageLedger()

    async def promote(session: Session, reason: str) -> None:
        await memory.promote_short_term(
            session.tenant, session.user, session.id, session.short_term
        )

    sessions.on_destroy(promote)

    async def settle_usage(session: Session, reason: str) -> None:
        spent = usage.pop(session.id)
        if spent.calls:  # the session's model use, once, as it ends (the ledger stays bounded)
            sink.emit(Event("llm.usage", session.id, clock.now(), spent.to_dict()))

    sessions.on_destroy(settle_usage)

    responder, model_slots, close_chain, writer = _model_side(
        settings, pack, tools, sink, clock, usage
    )
    actions = ActionService(
        store=build_proposal_store(settings.actions, data_dir=data_dir),
        tools=tools,
        workflows=workflows,
        settings=settings.actions,
        clock=clock,
        events=sink,
        masking=masking,
    )
    summaries = SummaryService(
        pack=pack,
        sessions=sessions,
        archive=archive,
        store=SqliteSummaryStore(database),
        actions=actions,
        workflows=workflows,
        writer=writer,
        masking=masking,
        clock=clock,
        labels=labels,
    )
    # After the memory and usage hooks: the summary is kept with the archive as it ends.
    sessions.on_destroy(summaries.session_ended)
    compliance = ComplianceChecker(pack.compliance)
    assistant = Assistant(
        pack=pack,
        sessions=sessions,
        intents=intents,
        slots=slot_extractor,
        tools=tools,
        workflows=workflows,
        actions=actions,
        memory=memory,
        responder=responder,
        compliance=compliance,
        sink=sink,
        clock=clock,
        oos_threshold=settings.nlu.oos_threshold,
        max_text_chars=settings.service.max_text_chars,
        model_slots=model_slots,
        max_cards=settings.knowledge.max_cards,
        max_records=settings.tools.max_records_per_turn,
        sentiment=sentiment,
        alerts=AlertDetector(pack.compliance.alerts),
        masking=masking,
    )
    feedback = SuggestionFeedback(
        build_feedback_store(settings.feedback, data_dir=data_dir),
        sessions,
        # On the tools' registry: /metrics renders one registry.
        metrics=SuggestionMetrics(tools.metrics.registry),
        clock=clock,
        max_text_chars=settings.service.max_text_chars,
        redact=lambda tenant, text: masking.for_tenant(tenant).text(text),
    )
    runtime = Runtime(
        settings=settings,
        clock=clock,
        pack=pack,
        events=recent,
        sink=sink,
        database=database,
        sessions=sessions,
        intents=intents,
        slot_extractor=slot_extractor,
        http=http,
        kb=kb,
        tools=tools,
        workflows=workflows,
        memory=memory,
        verifiers=verifiers,
        compliance=compliance,
        responder=responder,
        usage=usage,
        actions=actions,
        assistant=assistant,
        feedback=feedback,
        labels=labels,
        board=board,
        sentiment=sentiment,
        masking=masking,
        summaries=summaries,
    )
    if close_chain is not None:
        runtime._closers.append(close_chain)
    runtime._closers.append(tools_http.aclose)
    return runtime
