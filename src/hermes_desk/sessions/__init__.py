"""Sessions: lifecycle, stores, archive and context trimming (spec S1–S5, D1).

Importing this package imports neither ``redis`` nor ``jieba`` nor ``tiktoken``: the Redis store,
the segmenter and the tokenizer load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_desk.config import SessionSettings
from hermes_desk.sessions.archive import (
    SessionArchive,
    SqliteSessionArchive,
    build_session_archive,
    summarize,
)
from hermes_desk.sessions.manager import DestroyHook, DestroyReason, SessionManager
from hermes_desk.sessions.session import Role, Session, SessionStatus, Turn, turn_key
from hermes_desk.sessions.sqlite_store import SqliteSessionStore
from hermes_desk.sessions.store import (
    MemorySessionStore,
    SaveResult,
    SessionStore,
    build_session_store,
)
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
    "SaveResult",
    "Session",
    "SessionArchive",
    "SessionManager",
    "SessionStatus",
    "SessionStore",
    "SqliteSessionArchive",
    "SqliteSessionStore",
    "TiktokenCounter",
    "TokenCounter",
    "TrimResult",
    "TrimWeights",
    "Turn",
    "build_session_archive",
    "build_session_store",
    "build_token_counter",
    "build_trimmer",
    "summarize",
    "turn_key",
]


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
