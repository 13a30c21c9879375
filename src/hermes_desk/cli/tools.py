"""``hermes-desk tools validate PACK_OR_FILE`` and ``hermes-desk tools list [PACK]``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from hermes_desk.errors import PackError
from hermes_desk.tools import IntentGate, ToolSpec, load_openapi, load_tool_specs

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)


def _pack_dir(target: str) -> Path | None:
    path = Path(target)
    if path.is_dir():
        return path
    if path.exists():
        return None
    from importlib import resources

    bundled = Path(str(resources.files("hermes_desk") / "packs" / target))
    if bundled.is_dir():
        return bundled
    raise PackError("no such file, pack folder or bundled pack", file=target)


def _is_openapi(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
        data: Any = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "openapi" in data


def _load(target: str, base_url: str | None) -> tuple[list[ToolSpec], list[str]]:
    """The specs of a pack folder, a tools.yaml or an OpenAPI document, and notes to print."""
    notes: list[str] = []
    pack = _pack_dir(target)
    if pack is not None:
        specs = load_tool_specs(pack / "tools.yaml")
        intents = pack / "intents.yaml"
        if intents.exists():
            IntentGate.from_file(intents).check_tools({s.name for s in specs}, file=str(intents))
            notes.append(f"intents.yaml: every gated tool exists ({intents})")
        kb = pack / "kb"
        if kb.is_dir():
            from hermes_desk.tools import KnowledgeBase

            base = KnowledgeBase.from_dir(kb)
            notes.append(f"kb/: {len(base)} articles indexed")
            base.close()
        return specs, notes
    path = Path(target)
    if _is_openapi(path):
        loaded = load_openapi(path, base_url=base_url)
        notes.extend(f"skipped {name}: {why}" for name, why in loaded.skipped.items())
        return loaded.specs, notes
    return load_tool_specs(path), notes


BaseUrl = Annotated[
    str | None, typer.Option(help="base URL for an OpenAPI document with a relative server")
]


@app.command()
def validate(
    pack_or_file: Annotated[str, typer.Argument(help="pack folder/name, tools.yaml or OpenAPI")],
    base_url: BaseUrl = None,
) -> None:
    """Load and check tool specs; exit 1 naming the file, tool and field of the first problem."""
    try:
        specs, notes = _load(pack_or_file, base_url)
    except PackError as exc:
        typer.echo(f"invalid: {exc}", err=True)
        raise typer.Exit(1) from exc
    for spec in specs:
        typer.echo(f"ok  {spec.name}")
    for note in notes:
        typer.echo(f"    {note}")
    typer.echo(f"{len(specs)} tools valid")


@app.command("list")
def list_tools(
    pack_or_file: Annotated[str, typer.Argument(help="pack folder/name, tools.yaml or OpenAPI")] = (
        "ecommerce"
    ),
    as_json: Annotated[bool, typer.Option("--json", help="full specs as JSON")] = False,
    base_url: BaseUrl = None,
) -> None:
    """List tools: name, binding, time limit and description."""
    try:
        specs, _ = _load(pack_or_file, base_url)
    except PackError as exc:
        typer.echo(f"invalid: {exc}", err=True)
        raise typer.Exit(1) from exc
    if as_json:
        typer.echo(json.dumps([s.to_dict() for s in specs], ensure_ascii=False, indent=2))
        return
    for spec in specs:
        binding = spec.binding.describe()
        where = f"{binding.get('method', '')} {binding.get('url', binding['kind'])}".strip()
        timeout = f"{spec.timeout_s:g}s" if spec.timeout_s is not None else "default"
        typer.echo(f"{spec.name:<22} {timeout:>8}  {where}\n{'':<22} {spec.description}")
