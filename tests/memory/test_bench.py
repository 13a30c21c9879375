"""The memory benchmark runs end to end at a tiny scale (figures are not asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_desk.bench.memory import evaluate_keyfacts, run_memory_bench


def test_sqlite_bench_reports_every_figure(tmp_path: Path) -> None:
    lines: list[str] = []
    report = run_memory_bench(
        facts=400, users=40, lookups=30, writes=20, path=tmp_path / "b.db", progress=lines.append
    )
    assert report["facts"] == 400 and report["notes"]["lookups"] == 30
    assert set(report["writes"]) == {
        "wal_normal", "wal_normal_x4", "wal_full", "delete_normal", "delete_full",
        "wal_normal_2proc_x4", "wal_normal_existing_keys", "wal_normal_existing_keys_x4",
    }  # fmt: skip
    assert all(run["writes_per_s"] > 0 for run in report["writes"].values())
    assert set(report["wal_speedup_same_synchronous"]) == {"normal", "full"}
    assert lines and lines[0].startswith("sqlite: loading 400 facts")


def test_evaluate_keyfacts_on_a_labelled_file(tmp_path: Path) -> None:
    data = tmp_path / "eval.jsonl"
    rows = [
        {"text": "快递超过7天还没到", "key_fact": True, "lang": "zh"},
        {"text": "thanks", "key_fact": False, "lang": "en"},
    ]
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    report = evaluate_keyfacts(data)
    assert report["all"]["accuracy"] == 1.0 and report["zh"]["tp"] == 1


def test_importing_memory_loads_no_database_driver() -> None:
    code = (
        "import sys, hermes_desk.memory, hermes_desk.api.routes.memory, hermes_desk.cli.memory;"
        "print(sorted(m for m in ('psycopg', 'psycopg_pool') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.postgres
def test_postgres_bench_reports_every_figure(postgres_dsn: str) -> None:
    # postgres_dsn only proves the server runs; the bench makes and drops its own schema
    dsn = os.environ.get("HERMES_TEST_POSTGRES_DSN", "postgresql://127.0.0.1:5432/test")
    report = run_memory_bench(
        backend="postgres", facts=400, users=40, lookups=30, writes=20, dsn=dsn,
        progress=lambda _line: None,
    )  # fmt: skip
    assert report["facts"] == 400 and report["notes"]["lookups"] == 30
    assert set(report["writes"]) == {
        "synchronous_commit_off_x1", "synchronous_commit_off_x8",
        "synchronous_commit_on_x1", "synchronous_commit_on_x8",
        "synchronous_commit_off_2proc_x4", "synchronous_commit_off_x1_existing_keys",
        "synchronous_commit_off_x8_existing_keys",
    }  # fmt: skip
    assert report["writes"]["synchronous_commit_off_2proc_x4"]["writes"] == 20
    assert all(run["writes_per_s"] > 0 for run in report["writes"].values())


def test_every_labelled_set_is_scored_apart_with_what_is_remembered(tmp_path: Path) -> None:
    from hermes_desk.bench.memory import evaluate_keyfact_sets
    from hermes_desk.packs import bundled_pack_path

    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "keyfacts.yaml").write_text(
        (bundled_pack_path("ecommerce") / "keyfacts.yaml").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    rows = [
        # two signals but no rule reads a key: the filter says yes, nothing is remembered
        {"text": "I bought two shirts yesterday", "key_fact": False, "lang": "en"},
        # an explicit channel: one rule reads it on no other signal
        {"text": "SMS only please", "key_fact": True, "lang": "en", "intent": "oos"},
        {"text": "客服三次都没解决", "key_fact": True, "lang": "zh", "intent": "complaint"},
    ]
    (pack / "keyfacts_heldout.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8"
    )
    report = evaluate_keyfact_sets(pack)
    assert set(report) == {"keyfacts_heldout"}
    figures = report["keyfacts_heldout"]
    assert figures["en"]["fp"] == 1 and figures["en"]["fn"] == 1, "the filter alone"
    remembered = figures["remembered"]
    assert remembered["en"]["tp"] == 1 and remembered["en"]["fp"] == 0
    assert remembered["zh"]["tp"] == 1
    assert remembered["all"]["precision"] == 1.0 and remembered["all"]["recall"] == 1.0
