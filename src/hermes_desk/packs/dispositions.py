"""The pack's dispositions: how a contact may end (``dispositions.yaml``).

Each disposition has an id, a label per pack language and, optionally, the outcome it is
proposed for (``when``): the summary proposes the disposition whose ``when`` matches what
happened in the conversation, and the agent confirms it or picks another from the list.
A pack without the file gets :data:`DEFAULT_DISPOSITIONS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "DEFAULT_DISPOSITIONS",
    "OUTCOMES",
    "Disposition",
    "DispositionList",
    "Outcome",
    "dispositions_file",
]

#: what the summary can tell about a contact, in the order it checks them
Outcome = Literal[
    "transferred", "escalated", "pending_customer", "unresolved", "resolved", "informational"
]
OUTCOMES: tuple[str, ...] = get_args(Outcome)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Disposition(_Strict):
    """One way a contact may end."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$")
    label: dict[str, str] = Field(description="language → label shown to the agent")
    when: Outcome | None = Field(None, description="the outcome this disposition is proposed for")

    def label_in(self, language: str) -> str:
        return self.label.get(language) or next(iter(self.label.values()), self.id)


class DispositionList(_Strict):
    """``dispositions.yaml``: the list and the one proposed when no outcome matches."""

    default: str
    dispositions: tuple[Disposition, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> DispositionList:
        ids = [d.id for d in self.dispositions]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"disposition ids {twice} appear more than once")
        if self.default not in ids:
            raise ValueError(f"default {self.default!r} is not one of the dispositions {ids}")
        outcomes = [d.when for d in self.dispositions if d.when is not None]
        shared = sorted({o for o in outcomes if outcomes.count(o) > 1})
        if shared:
            raise ValueError(f"outcomes {shared} are claimed by more than one disposition")
        for disposition in self.dispositions:
            if not disposition.label or not all(v.strip() for v in disposition.label.values()):
                raise ValueError(f"disposition {disposition.id!r} needs a non-empty label")
        return self

    @property
    def ids(self) -> list[str]:
        return [d.id for d in self.dispositions]

    def for_outcome(self, outcome: str) -> str:
        """The disposition proposed for ``outcome`` (the default when none claims it)."""
        return next((d.id for d in self.dispositions if d.when == outcome), self.default)

    def get(self, disposition_id: str) -> Disposition | None:
        return next((d for d in self.dispositions if d.id == disposition_id), None)

    def check_languages(self, languages: tuple[str, ...]) -> list[tuple[str, str]]:
        """(disposition id, missing language) for every label the pack's languages lack."""
        return [
            (d.id, lang) for d in self.dispositions for lang in languages if lang not in d.label
        ]


def _default() -> DispositionList:
    labels: dict[str, dict[str, str]] = {
        "resolved": {"zh": "已解决", "en": "Resolved"},
        "escalated": {"zh": "已升级", "en": "Escalated"},
        "pending_customer": {"zh": "待客户处理", "en": "Pending customer"},
        "transferred": {"zh": "已转接", "en": "Transferred"},
        "unresolved": {"zh": "未解决", "en": "Unresolved"},
        "informational": {"zh": "仅咨询", "en": "Information only"},
    }
    data: dict[str, Any] = {
        "default": "resolved",
        "dispositions": [{"id": k, "label": v, "when": k} for k, v in labels.items()],
    }
    return DispositionList.model_validate(data)


#: used when a pack has no ``dispositions.yaml``
DEFAULT_DISPOSITIONS = _default()


def dispositions_file(root: Path) -> Path:
    return root / "dispositions.yaml"
