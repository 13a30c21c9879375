"""Supervision: alerts raised by customer and agent lines and by the conversation, and the
supervisor's board of live sessions with their sentiment trend and alerts."""

from hermes_desk.supervision.alerts import Alert, AlertDetector, Severity, verification_failures
from hermes_desk.supervision.board import LiveSession, SupervisorBoard

__all__ = [
    "Alert",
    "AlertDetector",
    "LiveSession",
    "Severity",
    "SupervisorBoard",
    "verification_failures",
]
