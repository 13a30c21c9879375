"""``hermes-desk nlu``: train an intent model on a JSONL file and evaluate one on another.

Both take any JSONL of ``{"text", "intent", "slots"?}`` (label ``oos`` = out of scope).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from hermes_desk.errors import HermesError

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)


def _fail(exc: HermesError) -> None:
    typer.echo(f"error: {exc.message}", err=True)
    raise typer.Exit(code=2)


@app.command()
def train(
    data: Annotated[Path, typer.Option(help="training JSONL {text, intent}")],
    out: Annotated[Path, typer.Option(help="folder to write the model to")],
    kind: Annotated[str, typer.Option(help="ensemble | linear | mlp | crf")] = "ensemble",
    threshold: Annotated[
        float | None,
        typer.Option(
            help="out-of-scope threshold stored with the model (default: chosen on "
            "--validation, else the nlu.oos_threshold setting)"
        ),
    ] = None,
    validation: Annotated[
        Path | None,
        typer.Option(
            help="validation JSONL: store the largest threshold whose in-scope accuracy "
            "there is >= --min-in-scope"
        ),
    ] = None,
    min_in_scope: Annotated[
        float, typer.Option(help="in-scope accuracy floor of the threshold rule")
    ] = 0.91,
) -> None:
    """Train an intent classifier and save it to OUT (with its out-of-scope threshold)."""
    from hermes_desk.config import NluSettings
    from hermes_desk.nlu import build_classifier, load_examples
    from hermes_desk.nlu.threshold import choose_threshold, save_threshold

    try:
        examples = load_examples(data)
        classifier = build_classifier(kind)
        typer.echo(f"training {kind} on {len(examples)} examples from {data} …", err=True)
        classifier.fit([e.text for e in examples], [e.intent for e in examples])
        classifier.save(out)
        if threshold is None and validation is not None:
            choice = choose_threshold(
                classifier, load_examples(validation), min_in_scope_accuracy=min_in_scope
            )
            typer.echo(f"threshold {choice.threshold} ({choice.rule})", err=True)
            save_threshold(out, choice, examples=len(examples))
        else:
            th = NluSettings().oos_threshold if threshold is None else threshold
            save_threshold(out, th, examples=len(examples))
    except HermesError as exc:
        _fail(exc)
    typer.echo(f"saved {kind} model to {out}")


@app.command()
def evaluate(
    model: Annotated[Path, typer.Option(help="folder written by 'nlu train'")],
    data: Annotated[Path, typer.Option(help="evaluation JSONL {text, intent}")],
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    threshold: Annotated[
        float | None,
        typer.Option(help="out-of-scope threshold (default: the model's; 0 = none)"),
    ] = None,
) -> None:
    """Accuracy, in-scope accuracy, macro-F1, per-intent P/R/F1, oos recall, confusions,
    latency."""
    from rich.console import Console
    from rich.progress import Progress

    from hermes_desk.config import NluSettings
    from hermes_desk.nlu import evaluate as run_evaluation
    from hermes_desk.nlu import load_classifier, load_examples
    from hermes_desk.nlu.threshold import model_threshold

    try:
        classifier = load_classifier(model)
        examples = load_examples(data)
        th = (
            threshold
            if threshold is not None
            else model_threshold(model, NluSettings().oos_threshold)
        )
        # The bar goes to stderr so that --json output on stdout stays one clean object.
        console = Console(stderr=True)
        with Progress(console=console, transient=True, disable=len(examples) < 200) as bar:
            task = bar.add_task("evaluating", total=len(examples))
            report = run_evaluation(
                classifier, examples, threshold=th, progress=lambda n: bar.advance(task, n)
            )
    except HermesError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), ensure_ascii=False))
        return
    _render(report)


@app.command()
def conversations(
    data: Annotated[
        Path, typer.Option(help="JSONL of {id, turns: [{text, intent}, ...]} conversations")
    ],
    config: Annotated[Path | None, typer.Option(help="YAML settings file")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Intent accuracy per turn position on scripted conversations, read as the service reads
    them: the configured pack's model (classifier + context model), the dialogue state's rules
    alone, and the classifier on each turn alone."""
    from hermes_desk.cli.settings_option import load_settings, show_progress
    from hermes_desk.nlu import evaluate_conversation_modes, load_conversations
    from hermes_desk.packs import load_pack
    from hermes_desk.runtime import load_intent_model

    settings = load_settings(config)
    show_progress()
    try:
        convs = load_conversations(data)
        reader = load_intent_model(load_pack(settings.service.pack), settings)
        reports = evaluate_conversation_modes(reader, convs, threshold=settings.nlu.oos_threshold)
    except HermesError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps({k: r.to_dict() for k, r in reports.items()}, ensure_ascii=False))
        return
    typer.echo(f"{len(convs)} conversations, accuracy per turn position")
    for mode, report in reports.items():
        turns = " / ".join(f"{a:.1%}" for a in report.per_turn_accuracy)
        typer.echo(f"  {mode:8s} {turns}  (all {report.accuracy:.1%})")


def _render(report: object) -> None:
    from rich.console import Console
    from rich.table import Table

    from hermes_desk.nlu import EvaluationReport

    assert isinstance(report, EvaluationReport)
    console = Console()
    oos = "n/a" if report.oos_recall is None else f"{report.oos_recall:.2%}"
    console.print(
        f"n={report.n}  threshold={report.threshold}  accuracy={report.accuracy:.2%}  "
        f"in-scope accuracy={report.in_scope_accuracy:.2%}  macro-F1={report.macro_f1:.3f}  "
        f"oos recall={oos}"
    )
    lat = report.latency_ms
    console.print(f"latency per utterance: p50 {lat['p50']:.3f} ms, p95 {lat['p95']:.3f} ms")
    table = Table("intent", "precision", "recall", "F1", "support")
    for name, s in report.per_intent.items():
        table.add_row(name, f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}", str(s.support))
    console.print(table)
    if report.confusions:
        confusions = Table("expected", "predicted", "count", title="top confusions")
        for expected, predicted, count in report.confusions:
            confusions.add_row(expected, predicted, str(count))
        console.print(confusions)
