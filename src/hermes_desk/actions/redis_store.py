"""Proposals in Redis, for several workers: a hash per proposal, a sorted set per session, one
per customer of the writes that ran (by when), one of pending expiries and one of approvals
whose write is under way (by decision time). A status change is one Lua script comparing the
stored status, so two workers approving at once cannot both win. The client and its error
translation are the shared :class:`~hermes_desk.storage.redis.RedisConnection`.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_desk.actions.proposal import Proposal, ProposalStatus, ran_at
from hermes_desk.storage.redis import RedisConnection

__all__ = ["RedisProposalStore"]

# KEYS: proposal hash, pending zset, session zset. ARGV: status, data, id, expires, created, ttl,
# revision.
_ADD = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'data', ARGV[2], 'rev', ARGV[7])
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
if KEYS[3] ~= '' then
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[3])
  redis.call('EXPIRE', KEYS[3], ARGV[6])
end
return 1
"""

# KEYS: proposal hash, pending zset, executing zset, the customer's zset of writes that ran.
# ARGV: expected status, new status, data, id, decided at, expected revision ('' = any), new
# revision, ran at, ttl. A hash without 'rev' (stored before revisions were kept) is revision 0.
_REPLACE = """
local cur = redis.call('HGET', KEYS[1], 'status')
if cur ~= ARGV[1] then return 0 end
if ARGV[6] ~= '' and (redis.call('HGET', KEYS[1], 'rev') or '0') ~= ARGV[6] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'data', ARGV[3], 'rev', ARGV[7])
if ARGV[2] ~= 'proposed' then redis.call('ZREM', KEYS[2], ARGV[4]) end
if ARGV[2] == 'executing' then
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[4])
else
  redis.call('ZREM', KEYS[3], ARGV[4])
end
if ARGV[2] == 'executed' then
  redis.call('ZADD', KEYS[4], ARGV[8], ARGV[4])
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', tonumber(ARGV[8]) - tonumber(ARGV[9]))
  redis.call('EXPIRE', KEYS[4], ARGV[9])
end
return 1
"""

# KEYS: a customer's zset of writes that ran. ARGV: the proposal key prefix, since, limit.
# Newest first; a hash gone with its TTL is left out.
_RAN = """
local out = {}
local ids = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', ARGV[2], 'LIMIT', 0, ARGV[3])
for i, id in ipairs(ids) do
  out[i] = redis.call('HGET', ARGV[1] .. id, 'data')
end
return out
"""

# KEYS: a session's sorted set. ARGV: the proposal key prefix. Returns each listed proposal's
# data (nil when expired), oldest first: a read-only script, so a session's proposals are one
# round trip instead of ZRANGE and then a pipeline of HGETs.
_LISTED = """
local out = {}
for i, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  out[i] = redis.call('HGET', ARGV[1] .. id, 'data')
end
return out
"""

#: Decided proposals are kept a week for the record; the archive of the session keeps more.
_TTL_S = 7 * 24 * 3600


class RedisProposalStore:
    """Proposal store on Redis (``pip install 'hermes-desk[redis]'``)."""

    def __init__(self, url: str, *, prefix: str = "hermes:", client: Any | None = None) -> None:
        self._redis = RedisConnection(url, what="Redis proposal store", client=client)
        self._client = self._redis.client
        self._call = self._redis.call
        self._prefix = prefix
        self._replace = self._client.register_script(_REPLACE)
        self._add = self._client.register_script(_ADD)
        self._listed = self._client.register_script(_LISTED)
        self._ran = self._client.register_script(_RAN)

    def _key(self, proposal_id: str) -> str:
        return f"{self._prefix}act:{proposal_id}"

    def _session_key(self, session_id: str) -> str:
        return f"{self._prefix}act-session:{session_id}"

    def _customer_key(self, tenant: str, user: str) -> str:
        return f"{self._prefix}act-customer:{tenant}:{user}"

    @property
    def _pending_key(self) -> str:
        return f"{self._prefix}act-pending"

    @property
    def _executing_key(self) -> str:
        return f"{self._prefix}act-executing"

    async def add(self, proposal: Proposal) -> bool:
        data = json.dumps(proposal.to_dict(), ensure_ascii=False)
        session_key = self._session_key(proposal.session_id) if proposal.session_id else ""
        keys = [self._key(proposal.id), self._pending_key, session_key]
        args = [proposal.status, data, proposal.id, repr(proposal.expires_at),
                repr(proposal.created_at), str(_TTL_S), str(proposal.revision)]  # fmt: skip
        return int(await self._call(self._add(keys=keys, args=args))) == 1

    async def get(self, proposal_id: str) -> Proposal | None:
        data = await self._call(self._client.hget(self._key(proposal_id), "data"))
        return Proposal.from_dict(json.loads(data)) if data else None

    async def replace(
        self, proposal: Proposal, *, expected: ProposalStatus, revision: int | None = None
    ) -> bool:
        data = json.dumps(proposal.to_dict(), ensure_ascii=False)
        keys = [self._key(proposal.id), self._pending_key, self._executing_key,
                self._customer_key(proposal.tenant, proposal.user)]  # fmt: skip
        args = [expected, proposal.status, data, proposal.id, repr(proposal.decided_at or 0.0),
                "" if revision is None else str(revision), str(proposal.revision),
                repr(ran_at(proposal)), str(_TTL_S)]  # fmt: skip
        return int(await self._call(self._replace(keys=keys, args=args))) == 1

    async def executed_for(
        self, tenant: str, user: str, *, since: float, limit: int = 20
    ) -> list[Proposal]:
        keys = [self._customer_key(tenant, user)]
        args = [self._key(""), repr(since), str(limit)]
        values = await self._call(self._ran(keys=keys, args=args))
        return [Proposal.from_dict(json.loads(v)) for v in values if v]

    async def for_session(self, session_id: str) -> list[Proposal]:
        keys = [self._session_key(session_id)]
        values = await self._call(self._listed(keys=keys, args=[self._key("")]))
        return [Proposal.from_dict(json.loads(v)) for v in values if v]

    async def due(self, now: float, limit: int = 100) -> list[Proposal]:
        ids = await self._call(
            self._client.zrangebyscore(self._pending_key, "-inf", now, start=0, num=limit)
        )
        return [p for p in await self._many(ids) if p.pending]

    async def executing(self, limit: int = 100) -> list[Proposal]:
        ids = await self._call(self._client.zrange(self._executing_key, 0, limit - 1))
        return [p for p in await self._many(ids) if p.status == "executing"]

    async def _many(self, ids: list[str]) -> list[Proposal]:
        if not ids:
            return []
        pipe = self._client.pipeline(transaction=False)
        for proposal_id in ids:
            pipe.hget(self._key(proposal_id), "data")
        values = await self._call(pipe.execute())
        return [Proposal.from_dict(json.loads(v)) for v in values if v]

    async def ping(self) -> None:
        await self._redis.ping()

    async def aclose(self) -> None:
        """Release the connection pool (only if this store created the client). Idempotent."""
        await self._redis.aclose()
