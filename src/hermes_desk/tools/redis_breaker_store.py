"""Breaker state in Redis, shared by every worker: one JSON record per tool.

Updates are optimistic transactions (``WATCH`` / ``MULTI`` / ``EXEC``), retried when another
worker changed the record in between, so counts are never lost and only one worker takes the
probe lease. Unchanged records are not written back, so the common closed-and-healthy call costs
one ``GET``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_desk.errors import BackendUnavailableError, MissingExtraError
from hermes_desk.tools.breaker import CLOSED, BreakerRecord

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisBreakerStore"]

T = TypeVar("T")

_MAX_RETRIES = 50


class RedisBreakerStore:
    def __init__(self, client: Redis, *, prefix: str = "hermes:breaker:") -> None:
        self._client = client
        self._prefix = prefix

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "hermes:breaker:") -> RedisBreakerStore:
        try:
            from redis.asyncio import Redis
        except ImportError as exc:  # pragma: no cover - depends on the installed extras
            raise MissingExtraError("the Redis breaker store", "redis") from exc
        return cls(Redis.from_url(url), prefix=prefix)

    def _key(self, tool: str) -> str:
        return self._prefix + tool

    @staticmethod
    def _decode(raw: Any) -> BreakerRecord:
        if raw is None:
            return CLOSED
        return BreakerRecord.from_dict(json.loads(raw))

    async def get(self, tool: str) -> BreakerRecord:
        from redis.exceptions import RedisError

        try:
            raw = await self._client.get(self._key(tool))
        except RedisError as exc:
            raise BackendUnavailableError(f"breaker store: {type(exc).__name__}") from exc
        return self._decode(raw)

    async def update(
        self, tool: str, change: Callable[[BreakerRecord], tuple[BreakerRecord, T]]
    ) -> T:
        from redis.exceptions import RedisError, WatchError

        key = self._key(tool)
        try:
            async with self._client.pipeline(transaction=True) as pipe:
                for _ in range(_MAX_RETRIES):
                    try:
                        await pipe.watch(key)
                        current = self._decode(await pipe.get(key))
                        new, out = change(current)
                        if new == current:
                            await pipe.unwatch()  # type: ignore[no-untyped-call]
                            return out
                        pipe.multi()  # type: ignore[no-untyped-call]
                        if new == CLOSED:
                            pipe.delete(key)
                        else:
                            pipe.set(key, json.dumps(new.to_dict()))
                        await pipe.execute()
                        return out
                    except WatchError:
                        continue
        except RedisError as exc:
            raise BackendUnavailableError(f"breaker store: {type(exc).__name__}") from exc
        raise BackendUnavailableError(f"breaker store: {tool} is contended, gave up")

    async def all(self) -> dict[str, BreakerRecord]:
        out: dict[str, BreakerRecord] = {}
        async for key in self._client.scan_iter(match=self._prefix + "*"):
            name = (key.decode() if isinstance(key, bytes) else str(key))[len(self._prefix) :]
            record = await self.get(name)
            if record != CLOSED:
                out[name] = record
        return out

    async def reset(self, tool: str | None = None) -> None:
        if tool is not None:
            await self._client.delete(self._key(tool))
            return
        keys = [key async for key in self._client.scan_iter(match=self._prefix + "*")]
        if keys:
            await self._client.delete(*keys)

    async def aclose(self) -> None:
        await self._client.aclose()
