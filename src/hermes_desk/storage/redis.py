"""The one Redis preamble every Redis store shares: the client, its pool, its errors.

A store builds a :class:`RedisConnection` from a ``redis://`` URL (or hands it a client it
already has), runs every command through :meth:`RedisConnection.call`, which translates Redis
errors into the library's (timeout → :class:`~hermes_desk.errors.BackendTimeoutError`, refused
or dropped connection → :class:`~hermes_desk.errors.BackendUnavailableError`, anything else →
:class:`~hermes_desk.errors.BackendError`), and closes it with :meth:`RedisConnection.aclose`.
``redis`` is imported here, on first use only; without the extra the error names it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from hermes_desk.errors import (
    BackendError,
    BackendTimeoutError,
    BackendUnavailableError,
    MissingExtraError,
)

__all__ = ["RedisConnection"]

T = TypeVar("T")

#: tries after the first, 50 ms … 0.5 s apart: rides out stale connections and a short restart
_RETRIES = 3


class RedisConnection:
    """A ``redis.asyncio`` client (``decode_responses=True``) and its error translation.

    Args:
        url: a ``redis://`` URL.
        what: the store's name, for messages ("Redis session store").
        max_connections: pool size; callers beyond it wait (up to ``pool_timeout_s``) for one.
        pool_timeout_s: how long a caller waits for a free connection.
        client: an existing client (``decode_responses=True``) to use instead; the caller keeps
            it and closes it.
    """

    def __init__(
        self,
        url: str,
        *,
        what: str,
        max_connections: int = 64,
        pool_timeout_s: float = 5.0,
        client: Any | None = None,
    ) -> None:
        try:
            import redis.asyncio as redis_asyncio
            import redis.exceptions as redis_exceptions
            from redis.asyncio.retry import Retry
            from redis.backoff import ExponentialBackoff
        except ImportError as exc:
            raise MissingExtraError(f"the {what}", "redis") from exc
        self.what = what
        self._errors = redis_exceptions
        self._owns_client = client is None
        if client is None:
            pool = redis_asyncio.BlockingConnectionPool.from_url(
                url,
                max_connections=max_connections,
                timeout=pool_timeout_s,
                decode_responses=True,
                # After a Redis restart every pooled connection is dead, and each fails once
                # when next used ("Connection closed by server"), for minutes. A command that
                # fails to connect or send is retried on a fresh connection instead. (A reply
                # lost after the command ran is rarer; the session, snapshot and proposal
                # writes compare versions, so their replay conflicts instead of applying twice.)
                retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), _RETRIES),
                retry_on_error=[redis_exceptions.ConnectionError, redis_exceptions.TimeoutError],
            )
            client = redis_asyncio.Redis.from_pool(pool)
        self.client: Any = client
        self._closed = False

    async def call(self, awaitable: Awaitable[T]) -> T:
        """Await a command (or a script, a pipeline's ``execute``), translating its errors."""
        errors = self._errors
        try:
            return await awaitable
        except errors.TimeoutError as exc:
            raise BackendTimeoutError(f"{self.what} timed out: {exc}") from exc
        except errors.ConnectionError as exc:
            raise BackendUnavailableError(f"{self.what} unreachable: {exc}") from exc
        except errors.RedisError as exc:
            raise BackendError(f"{self.what} failed: {exc}") from exc

    async def ping(self) -> None:
        """One ``PING``; raises (translated) when Redis does not answer."""
        await self.call(self.client.ping())

    async def aclose(self) -> None:
        """Release the pool (only if this object made the client). Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._owns_client:
            await self.client.aclose()
