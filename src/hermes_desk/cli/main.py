"""``hermes-desk``: serve, demo, chat, and the command groups of each module."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hermes_desk import __version__
from hermes_desk.cli import bench, config_cmd, context, mcp, memory, nlu, tools
from hermes_desk.cli.conversation import chat, demo
from hermes_desk.cli.settings_option import load_settings, require_ready, show_progress

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
    reuse_backend: Annotated[
        bool,
        typer.Option(
            "--reuse-backend",
            help="with --with-backend: use a demo backend already answering on "
            "service.backend_url (keeping its state) instead of refusing to start",
        ),
    ] = False,
) -> None:
    """Serve the API (and the demo backend with --with-backend).

    SIGTERM and SIGINT stop the service and the demo backend it started. A demo backend already
    on the port is refused unless --reuse-backend; anything else there is refused (exit 2),
    before the intent model is loaded.
    """
    import uvicorn

    from hermes_desk.api.access_log import log_config
    from hermes_desk.api.app import create_app
    from hermes_desk.api.worker_tuning import lean_log_records
    from hermes_desk.cli._backend import (
        BackendPortError,
        StopRequested,
        demo_backend_running,
        stop_on_signals,
    )

    settings = load_settings(config)
    show_progress()
    bind_host = host or settings.service.host
    bind_port = port or settings.service.port
    require_ready(settings, bind=(bind_host, bind_port))

    def run() -> None:
        typer.echo(f"Hermes Desk on http://{bind_host}:{bind_port} (docs at /docs)")
        lean_log_records()
        # Event streams (the supervisor feed) stay open: on shutdown, requests get as long as
        # their time limit to finish, then the rest are closed.
        uvicorn.run(
            create_app(settings, settle_gc=True),
            host=bind_host,
            port=bind_port,
            log_level="info",
            timeout_graceful_shutdown=max(1, int(settings.service.request_timeout_s)),
            timeout_keep_alive=max(1, int(settings.service.keep_alive_s)),
            # The service logs requests itself (service.access_log), without query strings
            # (spec D3): uvicorn's own access log prints them.
            access_log=False,
            log_config=log_config(),
        )

    try:
        with stop_on_signals():
            if with_backend:
                backend = settings.service.backend_url
                with demo_backend_running(backend, reuse=reuse_backend) as url:
                    typer.echo(f"demo business backend on {url}")
                    run()
            else:
                run()
    except BackendPortError as exc:
        typer.echo(f"error: service.backend_url: {exc}", err=True)
        raise typer.Exit(2) from exc
    except StopRequested as stop:
        typer.echo(f"stopped ({stop})", err=True)


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main() -> None:
    app()
