"""An approval recorded just before a crash is carried out after the restart, once (D1, X2).

The crash is made exact: the first service proposes, then the proposal is set to what the
agent's approval writes before anything else — ``executing``, with its clear arguments — as a
kill right after that write would leave it. The restarted service must finish the job: hand
the decision to the waiting workflow at once, or run a plain write again with its idempotency
key once the approval is old enough that no other worker can still be running it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import anyio
import httpx

from hermes_desk.actions.sqlite_store import SqliteProposalStore
from hermes_desk.api.app import create_app
from hermes_desk.config import Settings
from hermes_desk.testing.servers import serve_in_thread
from tests.e2e.conftest import Service, make_settings
from tests.e2e.test_actions import executed_writes, last_seq, proposals


@contextmanager
def running(settings: Settings, backend_url: str) -> Iterator[Service]:
    with (
        serve_in_thread(create_app(settings)) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        yield Service(url, backend_url, client, settings)


def crash_after_approval(data_dir: Path, proposal_id: str, *, approved_s_ago: float) -> None:
    """Leave the proposal as an approval whose write never got going."""

    async def mark() -> None:
        store = SqliteProposalStore(data_dir / "actions.db")
        try:
            proposal = await store.get(proposal_id)
            assert proposal is not None and proposal.status == "proposed"
            approved = replace(
                proposal,
                status="executing",
                agent_id="agent-7",
                decided_at=time.time() - approved_s_ago,
                executed_arguments=dict(proposal.arguments),
            )
            assert await store.replace(approved, expected="proposed")
        finally:
            await store.aclose()

    anyio.run(mark)


def test_a_workflow_hears_of_an_approval_the_crash_cut_off(
    tmp_path: Path, backend_url: str
) -> None:
    settings = make_settings(tmp_path, backend_url)
    with running(settings, backend_url) as first:
        sid = first.open_session("u1008")["session_id"]
        out = first.turn(sid, "u1008", "我要退货退款，订单202405241357")
        [proposal] = out["proposals"]
        assert proposal["tool"] == "create_return"
    before = last_seq(first)
    crash_after_approval(tmp_path, proposal["id"], approved_s_ago=0)
    with running(settings, backend_url) as restarted:
        got = restarted.client.get(f"/v1/proposals/{proposal['id']}", params={"user_id": "u1008"})
        assert got.json()["status"] in ("approved", "executed"), got.json()
        assert [e["endpoint"] for e in executed_writes(restarted, before)] == ["create_return"]
        # The workflow went on to its next write, proposed in turn and not run.
        pending = [p for p in proposals(restarted, sid, "u1008") if p["status"] == "proposed"]
        assert [p["tool"] for p in pending] == ["issue_refund"]
        view = restarted.client.get(
            f"/v1/workflows/{out['workflow']['id']}", params={"user_id": "u1008"}
        ).json()
        assert view["waiting_for"] == "approval:issue_refund", view
    # A second restart changes nothing: the approval was carried out once.
    with running(settings, backend_url) as again:
        assert [e["endpoint"] for e in executed_writes(again, before)] == ["create_return"]


def test_a_plain_write_runs_again_only_once_no_worker_can_still_be_running_it(
    tmp_path: Path, backend_url: str
) -> None:
    settings = make_settings(tmp_path, backend_url)
    # An hour: however slow the start, "a moment ago" stays younger than that.
    settings = settings.model_copy(
        update={"actions": settings.actions.model_copy(update={"resume_after_s": 3600.0})}
    )
    with running(settings, backend_url) as first:
        old_sid = first.open_session("u1002")["session_id"]
        [old] = first.turn(old_sid, "u1002", "我要投诉，你们的客服态度太差了")["proposals"]
        young_sid = first.open_session("u1003")["session_id"]
        [young] = first.turn(young_sid, "u1003", "我要投诉，快递员态度太差了")["proposals"]
        assert old["tool"] == young["tool"] == "create_ticket"
    before = last_seq(first)
    resume_after = settings.actions.resume_after_s
    crash_after_approval(tmp_path, old["id"], approved_s_ago=resume_after + 5)
    crash_after_approval(tmp_path, young["id"], approved_s_ago=0)
    with running(settings, backend_url) as restarted:
        done = restarted.client.get(f"/v1/proposals/{old['id']}", params={"user_id": "u1002"})
        assert done.json()["status"] == "executed", done.json()
        assert done.json()["agent_id"] == "agent-7"
        waiting = restarted.client.get(f"/v1/proposals/{young['id']}", params={"user_id": "u1003"})
        assert waiting.json()["status"] == "executing", "approved a moment ago: maybe still running"
        ran = executed_writes(restarted, before)
        assert [e["endpoint"] for e in ran] == ["create_ticket"]
        assert ran[0]["idempotency_key"] == old["id"]
    # A sweep run with the approval old enough carries out the second one too, with its key.
    crash_later = make_settings(tmp_path, backend_url)
    crash_later = crash_later.model_copy(
        update={"actions": crash_later.actions.model_copy(update={"resume_after_s": 0.001})}
    )
    with running(crash_later, backend_url) as later:
        done = later.client.get(f"/v1/proposals/{young['id']}", params={"user_id": "u1003"})
        assert done.json()["status"] == "executed", done.json()
        ran = executed_writes(later, before)
        assert sorted(e["idempotency_key"] for e in ran) == sorted([old["id"], young["id"]])
