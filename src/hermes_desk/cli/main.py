"""``hermes-desk``: serve, demo, chat, and the command groups of each module."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hermes_desk import __version__
from hermes_desk.cli import bench, config_cmd, context, mcp, memory, nlu, tools
from hermes_desk.cli.conversation import chat, demo
from hermes_desk.cli.settings_option import load_settings, show_progress

__all__ = ["app", "main"]

app = typer.Typer(
    name="hermes-desk",
    help="Hermes Desk: an agent runtime for customer service.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(config_cmd.app, name="config", help="Show or check settings.")
app.add_typer(nlu.app, name="nlu", help="Train and evaluate intent classifiers.")
app.add_typer(context.app, name="context", help="Evaluate context trimming.")
app.add_typer(tools.app, name="tools", help="Validate and list tool specs.")
app.add_typer(memory.app, name="memory", help="Show and review customer memory.")
app.add_typer(mcp.app, name="mcp", help="Model Context Protocol server.")
app.add_typer(bench.app, name="bench", help="Benchmarks (figures for docs/benchmarks.md).")
app.command(help="Run a scripted Chinese conversation, printed turn by turn.")(demo)
app.command(help="Talk to the assistant interactively (offline by default).")(chat)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="bind address")] = None,
    port: Annotated[int | None, typer.Option(help="port")] = None,
    config: Annotated[Path | None, typer.Option(help="YAML settings file")] = None,
    with_backend: Annotated[
        bool, typer.Option("--with-backend", help="start the demo business backend too")
    ] = False,
) -> None:
    """Serve the API (and the demo backend with --with-backend)."""
    import uvicorn

    from hermes_desk.api.app import create_app
    from hermes_desk.cli._backend import demo_backend_running

    settings = load_settings(config)
    show_progress()
    bind_host = host or settings.service.host
    bind_port = port or settings.service.port

    def run() -> None:
        typer.echo(f"Hermes Desk on http://{bind_host}:{bind_port} (docs at /docs)")
        uvicorn.run(create_app(settings), host=bind_host, port=bind_port, log_level="info")

    if with_backend:
        with demo_backend_running(settings.service.backend_url) as url:
            typer.echo(f"demo business backend on {url}")
            run()
    else:
        run()


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main() -> None:
    app()
