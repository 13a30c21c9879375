"""Settings: one typed object, a section per module, the article's numbers as defaults.

Sources, highest first: keyword arguments, ``HERMES_*`` environment variables (nested with
``__``, e.g. ``HERMES_SESSIONS__IDLE_TTL_S=600``), a YAML file (``HERMES_CONFIG`` or
``Settings.load(path)``), then the defaults below. Built only by the service and the CLI; tests
construct it directly. Invalid values raise :class:`~hermes_desk.errors.ConfigError` naming the
field.
"""

from __future__ import annotations

import json
import os
import re
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from hermes_desk.errors import ConfigError

__all__ = [
    "ActionSettings",
    "BreakerSettings",
    "FeedbackSettings",
    "KnowledgeSettings",
    "LlmLinkSettings",
    "LlmSettings",
    "McpServerSettings",
    "McpSettings",
    "MemorySettings",
    "NluSettings",
    "PrivacySettings",
    "ServiceSettings",
    "SessionSettings",
    "Settings",
    "SummarySettings",
    "TenantPrivacySettings",
    "ToolSettings",
    "WorkflowSettings",
]


#: the shortest API key accepted (a guessable key is no key)
MIN_API_KEY_CHARS = 16
TENANT_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: the intent classifiers a pack can be read with (``hermes_desk.nlu`` builds each)
ClassifierKind = Literal["ensemble", "linear", "mlp", "crf"]
CLASSIFIER_KINDS: tuple[str, ...] = get_args(ClassifierKind)
#: the kinds of personal number that can be masked (:mod:`hermes_desk.masking`)
MaskKind = Literal["phone", "id_card", "bank_card", "email", "code", "password"]
MASK_KINDS: tuple[MaskKind, ...] = get_args(MaskKind)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServiceSettings(_Section):
    host: str = Field("127.0.0.1", description="bind address of `serve`")
    port: int = Field(8000, ge=1, le=65535, description="port of `serve`")
    data_dir: Path = Field(
        Path("./data"), description="SQLite database, workflow snapshots and trained models"
    )
    pack: str = Field("ecommerce", description="bundled pack name or a path to a pack folder")
    backend_url: str = Field(
        "http://127.0.0.1:8100",
        description="business backend the pack's tools call ({backend_url})",
    )
    request_timeout_s: float = Field(30.0, gt=0, description="global per-request limit (W7)")
    keep_alive_s: float = Field(
        75.0,
        gt=0,
        description="an idle client connection is closed after this long; longer than a proxy's "
        "own (nginx: 60 s), so the proxy closes first and never reuses a closing connection",
    )
    max_body_bytes: int = Field(64 * 1024, gt=0, description="larger request bodies get 413")
    max_text_chars: int = Field(2_000, gt=0, description="longest utterance accepted")
    access_log: bool = Field(
        False,
        description="one log line per request (method, route template, status, time: never a "
        "query string, key or customer id); off by default: it costs CPU on every request, "
        "and a load balancer in front logs them anyway",
    )
    api_keys: dict[str, str] = Field(
        default_factory=dict,
        description=f"API key (≥ {MIN_API_KEY_CHARS} characters) → tenant; empty = no auth, "
        "tenant 'default'",
    )

    @field_validator("api_keys")
    @classmethod
    def _strong_keys(cls, keys: dict[str, str]) -> dict[str, str]:
        for key, tenant in keys.items():
            if len(key) < MIN_API_KEY_CHARS:
                raise ValueError(
                    f"an API key of tenant {tenant!r} has {len(key)} characters; "
                    f"keys need at least {MIN_API_KEY_CHARS}"
                )
            if not TENANT_PATTERN.fullmatch(tenant):
                raise ValueError(f"tenant {tenant!r} must match {TENANT_PATTERN.pattern}")
        return keys


class SessionSettings(_Section):
    store: Literal["sqlite", "memory", "redis"] = Field(
        "sqlite",
        description="live sessions: sqlite (data folder, sessions.db; survives restarts) | "
        "memory (lost on exit: tests) | redis (several workers)",
    )
    redis_url: str = "redis://127.0.0.1:6379/0"
    archive: Literal["sqlite", "postgres"] = Field(
        "sqlite",
        description="closed sessions: sqlite (the service's database) | postgres (several "
        "machines: any worker reads any archive)",
    )
    archive_postgres_dsn: str = "postgresql://127.0.0.1:5432/test"
    idle_ttl_s: float = Field(15 * 60, gt=0, description="idle expiry (article: 15 min)")
    sweep_interval_s: float = Field(60, gt=0, description="how often expired sessions are swept")
    user_hash_key: str = Field("", description="when set, session ids carry a keyed user hash")
    context_budget_tokens: int = Field(1_500, gt=0, description="prompt history budget")
    overlap_threshold: float = Field(0.3, ge=0, le=1, description="TF-IDF keyword overlap > 0.3")
    anchor_neighbours: int = Field(1, ge=0, description="turns kept on each side of an anchor")
    tokenizer_model: str = Field("gpt-4o-mini", description="whose tokenizer counts tokens")


class NluSettings(_Section):
    classifier: ClassifierKind = Field(
        "ensemble",
        description="'ensemble' (default, measured best: SVM + perceptron), 'linear', 'mlp', 'crf'",
    )
    oos_threshold: float = Field(
        0.5, ge=0, le=1, description="below this confidence the intent is out of scope"
    )
    model_dir: Path | None = Field(None, description="cache for trained models; default data_dir")
    context_model: bool = Field(
        True,
        description="read each turn in its conversation with a model trained on the pack's "
        "dialogues*.jsonl (else the dialogue state's rules alone)",
    )
    context_folds: int = Field(
        3, ge=2, le=10, description="cross-fitting folds when training the context model"
    )


class SentimentSettings(_Section):
    enabled: bool = Field(True, description="sentiment on every customer turn")
    c: float = Field(4.0, gt=0, description="inverse regularisation of the logistic regression")
    balanced: bool = Field(
        True, description="weigh classes by inverse frequency (chat turns are mostly neutral)"
    )
    negative_threshold: float | None = Field(
        0.3,
        ge=0,
        le=1,
        description="P(negative) at which a turn is negative even if another class is likelier "
        "(null: the likeliest class)",
    )
    extra_corpus: Path | None = Field(
        None,
        description="more labelled JSONL ({text, label} or dialogues) to train on with the "
        "pack's sentiment.jsonl, e.g. a review corpus you hold; read once, at training time",
    )
    extra_limit: int = Field(20_000, ge=1, description="at most this many extra_corpus lines")


class BreakerSettings(_Section):
    consecutive_timeouts: int = Field(3, ge=1, description="slow calls in a row that open it")
    slow_call_s: float = Field(3.0, gt=0, description="a call slower than this counts as a timeout")
    failures: int = Field(5, ge=1, description="failures since the last success that open it")
    open_s: float = Field(600.0, gt=0, description="open for 10 min")
    store: Literal["memory", "redis"] = Field("memory", description="breaker state: memory | redis")
    redis_url: str = "redis://127.0.0.1:6379/0"


class ToolSettings(_Section):
    default_timeout_s: float = Field(3.0, gt=0, description="per-call limit of a tool without one")
    max_records_per_turn: int = Field(
        3,
        ge=1,
        le=10,
        description="records of one kind looked up for a turn that names several "
        '("订单A和B都到哪了"); 1: the first only',
    )
    breaker: BreakerSettings = BreakerSettings()


class KnowledgeSettings(_Section):
    min_score: float = Field(
        0.25,
        ge=0,
        description="knowledge-base hits scoring below this (BM25, higher is better) are not "
        "shown: a question with no good article gets no card and a reply that says so "
        "(measured in docs/benchmarks.md: 0.25 keeps a card for every held-out policy question; "
        "3.0 shows none for small talk but loses 15 % of the policy questions)",
    )
    max_cards: int = Field(
        3,
        ge=1,
        le=10,
        description="knowledge cards of the turn's own search at most (the article quoted for"
        " another record the turn asks of in a clause of its own comes after them)",
    )


class WorkflowSettings(_Section):
    step_timeout_s: float = Field(10.0, gt=0, description="per-step limit of a step without one")
    max_retries: int = Field(2, ge=0, description="retries of a failed step by default")
    retry_backoff_s: float = Field(0.2, ge=0, description="first retry delay, doubling")
    deadline_s: float = Field(
        15 * 60, gt=0, description="a workflow past this is failed or escalated"
    )
    watchdog_interval_s: float = Field(30.0, gt=0, description="how often the watchdog looks")
    snapshot_store: Literal["sqlite", "redis"] = Field("sqlite", description="sqlite | redis")
    snapshot_ttl_s: float = Field(24 * 3600, gt=0, description="how long snapshots are kept")
    redis_url: str = "redis://127.0.0.1:6379/0"


class ActionSettings(_Section):
    proposal_ttl_s: float = Field(
        600.0, gt=0, description="a proposal the agent has not decided by then expires"
    )
    expiry_interval_s: float = Field(15.0, gt=0, description="how often expired ones are swept")
    resume_after_s: float = Field(
        60.0,
        gt=0,
        description="an approved write still under way this long after the approval (a crash, "
        "a lost worker) runs again, with its idempotency key; longer than any tool call",
    )
    store: Literal["sqlite", "memory", "redis"] = Field(
        "sqlite", description="proposals: sqlite (data folder) | memory | redis"
    )
    redis_url: str = "redis://127.0.0.1:6379/0"
    earlier_contacts_days: float = Field(
        7.0,
        ge=0,
        le=7,
        description="a customer's writes that ran this many days back, in other contacts, are "
        "known to the turn (a complaint made again adds to its ticket); at most the 7 days "
        "Redis keeps decided proposals; 0: none",
    )


class FeedbackSettings(_Section):
    """What agents did with suggestions (inserted, copied, edited, rated), per tenant."""

    store: Literal["sqlite", "memory", "redis"] = Field(
        "sqlite", description="suggestion feedback: sqlite (data folder) | memory | redis"
    )
    redis_url: str = "redis://127.0.0.1:6379/0"


class MemorySettings(_Section):
    store: Literal["sqlite", "postgres"] = Field("sqlite", description="facts: sqlite | postgres")
    postgres_dsn: str = "postgresql://127.0.0.1:5432/test"
    decay_lambda: float = Field(0.02, gt=0, description="per hour; half-life ≈ 34.7 h")
    archive_below: float = Field(0.3, ge=0, le=1, description="decayed below this: archived")
    notes_floor: float = Field(0.3, ge=0, le=1, description="notes show facts above this")
    notes_limit: int = Field(10, ge=1, description="most notes shown")
    verify_interval_s: float = Field(300.0, gt=0, description="verifiers and decay sweep run")
    key_fact_min_signals: int = Field(
        2, ge=1, description="time / quantity / negation / emotion signals that make a key fact"
    )
    postgres_synchronous_commit: bool = Field(
        False,
        description="off matches SQLite WAL + synchronous=NORMAL: a crash may lose the last"
        " commits (never corrupts); on waits for the WAL flush on every write",
    )


class McpServerSettings(_Section):
    """A Model Context Protocol server whose tools become Hermes Desk tools (stdio or HTTP)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,32}$")
    command: list[str] | None = Field(None, description="a stdio server to launch")
    url: str | None = Field(None, description="a streamable HTTP server")
    env: dict[str, str] = Field(default_factory=dict, description="extra env for a stdio server")
    timeout_s: float = Field(10.0, gt=0, description="connect / list / call limit")
    prefix: str | None = Field(None, description="tool-name prefix (default: none)")
    fallback: str | None = Field(None, description="fallback reply for this server's tools")

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError("an MCP server needs exactly one of 'command' or 'url'")
        if self.command is not None and not self.command:
            raise ValueError("'command' must not be empty")
        return self


class McpSettings(_Section):
    """``hermes-desk mcp serve``: what the pack publishes to Model Context Protocol clients."""

    publish_writes: bool = Field(
        False,
        description="publish write tools too; a call then only proposes the write to an agent",
    )


class LlmLinkSettings(_Section):
    """Per-model options for one chain link (keyed by the LiteLLM model string)."""

    api_base: str | None = None
    api_key_env: str | None = Field(
        None, description="environment variable holding the key (default: the provider's own)"
    )
    timeout_s: float | None = Field(None, gt=0)
    extra: dict[str, Any] = Field(default_factory=dict, description="more litellm arguments")


class LlmSettings(_Section):
    chain: list[str] = Field(
        default_factory=lambda: ["offline"],
        description="LiteLLM model names tried in order; 'offline' is always the last link",
    )
    timeout_s: float = Field(10.0, gt=0, description="per model call, per try")
    retries: int = Field(1, ge=0, description="extra tries of a link on timeouts and 5xx")
    retry_backoff_s: float = Field(0.2, ge=0, description="first retry delay, doubling")
    api_base: str | None = Field(None, description="used by links without their own api_base")
    links: dict[str, LlmLinkSettings] = Field(
        default_factory=dict, description="per-link options keyed by model name"
    )
    max_tool_rounds: int = Field(2, ge=1, description="model ↔ tools round trips per turn")
    mcp_servers: list[McpServerSettings] = Field(
        default_factory=list, description="MCP servers whose tools become tools"
    )

    @field_validator("chain")
    @classmethod
    def _ends_offline(cls, chain: list[str]) -> list[str]:
        if not chain:
            return ["offline"]
        return chain if chain[-1] == "offline" else [*chain, "offline"]


# The YAML file of the Settings.load call in progress (a context variable: safe across threads
# and tasks building settings at the same time).
_YAML_PATH: ContextVar[Path | None] = ContextVar("hermes_settings_yaml", default=None)


class _YamlSource(PydanticBaseSettingsSource):
    def __init__(self, settings_cls: type[BaseSettings], path: Path | None) -> None:
        super().__init__(settings_cls)
        self._path = path

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        if self._path is None:
            return {}
        try:
            data = yaml.safe_load(self._path.read_text(encoding="utf-8")) or {}
        except FileNotFoundError as exc:
            raise ConfigError(f"settings file not found: {self._path}") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"settings file {self._path} is not valid YAML: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"settings file {self._path} must hold a mapping")
        return data


class TenantPrivacySettings(_Section):
    mask: bool = Field(True, description="mask this tenant's personal numbers")
    kinds: list[MaskKind] | None = Field(
        None, description="kinds masked for this tenant (default: the privacy section's)"
    )


class PrivacySettings(_Section):
    mask: bool = Field(
        True, description="mask personal numbers in stored transcripts, archives, events"
    )
    kinds: list[MaskKind] = Field(
        default_factory=lambda: list(MASK_KINDS),
        description="phone | id_card | bank_card | email | code (one-time codes) | password",
    )
    tenants: dict[str, TenantPrivacySettings] = Field(
        default_factory=dict, description="per-tenant overrides: tenant → {mask, kinds}"
    )


class SummarySettings(_Section):
    use_model: bool = Field(
        True, description="with a model chain, the model writes the summary (offline fallback)"
    )
    timeout_s: float = Field(15.0, gt=0, description="limit of the model's summary call")
    max_chars: int = Field(1_200, gt=0, description="longest summary kept")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="HERMES_", env_nested_delimiter="__", extra="forbid", frozen=True
    )

    service: ServiceSettings = ServiceSettings()
    sessions: SessionSettings = SessionSettings()
    nlu: NluSettings = NluSettings()
    sentiment: SentimentSettings = SentimentSettings()
    tools: ToolSettings = ToolSettings()
    knowledge: KnowledgeSettings = KnowledgeSettings()
    workflows: WorkflowSettings = WorkflowSettings()
    actions: ActionSettings = ActionSettings()
    feedback: FeedbackSettings = FeedbackSettings()
    memory: MemorySettings = MemorySettings()
    llm: LlmSettings = LlmSettings()
    mcp: McpSettings = McpSettings()
    privacy: PrivacySettings = PrivacySettings()
    summary: SummarySettings = SummarySettings()

    _yaml_path: Path | None = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = _YAML_PATH.get() or os.environ.get("HERMES_CONFIG") or None
        return (
            init_settings,
            env_settings,
            _YamlSource(settings_cls, Path(path) if path else None),
        )

    @classmethod
    def load(cls, path: str | Path | None = None, **overrides: Any) -> Settings:
        """Build settings from the environment and an optional YAML file, or raise ConfigError.

        Precedence, highest first: ``overrides``, ``HERMES_*`` variables, the YAML file (``path``
        or ``HERMES_CONFIG``), the defaults.
        """
        token = _YAML_PATH.set(Path(path) if path is not None else None)
        try:
            return cls(**overrides)
        except PydanticValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
            )
            raise ConfigError(f"invalid settings: {problems}") from exc
        except SettingsError as exc:
            raise ConfigError(_unparsable_environment() or f"invalid settings: {exc}") from exc
        finally:
            _YAML_PATH.reset(token)

    @property
    def model_dir(self) -> Path:
        return self.nlu.model_dir or self.service.data_dir / "models"

    @property
    def database_path(self) -> Path:
        return self.service.data_dir / "hermes.db"


def _unparsable_environment() -> str | None:
    """Name the ``HERMES_*`` variable whose value is not the JSON its field needs (pydantic-settings
    only names the top-level section)."""
    for name, value in sorted(os.environ.items()):
        if not name.startswith("HERMES_") or name == "HERMES_CONFIG":
            continue
        path = name.removeprefix("HERMES_").lower().split("__")
        field = _field_at(Settings, path)
        if field is None or not _wants_json(field.annotation):
            continue
        try:
            json.loads(value)
        except ValueError as exc:
            return (
                f"invalid settings: {name} ({'.'.join(path)}) must be JSON "
                f"(e.g. {_json_example(field.annotation)}), got {value[:40]!r}: {exc}"
            )
    return None


def _field_at(model: type[BaseModel], path: list[str]) -> Any:
    field = model.model_fields.get(path[0])
    if field is None:
        return None
    if len(path) == 1:
        return field
    inner = field.annotation
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return _field_at(inner, path[1:])
    return None


def _wants_json(annotation: Any) -> bool:
    origin = getattr(annotation, "__origin__", None)
    if origin in (dict, list):
        return True
    return isinstance(annotation, type) and issubclass(annotation, BaseModel | dict | list)


def _json_example(annotation: Any) -> str:
    origin = getattr(annotation, "__origin__", None)
    return '["a", "b"]' if origin is list else '{"key": "value"}'
