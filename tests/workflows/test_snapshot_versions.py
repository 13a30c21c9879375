"""Snapshots carry a schema_version; frozen old snapshots keep loading and resuming."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_desk.errors import ValidationError
from hermes_desk.packs.loader import bundled_pack_path
from hermes_desk.workflows import (
    SCHEMA_VERSION,
    Snapshot,
    SqliteSnapshotStore,
    WorkflowService,
    decode_state,
    encode_state,
    load_workflow_dir,
)

from .helpers import Tools

pytestmark = pytest.mark.anyio

FIXTURES = Path(__file__).parent.parent / "fixtures" / "snapshots"
FROZEN_V1 = FIXTURES / "password_reset_waiting_v1.json"
PACK = load_workflow_dir(bundled_pack_path("ecommerce") / "workflows")


def test_the_frozen_v1_snapshot_still_loads() -> None:
    state = decode_state(FROZEN_V1.read_text(encoding="utf-8"))
    assert (state.id, state.status, state.waiting_for) == (
        "wf_frozen_v1",
        "waiting_input",
        "sms_code",
    )
    assert state.steps["check_phone"].status == "succeeded"
    assert state.steps["make_captcha"].status == "cancelled"


def test_new_snapshots_carry_the_current_schema_version() -> None:
    state = decode_state(FROZEN_V1.read_text(encoding="utf-8"))
    document = json.loads(encode_state(state))
    assert document["schema_version"] == SCHEMA_VERSION
    assert decode_state(encode_state(state)) == state


@pytest.mark.parametrize(
    "document",
    [
        {"schema_version": SCHEMA_VERSION + 1, "state": {}},
        {"state": {}},
        "not json at all",
    ],
)
def test_unknown_or_broken_documents_are_refused(document: Any) -> None:
    raw = document if isinstance(document, str) else json.dumps(document)
    with pytest.raises(ValidationError):
        decode_state(raw)


async def test_a_workflow_resumes_from_the_frozen_v1_snapshot(
    make_service: Callable[..., WorkflowService], tools: Tools, store: SqliteSnapshotStore
) -> None:
    state = decode_state(FROZEN_V1.read_text(encoding="utf-8"))
    state.deadline_at = None  # the frozen one is long past its deadline
    tools.behaviour["verify_sms_code"] = lambda attempt: {"valid": True}
    tools.behaviour["reset_password"] = lambda attempt: {"sent": True}
    snapshot = Snapshot.of(state, seq=7, saved_at=state.updated_at, reason="frozen")
    await store.save(snapshot, expected_seq=None, ttl_s=3600)
    async with make_service(PACK) as service:
        view = await service.provide_input("wf_frozen_v1", {"sms_code": "135790"})
    assert view.status == "completed"
    # It finishes on today's definition: the temporary password goes to the phone by SMS.
    assert [c[0] for c in tools.calls] == ["verify_sms_code", "reset_password"]
