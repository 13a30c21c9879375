"""``/v1/workflows`` over real HTTP (uvicorn on loopback), with the in-process tools."""

from __future__ import annotations

import types
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from hermes_desk.api.errors import install_error_handlers
from hermes_desk.api.routes.workflows import router
from hermes_desk.config import Settings, WorkflowSettings
from hermes_desk.packs.loader import bundled_pack_path
from hermes_desk.testing.servers import serve_in_thread
from hermes_desk.workflows import SqliteSnapshotStore, load_workflow_dir

from .helpers import Tools, build


@pytest.fixture
def base_url(tmp_path: Path) -> Iterator[str]:
    tools = Tools()
    tools.behaviour["check_phone"] = lambda a: {"registered": True, "user_id": "u1001"}
    tools.behaviour["verify_sms_code"] = lambda a: {"valid": True}
    tools.behaviour["reset_password"] = lambda a: {"sent": True}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = SqliteSnapshotStore(tmp_path / "wf.db")
        definitions = load_workflow_dir(bundled_pack_path("ecommerce") / "workflows")
        settings = WorkflowSettings(retry_backoff_s=0)
        async with build(definitions, tools, store, settings) as service:
            app.state.runtime = types.SimpleNamespace(workflows=service, settings=Settings())
            yield
        await store.aclose()

    app = FastAPI(lifespan=lifespan)
    install_error_handlers(app)
    app.include_router(router)
    with serve_in_thread(app) as url:
        yield url


def test_start_feed_and_read_a_workflow(base_url: str) -> None:
    with httpx.Client(base_url=base_url) as client:
        started = client.post(
            "/v1/workflows",
            json={"name": "password_reset", "inputs": {"phone": "13800138000"}, "user_id": "u1"},
        )
        assert started.status_code == 201
        body = started.json()
        assert (body["status"], body["waiting_for"]) == ("waiting_input", "sms_code")
        fed = client.post(
            f"/v1/workflows/{body['id']}/input", json={"user_id": "u1", "slots": {"sms_code": "1"}}
        )
        assert fed.json()["status"] == "completed"
        view = client.get(f"/v1/workflows/{body['id']}", params={"user_id": "u1"}).json()
        other = client.get(f"/v1/workflows/{body['id']}", params={"user_id": "u2"})
    assert other.status_code == 404, "another customer's workflow is not found"
    assert view["status"] == "completed"
    steps = {s["name"]: s for s in view["steps"]}
    assert steps["reset_password"]["duration_ms"] is not None
    assert [p["name"] for p in view["phases"]] == [
        "pre_check",
        "challenge",
        "action",
        "post_update",
    ]
    assert view["snapshots"][0]["reason"] == "created"
    assert view["snapshots"][-1]["status"] == "completed"
    assert "13800138000" not in str(view)


def test_errors_are_json(base_url: str) -> None:
    with httpx.Client(base_url=base_url) as client:
        missing = client.get("/v1/workflows/wf_nope", params={"user_id": "u1"})
        unknown = client.post("/v1/workflows", json={"name": "nope", "inputs": {}, "user_id": "u1"})
        no_input = client.post(
            "/v1/workflows", json={"name": "password_reset", "inputs": {}, "user_id": "u1"}
        )
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert unknown.status_code == 404
    assert no_input.status_code == 422 and no_input.json()["error"]["field"] == "phone"
