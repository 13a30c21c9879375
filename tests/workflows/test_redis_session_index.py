"""The Redis snapshot and proposal stores' per-session indexes: an entry whose record expired on
its own is skipped when listing (and, for snapshots, dropped from the index)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hermes_desk.actions.redis_store import RedisProposalStore
from hermes_desk.workflows.redis_store import RedisSnapshotStore
from tests.contracts.test_proposal_store_contract import _proposal
from tests.contracts.test_snapshot_store_contract import snap

pytestmark = [pytest.mark.anyio, pytest.mark.redis]

_PREFIX = "test:index:"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def snapshots(redis_url: str) -> AsyncIterator[RedisSnapshotStore]:
    built = RedisSnapshotStore(redis_url, prefix=_PREFIX)
    yield built
    await built.aclose()


@pytest.fixture
async def proposals(redis_url: str) -> AsyncIterator[RedisProposalStore]:
    built = RedisProposalStore(redis_url, prefix=_PREFIX)
    yield built
    await built.aclose()


async def test_a_session_lists_its_snapshots_whole_and_drops_expired_ones(
    snapshots: RedisSnapshotStore,
) -> None:
    kept = snap("wf_kept", at=200)
    await snapshots.save(kept, expected_seq=None, ttl_s=60)
    await snapshots.save(snap("wf_gone", at=300), expected_seq=None, ttl_s=60)
    client = snapshots._client
    await client.delete(_PREFIX + "wf:wf_gone")  # as if its own TTL had run out

    assert await snapshots.by_session("s1") == [kept]
    assert await client.zrange(_PREFIX + "wf-session:s1", 0, -1) == ["wf_kept"]


async def test_a_session_lists_its_proposals_and_skips_expired_ones(
    proposals: RedisProposalStore,
) -> None:
    first, gone, last = (
        _proposal("act_a", created=1.0),
        _proposal("act_b", created=2.0),
        _proposal("act_c", created=3.0),
    )
    for proposal in (first, gone, last):
        assert await proposals.add(proposal)
    await proposals._client.delete(_PREFIX + "act:act_b")

    assert [p.to_dict() for p in await proposals.for_session("s1")] == [
        first.to_dict(),
        last.to_dict(),
    ]
