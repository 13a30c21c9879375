"""Actions: writes proposed to a human agent, approved, rejected or expired, executed once (X2).

See ``docs/actions.md`` for the proposal lifecycle and what the agent sees.
"""

from hermes_desk.actions.proposal import DECIDED, Proposal, ProposalStatus
from hermes_desk.actions.service import ActionService, needs_approval
from hermes_desk.actions.store import MemoryProposalStore, ProposalStore, build_proposal_store
from hermes_desk.actions.workflows import require_approvals

__all__ = [
    "DECIDED",
    "ActionService",
    "MemoryProposalStore",
    "Proposal",
    "ProposalStatus",
    "ProposalStore",
    "build_proposal_store",
    "needs_approval",
    "require_approvals",
]
