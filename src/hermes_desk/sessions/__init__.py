"""Sessions: lifecycle, stores, archive and context trimming (spec S1–S5).

Importing this package imports neither ``redis`` nor ``jieba`` nor ``tiktoken``: the Redis store,
the segmenter and the tokenizer load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_desk.clock import Clock
from hermes_desk.config import SessionSettings
from hermes_desk.sessions.archive import SessionArchive, SqliteSessionArchive, summarize
from hermes_desk.sessions.manager import DestroyHook, DestroyReason, SessionManager
from hermes_desk.sessions.memory_store import MemorySessionStore
from hermes_desk.sessions.session import Role, Session, SessionStatus, Turn
from hermes_desk.sessions.store import SessionStore
from hermes_desk.sessions.tokens import (
    EstimateCounter,
    TiktokenCounter,
    TokenCounter,
    build_token_counter,
)
from hermes_desk.sessions.trimming import ContextTrimmer, TrimResult, TrimWeights

if TYPE_CHECKING:
    from hermes_desk.sessions.redis_store import RedisSessionStore

__all__ = [
    "ContextTrimmer",
    "DestroyHook",
    "DestroyReason",
    "EstimateCounter",
    "MemorySessionStore",
    "RedisSessionStore",
    "Role",
    "Session",
    "SessionArchive",
    "SessionManager",
    "SessionStatus",
    "SessionStore",
    "SqliteSessionArchive",
    "TiktokenCounter",
    "TokenCounter",
    "TrimResult",
    "TrimWeights",
    "Turn",
    "build_session_store",
    "build_token_counter",
    "build_trimmer",
    "summarize",
]


def build_session_store(settings: SessionSettings, *, clock: Clock | None = None) -> SessionStore:
    """The store named by ``settings.store``: ``memory`` (default) or ``redis``."""
    if settings.store == "redis":
        from hermes_desk.sessions.redis_store import RedisSessionStore

        # Redis keeps an untouched session well past the idle TTL, so the sweeper archives it.
        retention = 2 * settings.idle_ttl_s + 2 * settings.sweep_interval_s
        return RedisSessionStore(settings.redis_url, retention_s=retention)
    return MemorySessionStore(clock=clock)


def build_trimmer(settings: SessionSettings) -> ContextTrimmer:
    """A trimmer counting tokens with ``settings.tokenizer_model``'s tokenizer."""
    return ContextTrimmer(
        build_token_counter(settings.tokenizer_model),
        overlap_threshold=settings.overlap_threshold,
        anchor_neighbours=settings.anchor_neighbours,
    )


def __getattr__(name: str) -> object:
    if name == "RedisSessionStore":
        from hermes_desk.sessions.redis_store import RedisSessionStore

        return RedisSessionStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
