"""``hermes-desk nlu``: train an intent model on a JSONL file and evaluate one on another.

Both take any JSONL of ``{"text", "intent", "slots"?}`` (label ``oos`` = out of scope);
``slots`` is an object or a list of spans (see :mod:`hermes_desk.nlu.examples`). A model trained
on data without an ``oos`` label has no out-of-scope threshold, and ``evaluate`` applies none.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Annotated

import typer

from hermes_desk.errors import HermesError

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)


def _fail(exc: HermesError) -> None:
    typer.echo(f"error: {exc.message}", err=True)
    raise typer.Exit(code=2)


@contextmanager
def _echo_warnings() -> Iterator[None]:
    """Print the warnings raised inside (e.g. a calibration workaround) as ``warning:`` lines."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        typer.echo(f"warning: {w.message}", err=True)


@app.command()
def train(
    data: Annotated[Path, typer.Option(help="training JSONL {text, intent}")],
    out: Annotated[Path, typer.Option(help="folder to write the model to")],
    kind: Annotated[str, typer.Option(help="ensemble | linear | mlp | crf")] = "ensemble",
    threshold: Annotated[
        float | None,
        typer.Option(
            help="out-of-scope threshold stored with the model (default: chosen on "
            "--validation, else the nlu.oos_threshold setting; none when the training data "
            "has no 'oos' label)"
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
    from hermes_desk.nlu import OOS, build_classifier, load_examples
    from hermes_desk.nlu.classifier import training_threads
    from hermes_desk.nlu.threshold import choose_threshold, save_threshold

    try:
        examples = load_examples(data)
        valid = load_examples(validation) if validation is not None else None
        classifier = build_classifier(kind)
        typer.echo(f"training {kind} on {len(examples)} examples from {data} …", err=True)
        with _echo_warnings(), training_threads():
            classifier.fit([e.text for e in examples], [e.intent for e in examples])
        classifier.save(out)
        if threshold is None and not any(e.intent == OOS for e in examples):
            typer.echo(
                f"no '{OOS}' label in {data}: no out-of-scope threshold stored "
                "(evaluate applies none; pass --threshold to set one)",
                err=True,
            )
            save_threshold(out, None, examples=len(examples))
        elif threshold is None and valid is not None:
            choice = choose_threshold(classifier, valid, min_in_scope_accuracy=min_in_scope)
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
    today: Annotated[
        str | None,
        typer.Option(
            help="YYYY-MM-DD: the day relative dates in the data (明天, next Friday) are "
            "resolved against when scoring slots (default: today)"
        ),
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="YAML settings file (its pack's slot extractors)")
    ] = None,
) -> None:
    """Accuracy, in-scope accuracy, macro-F1, per-intent P/R/F1, oos recall, confusions,
    latency; slot P/R/F1 and date-value accuracy when the data has slots."""
    from rich.console import Console
    from rich.progress import Progress

    from hermes_desk.cli.settings_option import load_settings
    from hermes_desk.config import NluSettings
    from hermes_desk.nlu import evaluate as run_evaluation
    from hermes_desk.nlu import load_classifier, load_examples
    from hermes_desk.nlu.slot_eval import extractor_for, score_slots
    from hermes_desk.nlu.threshold import model_threshold
    from hermes_desk.packs import load_pack

    day = _parse_day(today)
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
        rules = load_pack(load_settings(config).service.pack).slot_rules
        slots = score_slots(examples, extractor_for(rules, day), day)
    except HermesError as exc:
        _fail(exc)
    if as_json:
        figures = report.to_dict()
        if slots is not None:
            figures["slots"] = slots.to_dict()
        typer.echo(json.dumps(figures, ensure_ascii=False))
        return
    _render(report)
    if slots is not None:
        _render_slots(slots)


def _parse_day(text: str | None) -> date:
    if text is None:
        return date.today()
    try:
        return date.fromisoformat(text)
    except ValueError:
        typer.echo(f"error: --today must be a date as YYYY-MM-DD, not {text!r}", err=True)
        raise typer.Exit(code=2) from None


@app.command()
def conversations(
    data: Annotated[
        Path, typer.Option(help="JSONL of {id, turns: [{text, intent, slots?}, ...]} conversations")
    ],
    config: Annotated[Path | None, typer.Option(help="YAML settings file")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    today: Annotated[
        str | None,
        typer.Option(help="YYYY-MM-DD that relative dates in labelled slots mean (default today)"),
    ] = None,
) -> None:
    """Intent accuracy per turn position on scripted conversations, read as the service reads
    them: the configured pack's model (classifier + context model), the dialogue state's rules
    alone, and the classifier on each turn alone. When turns label ``slots`` (the dialogue
    state's values after the turn: ids resolved, carried, normalised), their accuracy too."""
    from hermes_desk.cli.settings_option import load_settings, show_progress
    from hermes_desk.nlu import evaluate_conversation_modes, load_conversations
    from hermes_desk.nlu.slot_eval import score_conversation_slots
    from hermes_desk.packs import load_pack
    from hermes_desk.runtime import load_intent_model

    settings = load_settings(config)
    day = _parse_day(today)
    show_progress()
    try:
        convs = load_conversations(data)
        pack = load_pack(settings.service.pack)
        reader = load_intent_model(pack, settings)
        reports = evaluate_conversation_modes(reader, convs, threshold=settings.nlu.oos_threshold)
    except HermesError as exc:
        _fail(exc)
    slots = score_conversation_slots(convs, pack.slot_rules, day)
    if as_json:
        figures: dict[str, object] = {k: r.to_dict() for k, r in reports.items()}
        if slots is not None:
            figures["slots"] = slots.to_dict()
        typer.echo(json.dumps(figures, ensure_ascii=False))
        return
    typer.echo(f"{len(convs)} conversations, accuracy per turn position")
    for mode, report in reports.items():
        turns = " / ".join(f"{a:.1%}" for a in report.per_turn_accuracy)
        typer.echo(f"  {mode:8s} {turns}  (all {report.accuracy:.1%})")
    if slots is not None:
        per = ", ".join(
            f"{name} {s['accuracy']:.1%} ({int(s['support'])})"
            for name, s in slots.per_slot.items()
        )
        typer.echo(
            f"  slots    {slots.accuracy:.1%} of {slots.labelled} labelled values "
            f"(relative to {day.isoformat()}): {per}"
        )


def _render(report: object) -> None:
    from rich.console import Console
    from rich.table import Table

    from hermes_desk.nlu import EvaluationReport

    assert isinstance(report, EvaluationReport)
    console = Console()
    oos = "n/a" if report.oos_recall is None else f"{report.oos_recall:.2%}"
    threshold = report.threshold or "none"
    console.print(
        f"n={report.n}  threshold={threshold}  accuracy={report.accuracy:.2%}  "
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


def _render_slots(report: object) -> None:
    from rich.console import Console
    from rich.table import Table

    from hermes_desk.nlu.slot_eval import SlotReport

    assert isinstance(report, SlotReport)
    console = Console()
    total = report.overall
    dates = "n/a" if report.date_accuracy is None else f"{report.date_accuracy:.2%}"
    console.print(
        f"slots: {report.utterances} utterances with slots  precision={total.precision:.2%}  "
        f"recall={total.recall:.2%}  F1={total.f1:.3f}  date-value accuracy={dates} "
        f"({report.dates} dates, relative to {report.today})"
    )
    table = Table("slot", "precision", "recall", "F1", "support")
    for name, s in report.per_slot.items():
        table.add_row(name, f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}", str(s.support))
    console.print(table)
