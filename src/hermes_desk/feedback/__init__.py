"""Suggestion feedback: what agents did with suggested replies (inserted, copied, edited, rated).

See ``docs/console.md`` (the console's suggestion card) and ``docs/api.md`` (the routes).
"""

from hermes_desk.feedback.metrics import SuggestionMetrics
from hermes_desk.feedback.record import (
    AGENT_EVENTS,
    COUNT_KINDS,
    MAX_REASON_CHARS,
    FeedbackEvent,
    SuggestionEvent,
    report,
)
from hermes_desk.feedback.service import SuggestionFeedback
from hermes_desk.feedback.store import FeedbackStore, MemoryFeedbackStore, build_feedback_store

__all__ = [
    "AGENT_EVENTS",
    "COUNT_KINDS",
    "MAX_REASON_CHARS",
    "FeedbackEvent",
    "FeedbackStore",
    "MemoryFeedbackStore",
    "SuggestionEvent",
    "SuggestionFeedback",
    "SuggestionMetrics",
    "build_feedback_store",
    "report",
]
