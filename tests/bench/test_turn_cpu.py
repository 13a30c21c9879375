"""The turn-CPU driver: a few conversations' turns on a real worker, and the plan behind them.
Nothing here looks at a time or a CPU figure's size."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_desk.bench.conversations import CODE, MIX
from hermes_desk.bench.load_cluster import make_customers
from hermes_desk.bench.turn_cpu import plan_conversations, run_turn_cpu
from hermes_desk.cli.bench import app


def test_the_plan_gives_each_conversation_its_own_customer_and_the_article_mix() -> None:
    _, customers = make_customers(400)
    plan = plan_conversations(customers, 400, seed=3)
    assert len({p.user for p in plan}) == 400, "no two conversations share a customer"
    kinds = Counter(p.kind for p in plan)
    assert set(kinds) == {kind for kind, _ in MIX}
    assert kinds["order"] > kinds["password_reset"] > kinds["complaint"]
    assert all(2 <= len(p.lines) <= 6 and CODE not in p.lines for p in plan)
    assert plan == plan_conversations(customers, 400, seed=3), "the same seed, the same plan"


def test_more_conversations_than_customers_is_refused() -> None:
    _, customers = make_customers(3)
    with pytest.raises(ValueError, match="need as many customers"):
        plan_conversations(customers, 4)


@pytest.mark.slow
def test_every_measured_turn_is_answered_and_counted(tmp_path: Path, pack_model_dir: Path) -> None:
    figures = run_turn_cpu(
        conversations=12, clients=3, warmup=2, model_dir=pack_model_dir, workdir=tmp_path,
        progress=lambda line: None,
    )  # fmt: skip
    assert figures["turn_errors"] == 0, figures["error_examples"]
    plan = plan_conversations(make_customers(14)[1], 14)[2:]
    assert figures["turns_answered"] == sum(len(p.lines) for p in plan)
    assert figures["worker_cpu_s"] > 0
    assert figures["cpu_ms_per_turn"] is not None
    assert sum(figures["turns_by_kind"].values()) == figures["turns_answered"]


@pytest.mark.parametrize(
    ("args", "named"),
    [(["--stores", "sqlite"], "--stores"), (["--conversations", "0"], "one conversation")],
)
def test_the_command_refuses_what_it_cannot_run_before_starting_anything(
    args: list[str], named: str
) -> None:
    result = CliRunner().invoke(app, ["turn-cpu", *args])
    assert result.exit_code == 2
    assert named in result.output
