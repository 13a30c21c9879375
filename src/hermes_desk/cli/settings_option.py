"""Settings for commands: environment + optional YAML file, with a clean error on bad values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from hermes_desk.config import Settings
from hermes_desk.errors import ConfigError

__all__ = ["load_settings"]


def load_settings(config: Path | None = None, **overrides: Any) -> Settings:
    try:
        return Settings.load(config, **overrides)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
