"""Snapshots in Redis, for several workers sharing workflows.

Per workflow a hash (current snapshot) and a list (history), both with the TTL; a sorted set of
active workflows and one per session index them. A save is one Lua script: compare the seq, write
everything, so two workers can never both move a workflow on. The client and its error
translation are the shared :class:`~hermes_desk.storage.redis.RedisConnection`.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_desk.errors import ConflictError
from hermes_desk.storage.redis import RedisConnection
from hermes_desk.workflows.snapshot import Snapshot, SnapshotInfo

__all__ = ["RedisSnapshotStore"]

_SAVE = """
local cur = redis.call('HGET', KEYS[1], 'seq')
local expected = ARGV[1]
if (cur == false and expected ~= '') or (cur ~= false and cur ~= expected) then
  if cur == false then return {0, ''} end
  return {0, cur}
end
if cur == false then redis.call('DEL', KEYS[2]) end
redis.call('HSET', KEYS[1], 'seq', ARGV[2], 'status', ARGV[3], 'session_id', ARGV[4],
  'deadline_at', ARGV[5], 'saved_at', ARGV[6], 'reason', ARGV[7], 'data', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('RPUSH', KEYS[2], ARGV[12])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
if ARGV[11] == '1' then
  redis.call('ZADD', KEYS[3], ARGV[6], ARGV[10])
else
  redis.call('ZREM', KEYS[3], ARGV[10])
end
if ARGV[4] ~= '' then
  redis.call('ZADD', KEYS[4], ARGV[6], ARGV[10])
  redis.call('PEXPIRE', KEYS[4], ARGV[9])
end
return {1, ARGV[2]}
"""

_FIELDS = ("seq", "status", "session_id", "deadline_at", "saved_at", "reason", "data")

# KEYS: an index (sorted set of workflow ids). ARGV: the snapshot key prefix, then _FIELDS.
# Returns {id, {fields}} per id, newest first: a read-only script, so listing a session's
# workflows is one round trip instead of ZREVRANGE and then a pipeline of HMGETs.
_LISTED = """
local out = {}
for i, id in ipairs(redis.call('ZREVRANGE', KEYS[1], 0, -1)) do
  out[i] = {id, redis.call('HMGET', ARGV[1] .. id, unpack(ARGV, 2))}
end
return out
"""


class RedisSnapshotStore:
    """Snapshot store on Redis (``pip install 'hermes-desk[redis]'``)."""

    def __init__(self, url: str, *, prefix: str = "hermes:", client: Any | None = None) -> None:
        self._redis = RedisConnection(url, what="Redis snapshot store", client=client)
        self._client = self._redis.client
        self._call = self._redis.call
        self._prefix = prefix
        self._save = self._client.register_script(_SAVE)
        self._listed = self._client.register_script(_LISTED)

    def _key(self, workflow_id: str) -> str:
        return f"{self._prefix}wf:{workflow_id}"

    @property
    def _active_key(self) -> str:
        return f"{self._prefix}wf-active"

    def _session_key(self, session_id: str) -> str:
        return f"{self._prefix}wf-session:{session_id}"

    async def save(self, snapshot: Snapshot, *, expected_seq: int | None, ttl_s: float) -> None:
        info = json.dumps(
            {
                "seq": snapshot.seq,
                "saved_at": snapshot.saved_at,
                "reason": snapshot.reason,
                "status": snapshot.status,
            }
        )
        key = self._key(snapshot.workflow_id)
        args = [
            "" if expected_seq is None else str(expected_seq),
            str(snapshot.seq),
            snapshot.status,
            snapshot.session_id or "",
            "" if snapshot.deadline_at is None else repr(snapshot.deadline_at),
            repr(snapshot.saved_at),
            snapshot.reason,
            snapshot.data,
            str(max(1, int(ttl_s * 1000))),
            snapshot.workflow_id,
            "1" if snapshot.active else "0",
            info,
        ]
        keys = [
            key,
            f"{key}:history",
            self._active_key,
            self._session_key(snapshot.session_id or ""),
        ]
        result = await self._call(self._save(keys=keys, args=args))
        if int(result[0]) != 1:
            stored = result[1] or None
            raise ConflictError(
                f"workflow {snapshot.workflow_id} moved on (seq {stored}, expected {expected_seq})"
            )

    async def load(self, workflow_id: str) -> Snapshot | None:
        values = await self._call(self._client.hmget(self._key(workflow_id), list(_FIELDS)))
        return _snapshot(workflow_id, values)

    async def history(self, workflow_id: str) -> list[SnapshotInfo]:
        raw = await self._call(self._client.lrange(f"{self._key(workflow_id)}:history", 0, -1))
        items = [json.loads(entry) for entry in raw]
        return [SnapshotInfo(i["seq"], i["saved_at"], i["reason"], i["status"]) for i in items]

    async def active(self, *, limit: int = 1000) -> list[Snapshot]:
        ids = await self._call(self._client.zrange(self._active_key, 0, limit - 1))
        snapshots = await self._many(ids, self._active_key)
        return [s for s in snapshots if s.active]

    async def by_session(self, session_id: str) -> list[Snapshot]:
        key = self._session_key(session_id)
        rows = await self._call(self._listed(keys=[key], args=[self._key(""), *_FIELDS]))
        return await self._present([row[0] for row in rows], [row[1] for row in rows], key)

    async def _many(self, ids: list[str], index_key: str) -> list[Snapshot]:
        if not ids:
            return []
        pipe = self._client.pipeline(transaction=False)
        for workflow_id in ids:
            pipe.hmget(self._key(workflow_id), list(_FIELDS))
        return await self._present(ids, await self._call(pipe.execute()), index_key)

    async def _present(
        self, ids: list[str], rows: list[list[str | None]], index_key: str
    ) -> list[Snapshot]:
        """The snapshots of ``ids`` still stored; expired ones are dropped from the index."""
        out: list[Snapshot] = []
        gone: list[str] = []
        for workflow_id, values in zip(ids, rows, strict=True):
            snapshot = _snapshot(workflow_id, values)
            if snapshot is None:
                gone.append(workflow_id)  # expired: drop it from the index too
            else:
                out.append(snapshot)
        if gone:
            await self._call(self._client.zrem(index_key, *gone))
        return out

    async def ping(self) -> None:
        await self._redis.ping()

    async def aclose(self) -> None:
        """Release the connection pool (only if this store created the client). Idempotent."""
        await self._redis.aclose()


def _snapshot(workflow_id: str, values: list[str | None]) -> Snapshot | None:
    row = dict(zip(_FIELDS, values, strict=True))
    if row["seq"] is None or row["data"] is None:
        return None
    return Snapshot(
        workflow_id=workflow_id,
        seq=int(row["seq"]),
        saved_at=float(row["saved_at"] or 0),
        reason=row["reason"] or "",
        status=row["status"] or "",
        session_id=row["session_id"] or None,
        deadline_at=float(row["deadline_at"]) if row["deadline_at"] else None,
        data=row["data"],
    )
