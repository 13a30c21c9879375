"""``hermes-desk memory`` commands on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from typer.testing import CliRunner

from hermes_desk.cli.memory import app
from hermes_desk.clock import SystemClock
from hermes_desk.config import MemorySettings
from hermes_desk.memory import CandidateFact, MemoryService, SqliteMemoryStore

runner = CliRunner()


def seed(db: Path) -> dict[str, str]:
    async def main() -> dict[str, str]:
        service = MemoryService(SqliteMemoryStore.open(db), MemorySettings(), clock=SystemClock())
        try:
            stored = await service.remember("default", "alice", CandidateFact("k", 1, 0.9), "s1")
            pending = await service.propose("default", "alice", "supports_alipay", True, 0.8)
            assert stored.fact is not None
            return {"active": stored.fact.id, "pending": pending.id}
        finally:
            await service.close()

    return anyio.run(main)


def test_show_review_and_tags(tmp_path: Path) -> None:
    db = tmp_path / "hermes.db"
    ids = seed(db)
    shown = runner.invoke(app, ["show", "alice", "--db", str(db), "--json"])
    assert shown.exit_code == 0, shown.output
    assert [n["key"] for n in json.loads(shown.output)] == ["k"]
    assert "nothing remembered" in runner.invoke(app, ["show", "bob", "--db", str(db)]).output

    refused = runner.invoke(app, ["approve", ids["pending"], "--user", "bob", "--db", str(db)])
    assert refused.exit_code == 1 and "no memory fact" in refused.output
    done = runner.invoke(app, ["approve", ids["pending"], "--user", "alice", "--db", str(db)])
    assert done.exit_code == 0 and "→ active" in done.output
    edited = runner.invoke(
        app, ["edit", ids["active"], '{"n": 2}', "--user", "alice", "--db", str(db), "--json"]
    )
    assert json.loads(edited.output)["value"] == {"n": 2}
    assert (
        runner.invoke(app, ["reject", ids["active"], "--user", "alice", "--db", str(db)]).exit_code
        == 0
    )
    listed = runner.invoke(app, ["show", "alice", "--all", "--db", str(db)])
    assert "rejected" in listed.output and "active" in listed.output
    assert (
        runner.invoke(app, ["delete", ids["active"], "--user", "alice", "--db", str(db)]).exit_code
        == 0
    )
    assert (
        ids["active"] not in runner.invoke(app, ["show", "alice", "--all", "--db", str(db)]).output
    )
    assert "(no tags)" in runner.invoke(app, ["tags", "alice", "--db", str(db)]).output
    missing = runner.invoke(app, ["tags", "alice", "--approve", "nope", "--db", str(db)])
    assert missing.exit_code == 1
    assert "archived: 0" in runner.invoke(app, ["sweep", "--db", str(db)]).output
