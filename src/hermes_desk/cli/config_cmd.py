"""``hermes-desk config``: show the effective settings, or check a settings file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
import yaml

from hermes_desk.cli.settings_option import load_settings

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True)


@app.command()
def show(
    config: Annotated[Path | None, typer.Option(help="YAML settings file")] = None,
) -> None:
    """Print the effective settings (defaults + YAML file + HERMES_* variables) as YAML."""
    settings = load_settings(config)
    typer.echo(
        yaml.safe_dump(settings.model_dump(mode="json"), allow_unicode=True, sort_keys=False)
    )


@app.command()
def check(
    config: Annotated[Path | None, typer.Argument(help="YAML settings file")] = None,
    stores: Annotated[
        bool, typer.Option(help="also connect to the Redis / PostgreSQL servers configured")
    ] = True,
) -> None:
    """Validate the settings and everything the service will use (folders, pack, extras, MCP
    commands, stores); exit 2 naming each bad setting."""
    settings = load_settings(config)
    from hermes_desk.preflight import check_settings

    problems = check_settings(settings, stores=stores)
    for problem in problems:
        typer.echo(f"error: {problem}", err=True)
    if problems:
        raise typer.Exit(2)
    typer.echo(f"{config or 'settings'}: ok")
