"""``hermes-desk context evaluate``: measure context trimming on annotated dialogues."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from hermes_desk.cli.settings_option import load_settings
from hermes_desk.errors import HermesError

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)


class Strategy(StrEnum):
    scored = "scored"
    recency = "recency"
    article = "article"


@app.command()
def evaluate(
    data: Annotated[
        Path,
        typer.Option(
            help="user_turns_*.jsonl (CrossWOZ format) with its dialogues_*.jsonl beside it",
            exists=True,
            dir_okay=False,
        ),
    ],
    budget_ratio: Annotated[
        float, typer.Option(min=0.01, max=1.0, help="budget as a share of the history's tokens")
    ] = 0.53,
    strategy: Annotated[
        Strategy,
        typer.Option(help="scored (default), or a baseline: recency only, the article's rules"),
    ] = Strategy.scored,
    limit: Annotated[
        int | None, typer.Option(min=1, help="evaluate the first N user turns")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    config: Annotated[Path | None, typer.Option(help="YAML settings file")] = None,
) -> None:
    """Trim each user turn's history to the budget; report token saving and origin recall."""
    from rich.progress import Progress

    from hermes_desk.sessions import ContextTrimmer, TrimWeights, build_token_counter
    from hermes_desk.sessions.context_eval import count_cases, evaluate_trimming

    settings = load_settings(config).sessions
    weights = {
        Strategy.scored: TrimWeights(),
        Strategy.recency: TrimWeights.recency_only(),
        Strategy.article: TrimWeights.article(),
    }[strategy]
    trimmer = ContextTrimmer(
        build_token_counter(settings.tokenizer_model),
        overlap_threshold=settings.overlap_threshold,
        anchor_neighbours=settings.anchor_neighbours,
        weights=weights,
    )
    try:
        total = count_cases(data) if limit is None else limit
        with Progress(transient=True, disable=as_json) as progress:
            task = progress.add_task("trimming", total=total)
            report = evaluate_trimming(
                data,
                trimmer,
                budget_ratio=budget_ratio,
                limit=limit,
                progress=lambda n: progress.advance(task, n),
            )
    except HermesError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    report["strategy"] = strategy.value
    if as_json:
        typer.echo(json.dumps(report, ensure_ascii=False))
        return
    _print_report(report)


def _print_report(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"context trimming ({report['strategy']}, {report['tokenizer']})")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("user turns evaluated", str(report["cases"]))
    table.add_row("budget", f"{report['budget_ratio']:.0%} of the history's tokens")
    table.add_row("tokens before → after", f"{report['tokens_before']} → {report['tokens_after']}")
    table.add_row("token saving", f"{report['token_saving']:.1%}")
    table.add_row("origin recall", f"{report['origin_recall']:.1%} of {report['origins']}")
    table.add_row(
        "origin recall (> 2 turns back)",
        f"{report['origin_recall_far']:.1%} of {report['origins_far']}",
    )
    table.add_row(
        "trim time p50 / p95", f"{report['trim_ms']['p50']:.3f} / {report['trim_ms']['p95']:.3f} ms"
    )
    if "estimate_error" in report:
        table.add_row("token estimate error vs tokenizer", f"{report['estimate_error']:+.1%}")
    Console().print(table)
