"""After-contact and transfer summaries, and the disposition the agent confirms (spec R2).

:class:`SummaryService` gathers what happened (:func:`gather`), proposes a disposition from the
pack's list, writes the offline summary (:func:`offline_summary`) and, with a model chain, has
the model write it (:class:`SummaryWriter`, the offline one as fallback); summaries are kept in
:class:`SqliteSummaryStore` next to the session archive.
"""

from hermes_desk.summary.facts import ContactFacts, SummaryKind, gather, offline_summary, outcome_of
from hermes_desk.summary.service import MAX_SUMMARY_CHARS, SummaryService
from hermes_desk.summary.store import SqliteSummaryStore, Summary
from hermes_desk.summary.writer import SummaryWriter

__all__ = [
    "MAX_SUMMARY_CHARS",
    "ContactFacts",
    "SqliteSummaryStore",
    "Summary",
    "SummaryKind",
    "SummaryService",
    "SummaryWriter",
    "gather",
    "offline_summary",
    "outcome_of",
]
