"""Settings for commands: environment + optional YAML file, with a clean error on bad values."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import typer

from hermes_desk.config import Settings
from hermes_desk.errors import ConfigError

__all__ = ["load_settings", "require_ready", "show_progress", "user_model_cache"]


def load_settings(config: Path | None = None, **overrides: Any) -> Settings:
    try:
        return Settings.load(config, **overrides)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def require_ready(settings: Settings, *, bind: tuple[str, int] | None = None) -> None:
    """Exit 2 listing every problem start-up would meet (folders, pack, extras, stores and, with
    ``bind``, the port), before anything is trained or opened."""
    from hermes_desk.preflight import check_port, check_settings

    problems = check_settings(settings)
    if bind is not None:
        problems += check_port(*bind)
    if problems:
        for problem in problems:
            typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)


def show_progress() -> None:
    """Print the runtime's progress messages (e.g. the first training of the intent model) on
    stderr; per-turn events stay on their own logger."""
    logger = logging.getLogger("hermes_desk")
    if not any(getattr(h, "_hermes_progress", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
        handler._hermes_progress = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logging.getLogger("hermes_desk.events").setLevel(logging.WARNING)
    logging.getLogger("hermes_desk.access").setLevel(logging.WARNING)  # `serve` configures it


def user_model_cache() -> Path:
    """Where commands that run on a throw-away data folder keep trained intent models, so the
    next run loads them instead of training again."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "hermes-desk" / "models"
