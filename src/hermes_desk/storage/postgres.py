"""The PostgreSQL connection preamble the PostgreSQL stores share (psycopg 3, async pool).

The pool opens, and the store's migrations apply, on first use; a failed open is retried by the
next call. Losing the server (refused, reset, restarting, no connection free in time) is
:class:`BackendUnavailableError` — a retryable 503, not a 500; SQL errors pass through unchanged.
Imported by the PostgreSQL stores only (``pip install 'hermes-desk[postgres]'``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from hermes_desk.errors import BackendError, BackendUnavailableError, MissingExtraError
from hermes_desk.storage.migrations import Migration, apply_postgres_migrations

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

__all__ = ["PostgresPool"]


def _pool_module(what: str) -> Any:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool
    except ImportError as exc:
        raise MissingExtraError(f"the {what}", "postgres") from exc
    return psycopg_pool


class PostgresPool:
    """A lazily opened, migrated pool of autocommit connections with dict rows.

    Args:
        dsn: a ``postgresql://`` URL.
        what: the store, as errors name it ("PostgreSQL session archive").
        namespace, migrations: the store's schema, applied once the pool opens.
        min_size, max_size: the pool's bounds.
        timeout_s: how long opening the pool, or waiting for one of its connections, may take.
        setup: statements run on every new connection (``SET synchronous_commit = off``).
    """

    def __init__(
        self,
        dsn: str,
        *,
        what: str,
        namespace: str,
        migrations: Sequence[Migration],
        min_size: int = 1,
        max_size: int = 4,
        timeout_s: float = 10.0,
        setup: Sequence[str] = (),
    ) -> None:
        self._psycopg_pool = _pool_module(what)
        self._setup = tuple(setup)
        self._dsn = dsn
        self.what = what
        self._namespace, self._migrations = namespace, migrations
        self._min_size, self._max_size = min_size, max_size
        self._timeout_s = timeout_s
        self._pool: AsyncConnectionPool[Any] | None = None
        self._opening: asyncio.Lock | None = None
        self._closed = False

    async def ready(self) -> AsyncConnectionPool[Any]:
        """The open, migrated pool (opened now if need be)."""
        if self._pool is not None:
            return self._pool
        if self._closed:
            raise BackendError(f"the {self.what} is closed")
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is None:
                self._pool = await self._open()
        return self._pool

    async def _open(self) -> AsyncConnectionPool[Any]:
        from psycopg.rows import dict_row

        setup = self._setup

        async def configure(conn: AsyncConnection[Any]) -> None:
            for statement in setup:
                await conn.execute(statement)

        pool: AsyncConnectionPool[Any] = self._psycopg_pool.AsyncConnectionPool(
            self._dsn,
            min_size=self._min_size,
            max_size=self._max_size,
            timeout=self._timeout_s,
            open=False,
            configure=configure,
            # autocommit: reads and optimistic writes need no BEGIN/COMMIT, and the pool has
            # nothing to roll back when a connection comes back
            kwargs={"row_factory": dict_row, "autocommit": True},
        )
        try:
            await pool.open(wait=True, timeout=self._timeout_s)
            async with pool.connection() as conn:
                await apply_postgres_migrations(conn, self._namespace, self._migrations)
        except BaseException as exc:
            with anyio.CancelScope(shield=True):  # even when cancelled: no pool workers left
                await pool.close()
            if isinstance(exc, self._psycopg_pool.PoolTimeout):
                raise BackendUnavailableError(f"{self.what} unreachable: {exc}") from exc
            raise
        return pool

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        """A pooled connection; a lost server is :class:`BackendUnavailableError`."""
        from psycopg import InterfaceError, OperationalError

        try:
            pool = await self.ready()
            async with pool.connection() as conn:
                yield conn
        except (OperationalError, InterfaceError, self._psycopg_pool.PoolTimeout) as exc:
            raise BackendUnavailableError(f"{self.what}: {exc}") from exc
        except BackendError as exc:
            if self._closed or isinstance(exc, BackendUnavailableError):
                raise
            raise BackendUnavailableError(f"{self.what}: {exc}") from exc

    async def ping(self) -> None:
        """``SELECT 1`` on a pooled connection; BackendUnavailableError when it gets no answer."""
        from psycopg import Error

        try:
            async with self.connection() as conn:
                await conn.execute("SELECT 1")
        except Error as exc:  # PoolTimeout is a psycopg Error
            raise BackendUnavailableError(f"{self.what}: {exc}") from exc

    async def aclose(self) -> None:
        """Close the pool. Idempotent."""
        self._closed = True
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()
