"""The Redis session store: sessions shared by several workers (spec S4, scale-out).

Layout under a key prefix (default ``hd:sess:``)::

    s:<id>      the session as JSON, expiring after ``retention_s`` without use
    v:<id>      its version (an integer; absent for sessions written before versions: 0)
    t:<id>      a tombstone (closed session without transcript), expiring after its own time
    u:<owner>   the id of the user's latest live session (owner = digest of tenant and user)
    o:<owner>   set: the ids of the user's live sessions (``list_open``), kept as long as any;
                every write and touch adds its session (one from before the set joins it then)
    idle        sorted set: id → last_active, what the sweeper reads

Each method is one Lua script or one command, so it is atomic and costs one round trip. ``save``
compares the stored version with the writer's and writes the session and its next version in the
same script: of two workers that read one version, exactly one writes. The key TTL is a safety
net only: the sweeper archives idle sessions long before Redis drops them. The client and its
error translation are the shared :class:`~hermes_desk.storage.redis.RedisConnection`.
"""

from __future__ import annotations

from typing import Any

from hermes_desk.ids import digest
from hermes_desk.sessions.blob import dumps_blob, loads_blob
from hermes_desk.sessions.session import Session
from hermes_desk.sessions.store import SaveResult
from hermes_desk.storage.redis import RedisConnection

__all__ = ["RedisSessionStore"]

_REFUSED = {0: SaveResult.STALE, -1: SaveResult.RETIRED, -2: SaveResult.TAKEN}

# KEYS: live, idle, owner, tombstone, version, owner's open set. ARGV: session JSON (at the
# next version), id, last_active, retention ms, create flag, the version the writer loaded.
# Returns the version written, or 0 (stale), -1 (not live), -2 (create: id in use).
_SAVE = """
local expected = tonumber(ARGV[6])
if ARGV[5] == '1' then
  if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[4]) == 1 then return -2 end
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[4])
else
  if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
  if tonumber(redis.call('GET', KEYS[5]) or '0') ~= expected then return 0 end
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
redis.call('SADD', KEYS[6], ARGV[2])
redis.call('PEXPIRE', KEYS[6], ARGV[4])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
redis.call('SET', KEYS[5], expected + 1, 'PX', ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
return expected + 1
"""

_LOAD = """
local data = redis.call('GET', KEYS[1])
if data then
  local score = redis.call('ZSCORE', KEYS[2], ARGV[1]) or false
  return {data, score, redis.call('GET', KEYS[4]) or false}
end
data = redis.call('GET', KEYS[3])
if data then return {data, false, false} end
return false
"""

_TOUCH = """
if redis.call('PEXPIRE', KEYS[1], ARGV[3]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
redis.call('PEXPIRE', KEYS[4], ARGV[3])
redis.call('SADD', KEYS[5], ARGV[1])
redis.call('PEXPIRE', KEYS[5], ARGV[3])
return 1
"""

_RETIRE = """
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
redis.call('DEL', KEYS[5])
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('GET', KEYS[3]) == ARGV[1] then redis.call('DEL', KEYS[3]) end
redis.call('SREM', KEYS[6], ARGV[1])
if tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[3]) end
return 1
"""

# KEYS: owner's open set, owner's latest, idle. ARGV: live key prefix, version key prefix, limit.
# Returns {json, last_active, version} for the ``limit`` most recently active live sessions
# (ordered by their idle score; only those are read); drops ids Redis no longer holds. The
# latest id is read too: sessions written before the set existed may only be there.
_LIST = """
local ids = redis.call('SMEMBERS', KEYS[1])
local latest = redis.call('GET', KEYS[2])
if latest then table.insert(ids, latest) end
local seen, rows = {}, {}
for _, id in ipairs(ids) do
  if not seen[id] then
    seen[id] = true
    local score = redis.call('ZSCORE', KEYS[3], id)
    if score then
      table.insert(rows, {id, tonumber(score), score})
    elseif redis.call('EXISTS', ARGV[1] .. id) == 1 then
      table.insert(rows, {id, 0, false})
    else
      redis.call('SREM', KEYS[1], id)
    end
  end
end
table.sort(rows, function(a, b)
  if a[2] ~= b[2] then return a[2] > b[2] end
  return a[1] < b[1]
end)
local out = {}
for _, row in ipairs(rows) do
  if #out >= tonumber(ARGV[3]) then break end
  local data = redis.call('GET', ARGV[1] .. row[1])
  if data then
    table.insert(out, {data, row[3], redis.call('GET', ARGV[2] .. row[1]) or false})
  else
    redis.call('SREM', KEYS[1], row[1])
  end
end
return out
"""

_IDLE = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
local live = {}
for _, id in ipairs(ids) do
  if redis.call('EXISTS', ARGV[3] .. id) == 1 then
    table.insert(live, id)
  else
    redis.call('ZREM', KEYS[1], id)  -- dropped by its safety TTL: nothing left to archive
  end
end
return live
"""


class RedisSessionStore:
    """Sessions in Redis, safe to share between processes and hosts.

    Args:
        url: a ``redis://`` URL.
        retention_s: how long Redis keeps a session nobody touches (a safety net above the idle
            TTL plus the sweep interval).
        prefix: key prefix, to share a database with other data.
        max_connections: pool size; callers beyond it wait for a free connection.
        client: an existing ``redis.asyncio.Redis`` (decode_responses=True) to use instead.
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        retention_s: float = 3 * 3600,
        prefix: str = "hd:sess:",
        max_connections: int = 64,
        client: Any | None = None,
    ) -> None:
        self._redis = RedisConnection(
            url, what="Redis session store", max_connections=max_connections, client=client
        )
        self._client = self._redis.client
        self._call = self._redis.call
        self._keep_ms = str(int(retention_s * 1000))
        self._prefix = prefix
        self._idle_key = prefix + "idle"
        self._save = self._client.register_script(_SAVE)
        self._load = self._client.register_script(_LOAD)
        self._touch = self._client.register_script(_TOUCH)
        self._retire = self._client.register_script(_RETIRE)
        self._idle = self._client.register_script(_IDLE)
        self._list = self._client.register_script(_LIST)

    def _keys(self, session_id: str) -> tuple[str, str, str]:
        """The live, tombstone and version keys of a session."""
        p = self._prefix
        return p + "s:" + session_id, p + "t:" + session_id, p + "v:" + session_id

    def _owner_key(self, tenant: str, user: str) -> str:
        return self._prefix + "u:" + digest([tenant, user])

    def _open_key(self, tenant: str, user: str) -> str:
        return self._prefix + "o:" + digest([tenant, user])

    async def save(self, session: Session, *, create: bool = False) -> SaveResult:
        live, stone, version = self._keys(session.id)
        data = session.to_dict()
        data["version"] = session.version + 1
        blob = dumps_blob(data)
        keys = [
            live,
            self._idle_key,
            self._owner_key(session.tenant, session.user),
            stone,
            version,
            self._open_key(session.tenant, session.user),
        ]
        args = [
            blob,
            session.id,
            repr(session.last_active),
            self._keep_ms,
            "1" if create else "0",
            str(session.version),
        ]
        done = int(await self._call(self._save(keys=keys, args=args)))
        if done > 0:
            session.version = done
            return SaveResult.WRITTEN
        return _REFUSED[done]

    async def load(self, session_id: str) -> Session | None:
        live, stone, version = self._keys(session_id)
        found = await self._call(
            self._load(keys=[live, self._idle_key, stone, version], args=[session_id])
        )
        return _session(found) if found else None

    async def touch(self, session: Session) -> bool:
        live, _, version = self._keys(session.id)
        keys = [
            live,
            self._idle_key,
            self._owner_key(session.tenant, session.user),
            version,
            self._open_key(session.tenant, session.user),
        ]
        args = [session.id, repr(session.last_active), self._keep_ms]
        return bool(await self._call(self._touch(keys=keys, args=args)))

    async def retire(self, session: Session, *, tombstone_s: float) -> bool:
        live, stone, version = self._keys(session.id)
        tomb = session.to_dict()
        tomb.update(status="closed", turns=[], short_term=[], open_contacts=[])
        keys = [
            live,
            self._idle_key,
            self._owner_key(session.tenant, session.user),
            stone,
            version,
            self._open_key(session.tenant, session.user),
        ]
        args = [
            session.id,
            dumps_blob(tomb),
            str(int(tombstone_s * 1000)),
        ]
        return bool(await self._call(self._retire(keys=keys, args=args)))

    async def find_open(self, tenant: str, user: str) -> str | None:
        found = await self._call(self._client.get(self._owner_key(tenant, user)))
        return str(found) if found is not None else None

    async def list_open(self, tenant: str, user: str, limit: int = 20) -> list[Session]:
        keys = [self._open_key(tenant, user), self._owner_key(tenant, user), self._idle_key]
        args = [self._prefix + "s:", self._prefix + "v:", str(limit)]
        found = [_session(row) for row in await self._call(self._list(keys=keys, args=args))]
        found.sort(key=lambda s: (-s.last_active, s.id))  # the JSON's time may be the later
        return found

    async def idle_before(self, cutoff: float, limit: int = 1000) -> list[str]:
        args = [repr(cutoff), str(limit), self._prefix + "s:"]
        found = await self._call(self._idle(keys=[self._idle_key], args=args))
        return [str(sid) for sid in found]

    async def clear(self) -> int:
        """Delete every key under this store's prefix (scratch data, tests). Returns the count."""
        client = self._client

        async def delete_all() -> int:
            removed = 0
            async for key in client.scan_iter(match=self._prefix + "*", count=1000):
                removed += int(await client.delete(key))
            return removed

        return await self._call(delete_all())

    async def ping(self) -> None:
        await self._redis.ping()

    async def aclose(self) -> None:
        """Release the connection pool (only if this store created the client). Idempotent."""
        await self._redis.aclose()


def _session(found: list[Any]) -> Session:
    """A session from ``{json, idle score or nil, version or nil}`` (what the scripts return)."""
    session = Session.from_dict(loads_blob(found[0]))
    if found[1] is not None:
        session.last_active = max(session.last_active, float(found[1]))
    if found[2] is not None:
        session.version = int(found[2])
    return session
