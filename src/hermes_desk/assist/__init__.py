"""One customer turn: read → decide → act → remember → suggest → persist.

See :mod:`hermes_desk.assist.pipeline` for the stages and :mod:`.records` for what each returns.
"""

from hermes_desk.assist.decide import decide
from hermes_desk.assist.pipeline import Assistant, check_text
from hermes_desk.assist.read import language_of
from hermes_desk.assist.records import (
    Acting,
    Lookup,
    Plan,
    ProposedWrite,
    Reading,
    Remembered,
    Suggestion,
    TurnOutcome,
)
from hermes_desk.assist.suggest import Responder

__all__ = [
    "Acting",
    "Assistant",
    "Lookup",
    "Plan",
    "ProposedWrite",
    "Reading",
    "Remembered",
    "Responder",
    "Suggestion",
    "TurnOutcome",
    "check_text",
    "decide",
    "language_of",
]
