"""Evaluate context trimming on annotated dialogues (CrossWOZ format).

For every user turn, the history before it is trimmed to ``budget_ratio`` of its tokens. The
trimmer sees only the turns' roles and texts, as in production. The annotations are used only to
score: ``derived_state_value_origin_turn`` names, for each value of the dialogue state, the turn
that introduced it; origin recall is the share of those (history) turns the trim kept, overall
and for origins more than two turns back ("far").
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_desk.errors import NotFoundError, ValidationError
from hermes_desk.sessions.session import Turn
from hermes_desk.sessions.tokens import estimate_for_encoding
from hermes_desk.sessions.trimming import ContextTrimmer

__all__ = ["EvalCase", "count_cases", "evaluate_trimming", "load_cases"]

_ROLES = {"usr": "user", "sys": "agent", "user": "user", "agent": "agent", "system": "system"}


@dataclass(frozen=True, slots=True)
class EvalCase:
    """One user turn: the history before it, its text, and the origin turns of its state."""

    dialogue_id: str
    history: list[Turn]
    query: str
    origins: list[int]


def load_cases(path: str | Path) -> Iterator[EvalCase]:
    """Read ``user_turns_*.jsonl`` and the ``dialogues_*.jsonl`` beside it."""
    user_path = Path(path)
    if not user_path.is_file():
        raise NotFoundError(f"no such file: {user_path}")
    if not user_path.name.startswith("user_turns_"):
        raise ValidationError(
            f"{user_path}: expected a user_turns_*.jsonl file (one user turn per line, with its "
            "dialogues_*.jsonl beside it)"
            + (", not the dialogues file" if user_path.name.startswith("dialogues_") else "")
        )
    dialogues_path = user_path.with_name(user_path.name.replace("user_turns_", "dialogues_", 1))
    if not dialogues_path.is_file():
        raise NotFoundError(f"{user_path}: expected its dialogues file beside it: {dialogues_path}")
    dialogues: dict[str, list[Turn]] = {}
    with dialogues_path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                dialogues[str(record["dialogue_id"])] = [
                    Turn(role=_ROLES.get(t["role"], "user"), text=t["text"])  # type: ignore[arg-type]
                    for t in record["turns"]
                ]
            except (ValueError, KeyError, TypeError) as exc:
                raise ValidationError(
                    f"{dialogues_path}:{number}: not a dialogue record "
                    "({dialogue_id, turns: [{role, text}, ...]})"
                ) from exc
    with user_path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                turns = dialogues[str(record["dialogue_id"])]
                index = int(record["turn_idx"])
                origin_map: dict[str, Any] = record.get("derived_state_value_origin_turn") or {}
            except (KeyError, TypeError, ValueError) as exc:
                raise ValidationError(
                    f"{user_path}:{number}: not a user-turn record "
                    "({dialogue_id, turn_idx, text, derived_state_value_origin_turn})"
                ) from exc
            origins = [int(o) for o in origin_map.values() if o is not None and int(o) < index]
            yield EvalCase(str(record["dialogue_id"]), turns[:index], record["text"], origins)


def count_cases(path: str | Path) -> int:
    """How many user turns the file holds (for progress bars)."""
    with Path(path).open(encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())


def evaluate_trimming(
    path: str | Path,
    trimmer: ContextTrimmer,
    *,
    budget_ratio: float = 0.53,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Trim every case's history to ``budget_ratio`` of its tokens and score the result.

    Returns fractions in 0–1: ``token_saving`` (1 − kept/total tokens, summed over cases),
    ``origin_recall``, ``origin_recall_far`` (origins more than two turns back), and ``trim_ms``
    percentiles. ``estimate_error`` is the relative error of the dependency-free token estimate
    against the configured tokenizer over all texts.
    """
    if not 0 < budget_ratio <= 1:
        raise ValidationError("budget_ratio must be in (0, 1]")
    tokens_before = tokens_after = 0
    origins_total = origins_kept = far_total = far_kept = 0
    timings: list[float] = []
    cases = 0
    texts: set[str] = set()
    for case in load_cases(path):
        if limit is not None and cases >= limit:
            break
        if not case.history:
            continue
        cases += 1
        texts.update(turn.text for turn in case.history)
        budget = int(trimmer.count_tokens(case.history) * budget_ratio)
        start = time.perf_counter()
        result = trimmer.trim(case.history, case.query, budget)
        timings.append((time.perf_counter() - start) * 1000)
        tokens_before += result.tokens_before
        tokens_after += result.tokens_after
        kept = set(result.kept_indices)
        far_limit = len(case.history) - 2  # the query is turn len(history); "more than two back"
        for origin in case.origins:
            origins_total += 1
            origins_kept += origin in kept
            if origin < far_limit:
                far_total += 1
                far_kept += origin in kept
        if progress is not None:
            progress(1)
    timings.sort()
    report: dict[str, Any] = {
        "cases": cases,
        "budget_ratio": budget_ratio,
        "tokenizer": trimmer.counter.name,
        "tokens_before": tokens_before,
        "tokens_after": tokens_after,
        "token_saving": 1 - tokens_after / tokens_before if tokens_before else 0.0,
        "origins": origins_total,
        "origin_recall": origins_kept / origins_total if origins_total else 0.0,
        "origins_far": far_total,
        "origin_recall_far": far_kept / far_total if far_total else 0.0,
        "trim_ms": {
            "p50": _percentile(timings, 0.50),
            "p95": _percentile(timings, 0.95),
            "max": timings[-1] if timings else 0.0,
        },
    }
    if trimmer.counter.name != "estimate":
        estimate = estimate_for_encoding(trimmer.counter.name)
        exact = sum(trimmer.counter.count(t) for t in texts)
        guessed = sum(estimate.count(t) for t in texts)
        report["estimate_error"] = (guessed - exact) / exact if exact else 0.0
    return report


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    if len(sorted_values) == 1:
        return sorted_values[0]
    return statistics.quantiles(sorted_values, n=100, method="inclusive")[int(q * 100) - 1]
