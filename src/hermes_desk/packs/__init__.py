"""Domain packs: the business data the engine runs (intents, examples, tools, replies…)."""

from hermes_desk.packs.dispositions import Disposition, DispositionList
from hermes_desk.packs.labels import Label, PackLabels, load_labels
from hermes_desk.packs.loader import (
    OUT_OF_SCOPE,
    Pack,
    bundled_pack_path,
    load_dispositions,
    load_pack,
)
from hermes_desk.packs.models import ComplianceRule, ComplianceRules, Example, IntentSpec

__all__ = [
    "OUT_OF_SCOPE",
    "ComplianceRule",
    "ComplianceRules",
    "Disposition",
    "DispositionList",
    "Example",
    "IntentSpec",
    "Label",
    "Pack",
    "PackLabels",
    "bundled_pack_path",
    "load_dispositions",
    "load_labels",
    "load_pack",
]
