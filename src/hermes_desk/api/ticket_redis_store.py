"""Used WebSocket tickets in Redis, for workers on several hosts: one key per used ticket id,
set only if absent (``SET NX``) with a time to live of what remains of the ticket's lifetime.
"""

from __future__ import annotations

import math
from typing import Any

from hermes_desk.storage.redis import RedisConnection

__all__ = ["RedisTicketUseStore"]


class RedisTicketUseStore:
    """Used ticket ids on Redis (``pip install 'hermes-desk[redis]'``)."""

    def __init__(self, url: str, *, prefix: str = "hermes:", client: Any | None = None) -> None:
        self._redis = RedisConnection(url, what="Redis ticket store", client=client)
        self._client = self._redis.client
        self._prefix = prefix

    def _key(self, nonce: str) -> str:
        return f"{self._prefix}ws-ticket:{nonce}"

    async def use(self, nonce: str, *, expires_at: float, now: float) -> bool:
        if expires_at <= now:
            return False  # nothing to keep: an expired ticket is refused anyway
        ttl_ms = max(1, math.ceil((expires_at - now) * 1000))
        done = await self._redis.call(self._client.set(self._key(nonce), "1", nx=True, px=ttl_ms))
        return bool(done)

    async def ping(self) -> None:
        await self._redis.ping()

    async def aclose(self) -> None:
        """Release the connection pool (only if this store created the client). Idempotent."""
        await self._redis.aclose()
