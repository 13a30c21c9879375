"""``hermes-desk context evaluate`` on a small file in the CrossWOZ format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from hermes_desk.cli.context import app
from hermes_desk.config import SessionSettings
from hermes_desk.errors import NotFoundError
from hermes_desk.sessions import build_trimmer
from hermes_desk.sessions.context_eval import evaluate_trimming, load_cases

TURNS = [
    ("usr", "你好，我想找一家人均消费100-150元的川菜馆，要有包间。"),
    ("sys", "为您推荐蜀香阁，人均消费120元，有包间。"),
    ("usr", "好的，谢谢你。"),
    ("sys", "不客气，请问还有什么可以帮您？"),
    ("usr", "这家店周边有什么景点吗？"),
    ("sys", "附近有颐和园和圆明园，都很值得去。"),
    ("usr", "那颐和园的门票多少钱？"),
]


def _write(tmp_path: Path) -> Path:
    dialogue = {
        "dialogue_id": "1",
        "turns": [{"turn_idx": i, "role": r, "text": t} for i, (r, t) in enumerate(TURNS)],
    }
    (tmp_path / "dialogues_validation.jsonl").write_text(
        json.dumps(dialogue, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    lines = []
    for idx in (0, 2, 4, 6):
        origins = {"餐馆-人均消费=100-150元": 0, "餐馆-名称=蜀香阁": 1 if idx > 1 else None}
        if idx == 6:
            origins["景点-名称=颐和园"] = 6  # introduced by the query itself: not in history
        record = {"dialogue_id": "1", "turn_idx": idx, "text": TURNS[idx][1]}
        record["derived_state_value_origin_turn"] = origins
        lines.append(json.dumps(record, ensure_ascii=False))
    path = tmp_path / "user_turns_validation.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_cases_hold_history_query_and_past_origins(tmp_path: Path) -> None:
    cases = list(load_cases(_write(tmp_path)))
    assert [len(c.history) for c in cases] == [0, 2, 4, 6]
    assert cases[3].query == TURNS[6][1]
    assert sorted(cases[3].origins) == [0, 1]  # the query's own origin is not history
    assert [t.role for t in cases[1].history] == ["user", "agent"]


def test_report_figures_are_fractions(tmp_path: Path) -> None:
    report = evaluate_trimming(_write(tmp_path), build_trimmer(SessionSettings()), budget_ratio=0.5)
    assert report["cases"] == 3  # the first user turn has no history
    assert report["origins"] == 6  # 2 per case: 100-150元 (turn 0) and 蜀香阁 (turn 1)
    for key in ("token_saving", "origin_recall", "origin_recall_far"):
        assert 0 <= report[key] <= 1
    assert report["token_saving"] >= 0.4
    assert report["trim_ms"]["p50"] <= report["trim_ms"]["p95"]
    assert report["tokens_after"] <= report["tokens_before"] * 0.5


def test_missing_dialogues_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "user_turns_x.jsonl"
    path.write_text("{}\n", encoding="utf-8")
    with pytest.raises(NotFoundError, match=r"dialogues_x\.jsonl"):
        list(load_cases(path))


def test_cli_prints_one_json_object(tmp_path: Path) -> None:
    root = typer.Typer()
    root.add_typer(app, name="context")
    path = _write(tmp_path)
    result = CliRunner().invoke(
        root, ["context", "evaluate", "--data", str(path), "--budget-ratio", "0.5", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert {"token_saving", "origin_recall", "origin_recall_far", "trim_ms"} <= report.keys()
    assert {"p50", "p95"} <= report["trim_ms"].keys()
    table = CliRunner().invoke(root, ["context", "evaluate", "--data", str(path)])
    assert table.exit_code == 0 and "origin recall" in table.output
