"""Suggestion feedback in Redis, for several workers: a hash per session (one field per turn and
event) and a hash of counts per tenant. Replacing an event and moving its count is one Lua
script, so two workers rating the same suggestion leave the counts right.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hermes_desk.feedback.record import SuggestionEvent
from hermes_desk.storage.redis import RedisConnection

__all__ = ["RedisFeedbackStore"]

_SEP = "\x1f"  # between intent and kind in a count's field; neither holds control characters

# KEYS: session hash, counts hash. ARGV: field, data, count field (intent SEP kind), ttl.
_PUT = """
local old = redis.call('HGET', KEYS[1], ARGV[1] .. '#k')
if old then redis.call('HINCRBY', KEYS[2], old, -1) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], ARGV[1] .. '#k', ARGV[3])
redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
redis.call('EXPIRE', KEYS[1], ARGV[4])
if old then return 0 end
return 1
"""

#: A session's events are kept 30 days; the counts stay.
_TTL_S = 30 * 24 * 3600


class RedisFeedbackStore:
    """Feedback store on Redis (``pip install 'hermes-desk[redis]'``)."""

    def __init__(self, url: str, *, prefix: str = "hermes:", client: Any | None = None) -> None:
        self._redis = RedisConnection(url, what="Redis feedback store", client=client)
        self._client = self._redis.client
        self._prefix = prefix
        self._put = self._client.register_script(_PUT)

    def _session_key(self, tenant: str, session_id: str) -> str:
        return f"{self._prefix}sfb:{tenant}:{session_id}"

    def _counts_key(self, tenant: str) -> str:
        return f"{self._prefix}sfb-counts:{tenant}"

    def _put_args(self, event: SuggestionEvent) -> tuple[list[str], list[str]]:
        keys = [self._session_key(event.tenant, event.session_id), self._counts_key(event.tenant)]
        data = json.dumps(event.to_dict(), ensure_ascii=False)
        return keys, [event.field, data, f"{event.intent}{_SEP}{event.kind}", str(_TTL_S)]

    async def put(self, event: SuggestionEvent) -> bool:
        keys, args = self._put_args(event)
        return int(await self._redis.call(self._put(keys=keys, args=args))) == 1

    async def put_many(self, events: Sequence[SuggestionEvent]) -> list[bool]:
        if not events:
            return []
        pipe = self._client.pipeline(transaction=False)
        for event in events:
            keys, args = self._put_args(event)
            await self._put(keys=keys, args=args, client=pipe)  # queued in the pipeline
        return [int(v) == 1 for v in await self._redis.call(pipe.execute())]

    async def for_session(self, tenant: str, session_id: str) -> list[SuggestionEvent]:
        found = await self._redis.call(self._client.hgetall(self._session_key(tenant, session_id)))
        events = [
            SuggestionEvent.from_dict(json.loads(value))
            for name, value in found.items()
            if not name.endswith("#k")
        ]
        return sorted(events, key=lambda e: (e.turn_index, e.event))

    async def counts(self, tenant: str) -> list[tuple[str, str, int]]:
        found = await self._redis.call(self._client.hgetall(self._counts_key(tenant)))
        rows = []
        for name, value in found.items():
            intent, _, kind = name.partition(_SEP)
            if int(value) > 0:
                rows.append((intent, kind, int(value)))
        return sorted(rows)

    async def ping(self) -> None:
        await self._redis.ping()

    async def aclose(self) -> None:
        """Release the connection pool (only if this store created the client). Idempotent."""
        await self._redis.aclose()
