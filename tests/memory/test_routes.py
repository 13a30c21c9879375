"""The memory routes over real HTTP; another user or tenant reaches nothing through any path."""

from __future__ import annotations

import types
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from hermes_desk.api.errors import install_error_handlers
from hermes_desk.api.routes.memory import router
from hermes_desk.config import Settings
from hermes_desk.memory import CandidateFact, MemoryService
from hermes_desk.testing import FakeClock
from hermes_desk.testing.servers import serve_in_thread

pytestmark = pytest.mark.anyio

HOUR = 3600.0


# Two tenants, told apart by their API keys as in the service.
DEFAULT_KEY = "key-of-the-default-tenant"
OTHER_KEY = "key-of-the-other-tenant"


def make_app(service: MemoryService) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(router)
    settings = Settings(service={"api_keys": {DEFAULT_KEY: "default", OTHER_KEY: "other"}})
    app.state.runtime = types.SimpleNamespace(memory=service, settings=settings)
    return app


@pytest.fixture
async def client(service: MemoryService) -> AsyncIterator[httpx.AsyncClient]:
    with serve_in_thread(make_app(service)) as url:
        async with httpx.AsyncClient(base_url=url, headers={"X-API-Key": DEFAULT_KEY}) as http:
            yield http


async def seed(service: MemoryService, clock: FakeClock) -> dict[str, str]:
    ids = {}
    for text, intent in [
        ("我的快递已经超过7天了还没到，太气人了", "logistics"),
        ("不要给我打电话", None),
    ]:
        [done] = await service.observe("default", "alice", text, intent=intent, source_session="s1")
        assert done.fact is not None
        ids[done.fact.key] = done.fact.id
    weak = await service.remember(
        "default", "alice", CandidateFact("logistics_delay_days", 3, 0.2), "s2"
    )
    assert weak.fact is not None and weak.kind == "conflict"
    ids["conflict"] = weak.fact.id
    ids["pending"] = (await service.propose("default", "alice", "supports_alipay", True, 0.8)).id
    await service.remember(
        "default", "alice", CandidateFact("contact_preference_no_sms", True, 0.5)
    )
    clock.advance(30 * HOUR)  # the 0.5 fact falls below 0.3 and becomes a tag candidate
    await service.sweep_decay()
    return ids


async def test_notes_memories_review_and_tags(
    service: MemoryService, fake_clock: FakeClock, client: httpx.AsyncClient
) -> None:
    ids = await seed(service, fake_clock)
    notes = (await client.get("/v1/users/alice/notes")).json()
    assert [n["key"] for n in notes["notes"]] == [
        "contact_preference_no_calls",
        "logistics_delay_days",
    ]
    assert notes["notes"][1]["text"] == "物流已超过 7 天"
    assert notes["notes"][1]["age_s"] == 30 * HOUR
    assert notes["notes"][1]["source_session"] == "s1"

    facts = (await client.get("/v1/users/alice/memories")).json()["facts"]
    assert sorted(f["status"] for f in facts) == [
        "active",
        "active",
        "archived",
        "conflict",
        "pending",
    ]
    pending = (await client.get("/v1/users/alice/memories", params={"status": "pending"})).json()
    assert [f["id"] for f in pending["facts"]] == [ids["pending"]]

    approved = await client.post(
        f"/v1/users/alice/memories/{ids['pending']}/review", json={"action": "approve"}
    )
    assert approved.status_code == 200 and approved.json()["status"] == "active"
    edited = (
        await client.post(
            f"/v1/users/alice/memories/{ids['conflict']}/review",
            json={"action": "edit", "value": 8},
        )
    ).json()
    assert edited["value"] == 8 and edited["status"] == "active"
    assert [h["value"] for h in edited["history"]] == [7, 3]
    assert (
        await client.post(
            f"/v1/users/alice/memories/{ids['conflict']}/review", json={"action": "edit"}
        )
    ).status_code == 422
    assert (
        await client.post(
            f"/v1/users/alice/memories/{ids['conflict']}/review", json={"action": "destroy"}
        )
    ).status_code == 422
    rejected = (
        await client.post(
            f"/v1/users/alice/memories/{ids['contact_preference_no_calls']}/review",
            json={"action": "reject"},
        )
    ).json()
    assert rejected["status"] == "rejected" and rejected["current_confidence"] == 0.0

    tags = (await client.get("/v1/users/alice/tags")).json()["tags"]
    assert [(t["tag"], t["status"]) for t in tags] == [("contact_preference_no_sms", "candidate")]
    assert (await client.post("/v1/users/alice/tags/contact_preference_no_sms/approve")).json()[
        "status"
    ] == "approved"
    assert (
        await client.delete("/v1/users/alice/tags/contact_preference_no_sms")
    ).status_code == 204
    assert (await client.get("/v1/users/alice/tags")).json()["tags"] == []
    assert (await client.delete(f"/v1/users/alice/memories/{ids['pending']}")).status_code == 204
    assert (await client.delete(f"/v1/users/alice/memories/{ids['pending']}")).status_code == 404


@pytest.mark.parametrize(
    "headers_user", [({}, "bob"), ({"X-API-Key": OTHER_KEY}, "alice")], ids=["user", "tenant"]
)
async def test_no_path_reaches_another_users_facts(
    service: MemoryService,
    fake_clock: FakeClock,
    client: httpx.AsyncClient,
    headers_user: tuple[dict[str, str], str],
) -> None:
    ids = await seed(service, fake_clock)
    headers, user = headers_user
    before = (await client.get("/v1/users/alice/memories")).json()
    assert (await client.get(f"/v1/users/{user}/notes", headers=headers)).json()["notes"] == []
    assert (await client.get(f"/v1/users/{user}/memories", headers=headers)).json()["facts"] == []
    assert (await client.get(f"/v1/users/{user}/tags", headers=headers)).json()["tags"] == []
    for fact_id in ids.values():
        for action in ({"action": "approve"}, {"action": "reject"}, {"action": "edit", "value": 1}):
            r = await client.post(
                f"/v1/users/{user}/memories/{fact_id}/review", json=action, headers=headers
            )
            assert r.status_code == 404, r.text
            assert r.json()["error"]["code"] == "not_found"
        r = await client.delete(f"/v1/users/{user}/memories/{fact_id}", headers=headers)
        assert r.status_code == 404
    tag = "contact_preference_no_sms"
    assert (
        await client.post(f"/v1/users/{user}/tags/{tag}/approve", headers=headers)
    ).status_code == 404
    assert (await client.delete(f"/v1/users/{user}/tags/{tag}", headers=headers)).status_code == 404
    assert (await client.get("/v1/users/alice/memories")).json() == before
    assert (await client.get("/v1/users/alice/tags")).json()["tags"][0]["status"] == "candidate"


async def test_bad_user_ids_are_refused(client: httpx.AsyncClient) -> None:
    assert (await client.get("/v1/users/" + "x" * 201 + "/notes")).status_code == 422
    assert (await client.get("/v1/users/a%20b/notes")).status_code == 422
