"""Intent gating: each intent lists the tools it may call; out-of-scope intents call none.

The article's example: "is this tasty?" (这个东西好吃吗) must not trigger stock or product
look-ups. The gate answers "which tools may this turn call"; the executor refuses any other call
with ``not_allowed`` before anything else happens.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from hermes_desk.errors import PackError

__all__ = ["IntentGate"]


class IntentGate:
    def __init__(
        self, tools_by_intent: Mapping[str, Iterable[str]], out_of_scope: Iterable[str] = ()
    ) -> None:
        self._oos = frozenset(out_of_scope)
        self._tools = {
            intent: frozenset() if intent in self._oos else frozenset(tools)
            for intent, tools in tools_by_intent.items()
        }

    @classmethod
    def from_intents(cls, intents: Mapping[str, Mapping[str, Any]]) -> IntentGate:
        """From the ``intents`` mapping of a pack's ``intents.yaml``."""
        return cls(
            {name: list(spec.get("tools") or []) for name, spec in intents.items()},
            [name for name, spec in intents.items() if spec.get("out_of_scope")],
        )

    @classmethod
    def from_file(cls, path: str | Path) -> IntentGate:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        intents = data.get("intents")
        if not isinstance(intents, Mapping):
            raise PackError("must hold an 'intents' mapping", file=str(path), field="intents")
        return cls.from_intents(intents)

    def allowed(self, intent: str | None) -> frozenset[str]:
        """The tools ``intent`` may call; none for out-of-scope, unknown or no intent."""
        if intent is None:
            return frozenset()
        return self._tools.get(intent, frozenset())

    def is_out_of_scope(self, intent: str | None) -> bool:
        return intent is None or intent in self._oos or intent not in self._tools

    def check_tools(self, known: Collection[str], *, file: str) -> None:
        """Refuse a pack whose intents name tools that do not exist."""
        for intent, tools in self._tools.items():
            for tool in sorted(tools - set(known)):
                raise PackError(f"unknown tool '{tool}'", file=file, item=intent, field="tools")
