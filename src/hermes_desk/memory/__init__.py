"""Memory: short/mid/long-term tiers, the key-fact filter, time decay, double-sign verification.

Backends with heavy drivers (``postgres_store``) are imported from their own modules only.
"""

from hermes_desk.memory.decay import DecayPolicy, decayed, half_life_hours
from hermes_desk.memory.fact import (
    CandidateFact,
    Fact,
    FactHistory,
    FactOrigin,
    FactStatus,
    LongTermTag,
    Note,
    TagStatus,
)
from hermes_desk.memory.keyfacts import KeyFactFilter, evaluate_filter
from hermes_desk.memory.service import MemoryService, render_notes
from hermes_desk.memory.sqlite_store import SqliteMemoryStore
from hermes_desk.memory.store import MemoryStore, build_memory_store
from hermes_desk.memory.tiers import ShortTermMemory
from hermes_desk.memory.transitions import Outcome, Planner
from hermes_desk.memory.verification import (
    HttpSupportsVerifier,
    VerificationScheduler,
    Verifier,
    VerifierRegistry,
)

__all__ = [
    "CandidateFact",
    "DecayPolicy",
    "Fact",
    "FactHistory",
    "FactOrigin",
    "FactStatus",
    "HttpSupportsVerifier",
    "KeyFactFilter",
    "LongTermTag",
    "MemoryService",
    "MemoryStore",
    "Note",
    "Outcome",
    "Planner",
    "ShortTermMemory",
    "SqliteMemoryStore",
    "TagStatus",
    "VerificationScheduler",
    "Verifier",
    "VerifierRegistry",
    "build_memory_store",
    "decayed",
    "evaluate_filter",
    "half_life_hours",
    "render_notes",
]
