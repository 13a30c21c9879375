"""A minimal workflow service process: ``python -m hermes_desk.workflows.worker``.

Real parts only: the pack's workflows and tools (HTTP to the demo backend), SQLite snapshots on
disk, ``recover()`` at startup, the ``/v1/workflows`` routes. The kill test runs it (or
``hermes-desk serve``) and SIGKILLs it at random points.
"""

from __future__ import annotations

import argparse
import types
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI

from hermes_desk.config import ToolSettings, WorkflowSettings

__all__ = ["create_worker_app", "main"]


def create_worker_app(
    *,
    db_path: Path,
    backend_url: str,
    pack: str = "ecommerce",
    settings: WorkflowSettings | None = None,
    tool_settings: ToolSettings | None = None,
) -> FastAPI:
    import httpx

    from hermes_desk.api.errors import install_error_handlers
    from hermes_desk.api.routes.workflows import router
    from hermes_desk.events import LoggingSink
    from hermes_desk.packs.loader import bundled_pack_path
    from hermes_desk.tools import ToolExecutor, load_pack_tools
    from hermes_desk.workflows.definition import load_workflow_dir
    from hermes_desk.workflows.service import WorkflowService
    from hermes_desk.workflows.sqlite_snapshots import SqliteSnapshotStore
    from hermes_desk.workflows.tool_steps import ToolStepExecutor

    pack_dir = Path(pack) if Path(pack).is_dir() else bundled_pack_path(pack)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with httpx.AsyncClient() as client:
            registry, kb = load_pack_tools(
                pack_dir, variables={"backend_url": backend_url}, client=client
            )
            tools = ToolExecutor(registry, settings=tool_settings, events=LoggingSink())
            store = SqliteSnapshotStore(db_path)
            try:
                async with WorkflowService(
                    definitions=load_workflow_dir(pack_dir / "workflows"),
                    executor=ToolStepExecutor(tools),
                    store=store,
                    settings=settings,
                    events=LoggingSink(),
                ) as service:
                    await service.recover()
                    app.state.runtime = types.SimpleNamespace(workflows=service)
                    yield
            finally:
                await store.close()
                await tools.aclose()
                kb.close()

    app = FastAPI(title="Hermes Desk workflow worker", lifespan=lifespan)
    install_error_handlers(app)
    app.include_router(router)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hermes_desk.workflows.worker")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--db", type=Path, default=Path("./data/workflows.db"))
    parser.add_argument("--backend-url", default="http://127.0.0.1:8100")
    parser.add_argument("--pack", default="ecommerce")
    args = parser.parse_args(argv)

    import uvicorn

    app = create_worker_app(db_path=args.db, backend_url=args.backend_url, pack=args.pack)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
