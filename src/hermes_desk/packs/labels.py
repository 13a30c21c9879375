"""Human-readable names for a pack's ids, in each of its languages (``labels.yaml``).

The console shows "订单状态 Order status" instead of ``order_status``, "等待客户输入 waiting for the
customer" instead of ``waiting_input``. Sections name what they label; intents, workflows,
steps, tools and slots must exist in the pack (a typo is a :class:`PackError` naming the file,
the section and the id), while ``statuses`` and ``terms`` are free (workflow, step, proposal and
breaker states; sentiment, alert kinds, severities, dispositions…). A pack without the file has
no labels, and the console shows its ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from hermes_desk.errors import PackError
from hermes_desk.packs.loader import Pack, _model, _yaml
from hermes_desk.packs.models import _Strict

__all__ = ["LABEL_SECTIONS", "Label", "PackLabels", "load_labels"]

#: The sections of ``labels.yaml``; the first five are checked against the pack.
LABEL_SECTIONS = ("intents", "workflows", "steps", "tools", "slots", "statuses", "terms")


class Label(_Strict):
    """One id's names: Chinese and English (both required, short)."""

    zh: str = Field(min_length=1, max_length=60)
    en: str = Field(min_length=1, max_length=60)


class _LabelsFile(_Strict):
    intents: dict[str, Label] = Field(default_factory=dict)
    workflows: dict[str, Label] = Field(default_factory=dict)
    steps: dict[str, Label] = Field(default_factory=dict)
    tools: dict[str, Label] = Field(default_factory=dict)
    slots: dict[str, Label] = Field(default_factory=dict)
    statuses: dict[str, Label] = Field(default_factory=dict)
    terms: dict[str, Label] = Field(default_factory=dict)


@dataclass(frozen=True)
class PackLabels:
    """The labels of one pack, by section then id."""

    pack: str
    languages: tuple[str, ...]
    sections: dict[str, dict[str, Label]] = field(default_factory=dict)

    def label(self, section: str, name: str, language: str = "zh") -> str:
        """The name of ``name`` in ``language``, or the id itself when it has none."""
        found = self.sections.get(section, {}).get(name)
        if found is None:
            return name
        return found.en if language == "en" else found.zh

    def to_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "languages": list(self.languages),
            "labels": {
                section: {name: label.model_dump() for name, label in sorted(items.items())}
                for section, items in self.sections.items()
            },
        }


def load_labels(pack: Pack) -> PackLabels:
    """Read ``labels.yaml`` from the pack folder (none: no labels) and check its ids."""
    languages = tuple(pack.manifest.languages)
    path = pack.root / "labels.yaml"
    if not path.exists():
        return PackLabels(pack.name, languages, {s: {} for s in LABEL_SECTIONS})
    parsed = _model(_LabelsFile, _yaml(path), path)
    sections = {s: dict(getattr(parsed, s)) for s in LABEL_SECTIONS}
    known = _known_ids(pack)
    for section, ids in known.items():
        for name in sections[section]:
            if name not in ids:
                raise PackError(f"labels an unknown {section[:-1]}", file=str(path), item=name,
                                field=section)  # fmt: skip
    return PackLabels(pack.name, languages, sections)


def _known_ids(pack: Pack) -> dict[str, set[str]]:
    steps = {
        step.name
        for definition in pack.workflows.values()
        for phase in getattr(definition, "phases", ())
        for step in phase.steps
    }
    slots = {slot for spec in pack.intents.values() for slot in spec.slots}
    return {
        "intents": set(pack.intents),
        "workflows": set(pack.workflows),
        "steps": steps,
        "tools": {spec.name for spec in pack.tool_specs},
        "slots": slots,
    }
