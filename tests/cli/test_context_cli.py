"""``hermes-desk context evaluate`` names the file it was given and what is wrong with it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from hermes_desk.cli.context import app


def test_the_dialogues_file_given_instead_of_user_turns(tmp_path: Path) -> None:
    dialogues = tmp_path / "dialogues_validation.jsonl"
    dialogues.write_text(json.dumps({"dialogue_id": "1", "turns": []}) + "\n", "utf-8")
    result = CliRunner().invoke(app, ["--data", str(dialogues)])
    assert result.exit_code == 2
    assert f"{dialogues}: expected a user_turns_*.jsonl file" in result.output
    assert "not the dialogues file" in result.output


def test_user_turns_without_its_dialogues_file(tmp_path: Path) -> None:
    turns = tmp_path / "user_turns_x.jsonl"
    turns.write_text(json.dumps({"dialogue_id": "1", "turn_idx": 0, "text": "hi"}) + "\n", "utf-8")
    result = CliRunner().invoke(app, ["--data", str(turns)])
    assert result.exit_code == 2
    assert f"{turns}: expected its dialogues file beside it" in result.output
    assert "dialogues_x.jsonl" in result.output


def test_a_broken_dialogues_line_is_named(tmp_path: Path) -> None:
    (tmp_path / "user_turns_x.jsonl").write_text('{"dialogue_id": "1", "turn_idx": 0}\n', "utf-8")
    (tmp_path / "dialogues_x.jsonl").write_text("not json\n", "utf-8")
    result = CliRunner().invoke(app, ["--data", str(tmp_path / "user_turns_x.jsonl")])
    assert result.exit_code == 2
    assert "dialogues_x.jsonl:1: not a dialogue record" in result.output
