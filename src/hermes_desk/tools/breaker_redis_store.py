"""Breaker state in Redis, shared by every worker: one JSON record per tool.

Updates are optimistic: the record is read with a plain ``GET`` and a changed one is written by a
compare-and-set script that writes only if the stored JSON is still the one read, and otherwise
hands back what is stored so the change is planned again; so counts are never lost and only one
worker takes the probe lease. Unchanged records are not written back, so the common
closed-and-healthy call costs one round trip (it was three with ``WATCH``/``GET``/``UNWATCH``).
The client and its error translation are the shared
:class:`~hermes_desk.storage.redis.RedisConnection`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from hermes_desk.errors import BackendUnavailableError
from hermes_desk.storage.redis import RedisConnection
from hermes_desk.tools.breaker import CLOSED, BreakerRecord

__all__ = ["RedisBreakerStore"]

T = TypeVar("T")

_MAX_RETRIES = 50

# KEYS: the record. ARGV: the JSON read ('' for none), the JSON to store ('' to delete).
# Returns {1} when written, else {0, the JSON stored now ('' for none)}. Comparing the JSON, not
# a version: a record changed and changed back plans the same, since ``change`` is pure.
_SWAP = """
local cur = redis.call('GET', KEYS[1]) or ''
if cur ~= ARGV[1] then return {0, cur} end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
return {1}
"""


class RedisBreakerStore:
    """Breaker records under ``prefix`` + tool name.

    Args:
        url: a ``redis://`` URL.
        prefix: key prefix, to share a database with other data.
        client: an existing ``redis.asyncio.Redis`` (decode_responses=True) to use instead.
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "hermes:breaker:",
        client: Any | None = None,
    ) -> None:
        self._redis = RedisConnection(url, what="Redis breaker store", client=client)
        self._client = self._redis.client
        self._call = self._redis.call
        self._prefix = prefix
        self._swap = self._client.register_script(_SWAP)

    def _key(self, tool: str) -> str:
        return self._prefix + tool

    @staticmethod
    def _decode(raw: Any) -> BreakerRecord:
        if raw is None:
            return CLOSED
        return BreakerRecord.from_dict(json.loads(raw))

    async def get(self, tool: str) -> BreakerRecord:
        return self._decode(await self._call(self._client.get(self._key(tool))))

    async def update(
        self, tool: str, change: Callable[[BreakerRecord], tuple[BreakerRecord, T]]
    ) -> T:
        key = self._key(tool)
        raw: str = await self._call(self._client.get(key)) or ""
        for _ in range(_MAX_RETRIES):
            current = self._decode(raw or None)
            new, out = change(current)
            if new == current:
                return out
            stored = "" if new == CLOSED else json.dumps(new.to_dict())
            swapped = await self._call(self._swap(keys=[key], args=[raw, stored]))
            if int(swapped[0]) == 1:
                return out
            raw = swapped[1]  # another worker wrote in between: plan again from its record
        raise BackendUnavailableError(f"breaker store: {tool} is contended, gave up")

    async def all(self) -> dict[str, BreakerRecord]:
        async def scan() -> dict[str, BreakerRecord]:
            out: dict[str, BreakerRecord] = {}
            async for key in self._client.scan_iter(match=self._prefix + "*"):
                name = str(key)[len(self._prefix) :]
                record = self._decode(await self._client.get(key))
                if record != CLOSED:
                    out[name] = record
            return out

        return await self._call(scan())

    async def reset(self, tool: str | None = None) -> None:
        if tool is not None:
            await self._call(self._client.delete(self._key(tool)))
            return

        async def delete_all() -> None:
            keys = [key async for key in self._client.scan_iter(match=self._prefix + "*")]
            if keys:
                await self._client.delete(*keys)

        await self._call(delete_all())

    async def ping(self) -> None:
        await self._redis.ping()

    async def aclose(self) -> None:
        """Release the connection pool (only if this store created the client). Idempotent."""
        await self._redis.aclose()
