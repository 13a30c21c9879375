"""Breaker state in Redis, shared by every worker: one JSON record per tool.

Updates are optimistic transactions (``WATCH`` / ``MULTI`` / ``EXEC``), retried when another
worker changed the record in between, so counts are never lost and only one worker takes the
probe lease. Unchanged records are not written back, so the common closed-and-healthy call costs
one ``GET``. The client and its error translation are the shared
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
        from redis.exceptions import WatchError

        key = self._key(tool)

        async def attempt() -> tuple[bool, T | None]:
            async with self._client.pipeline(transaction=True) as pipe:
                for _ in range(_MAX_RETRIES):
                    try:
                        await pipe.watch(key)
                        current = self._decode(await pipe.get(key))
                        new, out = change(current)
                        if new == current:
                            await pipe.unwatch()
                            return True, out
                        pipe.multi()
                        if new == CLOSED:
                            pipe.delete(key)
                        else:
                            pipe.set(key, json.dumps(new.to_dict()))
                        await pipe.execute()
                        return True, out
                    except WatchError:
                        continue
            return False, None

        done, out = await self._call(attempt())
        if not done:
            raise BackendUnavailableError(f"breaker store: {tool} is contended, gave up")
        return out  # type: ignore[return-value]

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
