from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from hermes_desk.cli.nlu import app

ROWS = [
    *(
        {"text": t, "intent": "order_status"}
        for t in ["我的订单到哪了", "查订单", "where is my order", "order status please"]
    ),
    *(
        {"text": t, "intent": "password_reset"}
        for t in ["忘记密码", "重置密码", "reset my password", "forgot password"]
    ),
    *(
        {"text": t, "intent": "oos"}
        for t in ["讲个笑话", "天气怎么样", "tell me a joke", "who are you"]
    ),
]


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), "utf-8")
    return path


def test_train_then_evaluate_json(tmp_path: Path) -> None:
    data = _write(tmp_path / "train.jsonl", ROWS)
    runner = CliRunner()
    result = runner.invoke(
        app, ["train", "--data", str(data), "--out", str(tmp_path / "m"), "--kind", "linear"]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        app, ["evaluate", "--model", str(tmp_path / "m"), "--data", str(data), "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for key in ("accuracy", "in_scope_accuracy", "macro_f1", "oos_recall"):
        assert 0.0 <= report[key] <= 1.0
    assert report["accuracy"] > 0.8
    assert report["threshold"] == 0.5


def test_evaluate_table_and_threshold_override(tmp_path: Path) -> None:
    data = _write(tmp_path / "train.jsonl", ROWS)
    runner = CliRunner()
    runner.invoke(
        app, ["train", "--data", str(data), "--out", str(tmp_path / "m"), "--kind", "linear"]
    )
    result = runner.invoke(
        app, ["evaluate", "--model", str(tmp_path / "m"), "--data", str(data), "--threshold", "1.0"]
    )
    assert result.exit_code == 0, result.output
    assert "oos recall=100.00%" in result.stdout
    assert "in-scope accuracy=0.00%" in result.stdout
    assert "password_reset" in result.stdout


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "x"}\n', "utf-8")
    result = CliRunner().invoke(app, ["train", "--data", str(bad), "--out", str(tmp_path / "m")])
    assert result.exit_code == 2
    assert "intent" in result.output
    result = CliRunner().invoke(
        app, ["evaluate", "--model", str(tmp_path / "none"), "--data", str(bad)]
    )
    assert result.exit_code == 2


def test_train_chooses_threshold_on_validation_and_evaluate_uses_it(tmp_path: Path) -> None:
    data = _write(tmp_path / "train.jsonl", ROWS)
    runner = CliRunner()
    args = ["train", "--data", str(data), "--out", str(tmp_path / "m"), "--kind", "linear"]
    # A floor no threshold can miss on its own training data: the rule takes the grid's top.
    result = runner.invoke(app, [*args, "--validation", str(data), "--min-in-scope", "0.0"])
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "m" / "meta.json").read_text("utf-8"))
    assert meta["oos_threshold"] == 0.9
    assert ">= 0" in meta["threshold_rule"]
    result = runner.invoke(
        app, ["evaluate", "--model", str(tmp_path / "m"), "--data", str(data), "--json"]
    )
    assert json.loads(result.stdout)["threshold"] == 0.9


def test_explicit_threshold_wins_over_validation(tmp_path: Path) -> None:
    data = _write(tmp_path / "train.jsonl", ROWS)
    out = tmp_path / "m"
    args = ["train", "--data", str(data), "--out", str(out), "--kind", "linear"]
    result = CliRunner().invoke(app, [*args, "--validation", str(data), "--threshold", "0.35"])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "meta.json").read_text("utf-8"))["oos_threshold"] == 0.35


def test_conversations_reads_them_as_the_service_does(tmp_path: Path) -> None:
    convs = tmp_path / "convs.jsonl"
    rows = [
        {"id": "a", "turns": [{"text": "我要退货，订单202405201234", "intent": "return_exchange"},
                              {"text": "202405201234", "intent": "return_exchange"}]},
        {"id": "b", "turns": [{"text": "我的快递到哪了", "intent": "logistics"},
                              {"text": "好的谢谢", "intent": "oos"}]},
    ]  # fmt: skip
    convs.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), "utf-8")
    result = CliRunner().invoke(app, ["conversations", "--data", str(convs), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(report) == {"context", "rules", "alone"}
    for mode in report.values():
        assert mode["conversations"] == 2 and len(mode["per_turn_accuracy"]) == 2
    # A bare order id carries the conversation's intent, read in context.
    assert report["context"]["per_turn_accuracy"][1] == 1.0
    assert report["context"]["per_turn_accuracy"][1] >= report["alone"]["per_turn_accuracy"][1]
    table = CliRunner().invoke(app, ["conversations", "--data", str(convs)])
    assert "2 conversations" in table.output and "context" in table.output

    convs.write_text('{"id": "x", "turns": []}\n', "utf-8")
    bad = CliRunner().invoke(app, ["conversations", "--data", str(convs)])
    assert bad.exit_code == 2 and ":1:" in bad.output
