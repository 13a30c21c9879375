"""The data of a domain pack, validated. The engine knows no business; a pack carries it."""

from __future__ import annotations

import functools
import re
import string
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hermes_desk.nlu.dates import resolve_timezone
from hermes_desk.nlu.extractors import ENGINE_KEYS

__all__ = [
    "AlertRule",
    "AlertRules",
    "ComplianceRule",
    "ComplianceRules",
    "Example",
    "FactVerifier",
    "IntentSpec",
    "PackManifest",
]

_NAME = r"^[a-z][a-z0-9_]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FactVerifier(_Strict):
    """A kind of model-proposed fact the back office checks (``pack.yaml`` → ``verifiers``):
    facts whose key starts with ``prefix`` are checked with ``GET {backend_url}{path}``, where
    ``{user}`` is the customer and ``{feature}`` what follows the prefix."""

    prefix: str = Field(pattern=r"^[a-z][a-z0-9_]*_$")
    path: str = Field(pattern=r"^/")

    @field_validator("path")
    @classmethod
    def _placeholders(cls, path: str) -> str:
        try:
            names = {name for _, name, _, _ in string.Formatter().parse(path) if name is not None}
        except ValueError as exc:
            raise ValueError(f"not a path template: {exc}") from exc
        unknown = sorted(names - {"user", "feature"})
        if unknown or "feature" not in names:
            raise ValueError(
                f"the path names {{feature}} (and may name {{user}}), nothing else: {unknown}"
            )
        return path


class PackManifest(_Strict):
    name: str = Field(pattern=_NAME)
    version: int = Field(1, ge=1)
    description: str = ""
    languages: list[str] = Field(default_factory=lambda: ["zh"])
    rules: dict[str, str] = Field(
        default_factory=dict,
        description="the model prompt's system rules, one text per language of the pack "
        "(default: the engine's, which name no business)",
    )
    verifiers: list[FactVerifier] = Field(
        default_factory=list, description="model-proposed facts the back office checks"
    )
    timezone: str = Field(
        "Asia/Shanghai",
        description="the business's time zone: what 'today' and 'yesterday' mean in a turn, and "
        "whether a record's promised date has passed",
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, name: str) -> str:
        try:
            resolve_timezone(name)
        except (LookupError, ValueError) as exc:
            raise ValueError(f"not a time zone: {name!r}") from exc
        return name


class IntentSpec(_Strict):
    """One intent: its gate (tools it may call), slot schemas, workflow and reply key."""

    name: str = Field(pattern=_NAME)
    description: str = ""
    tools: tuple[str, ...] = ()
    calls: tuple[str, ...] = Field(
        (), description="tools the deterministic pipeline calls for this intent (subset of tools)"
    )
    if_not_found: dict[str, str] = Field(
        default_factory=dict,
        description="a called read tool that finds nothing → the read tool that looks the "
        "record up instead (an order not shipped yet has no shipment, but has an order)",
    )
    kb_requests: dict[str, tuple[str, ...]] | Literal["all"] = Field(
        default_factory=dict,
        description="what a customer asks of the intent that none of its tools does — "
        "{language: [phrases]} (cancelling an order), or all: every request, where the tools "
        "only answer questions (which ways to pay; not 'I was charged twice') — answered from "
        "the knowledge base",
    )
    kb_problems: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="{language: [phrases]}: a problem the customer reports that none of the "
        "intent's tools handles (a parcel that arrived broken), or its remedy (补发): answered "
        "from the knowledge base with the turn's own words (no record's status joins them)",
    )
    bare_requests: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="{language: [phrases]}: asking for the intent's write without a word of what "
        "it is about ('我要投诉', 'I want to file a complaint'). A turn that says only these (and "
        "the pack's dialogue acts and fillers) puts nothing forward: the reply asks what happened "
        "(the write's text arguments are missing) — unless a write of the intent waits already, "
        "or the turn before said something in scope, whose words the write then carries",
    )
    status_reports: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="{language: [phrases]}: the customer says how their own request stands "
        "('退款还没到账', 'my refund hasn't arrived'). Such a turn puts nothing forward: the "
        "record (kb_record) is looked up and the reply says its status (situation "
        "status_reported, by the record's status); without the record's number, it asks for it",
    )
    kb_topic: dict[str, tuple[str, ...]] = Field(
        default_factory=dict,
        description="{language: [words]}: the words that name what the intent is about ('退款', "
        "'refund'); a question that names one of any intent's says what it is about (kb_context)",
    )
    kb_context: dict[str, str] = Field(
        default_factory=dict,
        description="{language: word}: a knowledge question of when or how long right after a "
        "turn of this intent that names no intent's kb_topic ('多久能处理' after a complaint) is "
        "searched with this word joined to it. Only for an intent whose times are one subject "
        "(a return's intent speaks of refunds and of exchanges)",
    )
    kb_record: str | None = Field(
        None,
        description="a read tool of the intent: for a turn answered from the knowledge base "
        "(a kb_requests turn, or a question about an intent that acts) that names the record, "
        "it is looked up first and its status joins the knowledge query (cancelling a shipped "
        "order finds the sentence on shipped orders; 'has my refund come?' is asked for a "
        "refunded order)",
    )
    kb_record_detail: dict[str, str] = Field(
        default_factory=dict,
        description="{status: read tool}: when the kb_record's record has one of these statuses, "
        "this tool's record (looked up next, with the same arguments) tells it more closely, and "
        "its status is the one the knowledge search is given: a shipped order's parcel may be "
        "lost, and '能退款吗' of a lost parcel is not asked of an order on its way",
    )
    calls_detail: dict[str, str] = Field(
        default_factory=dict,
        description="{status: read tool}: when a read tool the intent calls finds a record with "
        "one of these statuses, this tool's record (looked up next, with the same arguments) "
        "tells it more closely, and the reply takes its status first: a delivered parcel's order "
        "may be being returned or refunded since",
    )
    record_check: str | None = Field(
        None,
        description="a read tool of the intent: a write the intent proposes for a record the "
        "turn names (a complaint about an order) is put forward only once this tool finds the "
        "record for the session's customer — not theirs, or no such record: nothing is proposed "
        "and the reply asks to check it",
    )
    slots: dict[str, dict[str, Any]] = Field(default_factory=dict)
    required_slots: tuple[str, ...] = ()
    workflow: str | None = None
    out_of_scope: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> IntentSpec:
        unknown = [s for s in self.required_slots if s not in self.slots]
        if unknown:
            raise ValueError(f"required_slots {unknown} are not declared under slots")
        outside = [t for t in self.calls if t not in self.tools]
        if outside:
            raise ValueError(f"calls {outside} are not listed under tools (the intent's gate)")
        uncalled = [t for t in self.if_not_found if t not in self.calls]
        if uncalled:
            raise ValueError(f"if_not_found names {uncalled}, which are not among calls")
        ungated = [t for t in self.if_not_found.values() if t not in self.tools]
        if ungated:
            raise ValueError(f"if_not_found looks up with {ungated}, not listed under tools")
        phrases_by_language = self.kb_requests if isinstance(self.kb_requests, dict) else {}
        for name, lists in (
            ("kb_requests", phrases_by_language),
            ("kb_problems", self.kb_problems),
            ("bare_requests", self.bare_requests),
            ("status_reports", self.status_reports),
            ("kb_topic", self.kb_topic),
            ("kb_context", {lang: (word,) for lang, word in self.kb_context.items()}),
        ):
            blank = [lang for lang, phrases in lists.items() if not all(p.strip() for p in phrases)]
            if blank:
                raise ValueError(f"{name}.{blank[0]} holds an empty phrase")
        for key, tool in (("kb_record", self.kb_record), ("record_check", self.record_check)):
            if tool is not None and tool not in self.tools:
                raise ValueError(f"{key} {tool!r} is not listed under tools")
        for key, detail in (
            ("kb_record_detail", self.kb_record_detail),
            ("calls_detail", self.calls_detail),
        ):
            unlisted = [t for t in detail.values() if t not in self.tools]
            if unlisted:
                raise ValueError(f"{key} {unlisted[0]!r} is not listed under tools")
        if self.kb_record_detail and self.kb_record is None:
            raise ValueError("kb_record_detail needs kb_record: the record it tells more of")
        if self.status_reports and self.kb_record is None:
            raise ValueError("status_reports needs kb_record: the record whose status is said")
        if self.out_of_scope and (self.tools or self.workflow):
            raise ValueError("an out-of-scope intent may not list tools or a workflow")
        return self

    @functools.cached_property
    def kb_phrases(self) -> tuple[str, ...]:
        """Every language's ``kb_requests`` phrases, lower-cased (none for ``all``)."""
        if not isinstance(self.kb_requests, dict):
            return ()
        return tuple(p.lower() for phrases in self.kb_requests.values() for p in phrases)

    @functools.cached_property
    def problem_phrases(self) -> tuple[str, ...]:
        """Every language's ``kb_problems`` phrases, lower-cased."""
        return tuple(p.lower() for phrases in self.kb_problems.values() for p in phrases)

    @functools.cached_property
    def status_phrases(self) -> tuple[str, ...]:
        """Every language's ``status_reports`` phrases, lower-cased."""
        return tuple(p.lower() for phrases in self.status_reports.values() for p in phrases)

    @functools.cached_property
    def topic_phrases(self) -> tuple[str, ...]:
        """Every language's ``kb_topic`` words, lower-cased."""
        return tuple(p.lower() for words in self.kb_topic.values() for p in words)

    @functools.cached_property
    def bare_phrases(self) -> tuple[str, ...]:
        """Every language's ``bare_requests`` phrases, lower-cased, the longest first (so that
        "我要投诉" is taken out whole, not as "投诉")."""
        phrases = {p.lower() for phrases in self.bare_requests.values() for p in phrases}
        return tuple(sorted(phrases, key=lambda p: (-len(p), p)))

    @property
    def slot_schema(self) -> dict[str, Any]:
        """The JSON Schema of this intent's slots, as sent to a model's JSON channel (without
        the engine's own keys: ``extractor``, ``listed``, ``tail``)."""
        properties = {
            name: {k: v for k, v in schema.items() if k not in ENGINE_KEYS}
            for name, schema in self.slots.items()
        }
        return {"type": "object", "properties": properties, "additionalProperties": False}


class Example(_Strict):
    text: str = Field(min_length=1, max_length=2_000)
    intent: str
    slots: dict[str, Any] = Field(default_factory=dict)


class Dialogue(_Strict):
    """A labelled conversation (``dialogues*.jsonl``): each customer turn with its intent."""

    id: str = Field(min_length=1, max_length=200)
    turns: list[Example] = Field(min_length=1, max_length=100)


class ComplianceRule(_Strict):
    id: str = Field(pattern=_NAME)
    description: str = ""
    forbidden: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    action: Literal["block", "mask"] = "block"

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        return _compiled(patterns)


def _compiled(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """``patterns`` unchanged, or a ValueError naming the one that is no regular expression."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            message = f"pattern {pattern!r} is not a valid regular expression: {exc}"
            raise ValueError(message) from exc
    return patterns


class AlertRule(_Strict):
    """A line that raises an alert for the agent and the supervisor (``compliance.yaml``,
    ``alerts.customer`` / ``alerts.agent``): any phrase (case-insensitive) or pattern hits."""

    id: str = Field(pattern=_NAME)
    kind: str | None = Field(None, pattern=_NAME, description="defaults to the id")
    severity: Literal["info", "warning", "critical"] = "warning"
    message: str = Field(min_length=1, max_length=300)
    phrases: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    unless: tuple[str, ...] = Field(
        (), description="phrases that take a hit back (不能保证, can't guarantee)"
    )
    allowed_while_waiting_for: tuple[str, ...] = Field(
        (), description="workflow inputs during which the rule stays quiet (asking for the code)"
    )

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        return _compiled(patterns)

    @model_validator(mode="after")
    def _matches_something(self) -> AlertRule:
        if not self.phrases and not self.patterns:
            raise ValueError(f"alert rule {self.id} needs phrases or patterns")
        return self

    @property
    def alert_kind(self) -> str:
        return self.kind or self.id


class AlertRules(_Strict):
    """What raises alerts (``compliance.yaml``, ``alerts``)."""

    customer: tuple[AlertRule, ...] = ()
    agent: tuple[AlertRule, ...] = ()
    negative_streak: int = Field(
        3, ge=2, le=20, description="consecutive negative customer turns that raise an alert"
    )
    verification_failures: int = Field(
        2, ge=1, le=20, description="rejected customer inputs (codes) in a session that alert"
    )


class ComplianceRules(_Strict):
    rules: tuple[ComplianceRule, ...] = ()
    fallback_reply: str = Field(min_length=1)
    alerts: AlertRules = AlertRules()
