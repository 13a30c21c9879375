"""Memory on PostgreSQL (psycopg 3, async pool): the same contract as SQLite, for many workers.

The pool and its error translation are the stores' shared
:class:`~hermes_desk.storage.postgres.PostgresPool`. A planner's operations are applied by one
server-side function (``memory_apply``, created by a migration), so a write is one statement
whatever the plan. ``write`` is optimistic and autocommit: it plans against the active fact it
believes current (none at first) and calls ``memory_write``, which takes the key's advisory
lock, checks under ``FOR UPDATE`` that the active fact is still that one (id and row version
``xmin``) and applies the operations, all in that statement's own transaction; otherwise it
applies nothing and returns the active fact, and the write is planned again with it. A new key
costs one round trip, an existing one two. A concurrent insert of the same key shows up as a
unique violation on the active-key index and is handled the same way; after a few lost races the
write falls back to a transaction that holds the advisory lock from read to commit. Sweeps skip
rows another worker holds, so several processes can write and sweep at once.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from hermes_desk.errors import (
    BackendError,
    NotFoundError,
)
from hermes_desk.memory.fact import Fact, FactStatus, LongTermTag, TagStatus
from hermes_desk.memory.store import (
    FACT_COLUMNS,
    ChangePlan,
    SweepPlan,
    WritePlan,
    fact_from_row,
    facts_and_tags_sql,
    tag_from_row,
)
from hermes_desk.memory.transitions import AddTag, Delete, Outcome, Save
from hermes_desk.storage import Migration, apply_postgres_migrations
from hermes_desk.storage.postgres import PostgresPool

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["MIGRATIONS", "PostgresMemoryStore"]

_SET_ALL = ", ".join(f"{c} = EXCLUDED.{c}" for c in FACT_COLUMNS if c != "id")

MIGRATIONS = (
    Migration(
        "0001_facts_and_tags",
        facts_and_tags_sql(json_type="JSONB", float_type="DOUBLE PRECISION"),
    ),
    Migration(
        "0002_apply_functions",
        f"""
        CREATE OR REPLACE FUNCTION memory_apply(p_ops jsonb) RETURNS void
        LANGUAGE plpgsql AS $$
        DECLARE
            op jsonb;
        BEGIN
            FOR op IN SELECT jsonb_array_elements(p_ops) LOOP
                CASE op->>'op'
                WHEN 'save' THEN
                    INSERT INTO memory_facts ({", ".join(FACT_COLUMNS)})
                    SELECT {", ".join(FACT_COLUMNS)}
                    FROM jsonb_populate_record(NULL::memory_facts, op->'row')
                    ON CONFLICT (id) DO UPDATE SET {_SET_ALL};
                WHEN 'delete' THEN
                    DELETE FROM memory_facts WHERE id = op->>'id';
                WHEN 'tag' THEN
                    INSERT INTO memory_tags
                        (tenant, user_id, tag, value, status, source_fact_id, created_at)
                    SELECT tenant, user_id, tag, value, status, source_fact_id, created_at
                    FROM jsonb_populate_record(NULL::memory_tags, op->'row')
                    ON CONFLICT (tenant, user_id, tag) DO NOTHING;
                ELSE
                    RAISE EXCEPTION 'unknown memory operation %', op->>'op';
                END CASE;
            END LOOP;
        END $$;

        CREATE OR REPLACE FUNCTION memory_write(
            p_tenant text, p_user text, p_key text, p_seen text, p_ops jsonb
        ) RETURNS jsonb
        LANGUAGE plpgsql AS $$
        DECLARE
            found record;
        BEGIN
            -- a plain read first: handing back a changed fact takes no lock and no xid
            SELECT f AS fact, f.id || ':' || f.xmin::text AS seen INTO found FROM memory_facts f
            WHERE tenant = p_tenant AND user_id = p_user AND key = p_key AND status = 'active';
            IF found.seen IS NOT DISTINCT FROM p_seen THEN
                PERFORM pg_advisory_xact_lock(
                    hashtextextended(p_tenant || chr(31) || p_user || chr(31) || p_key, 0));
                SELECT f AS fact, f.id || ':' || f.xmin::text AS seen INTO found
                FROM memory_facts f
                WHERE tenant = p_tenant AND user_id = p_user AND key = p_key
                    AND status = 'active'
                FOR UPDATE;
                IF found.seen IS NOT DISTINCT FROM p_seen THEN
                    PERFORM memory_apply(p_ops);
                    RETURN NULL;
                END IF;
            END IF;
            -- not applied: hand back the active fact so the caller can plan again
            RETURN jsonb_build_object('row', to_jsonb(found.fact) || jsonb_build_object(
                'value', (found.fact).value::text, 'history', (found.fact).history::text,
                'seen', found.seen));
        END $$;
        """,
    ),
)

# JSON columns come back as text so both backends decode them the same way.
_SELECT = ", ".join(f"{c}::text AS {c}" if c in ("value", "history") else c for c in FACT_COLUMNS)
_ACTIVE_OF_KEY = (
    f"SELECT {_SELECT}, id || ':' || xmin::text AS seen FROM memory_facts"
    " WHERE tenant = %s AND user_id = %s AND key = %s AND status = 'active'"
)
_WRITE = "SELECT memory_write(%s, %s, %s, %s, %s::jsonb)"
_APPLY = "SELECT memory_apply(%s::jsonb)"
_TAG_SELECT = (
    "SELECT tenant, user_id, tag, value::text AS value, status, source_fact_id, created_at,"
    " reviewed_at FROM memory_tags"
)
_OPTIMISTIC_TRIES = 4  # then the locking path, so a hot key cannot starve a writer


def _race_errors() -> tuple[type[Exception], ...]:
    from psycopg import errors

    return (errors.SerializationFailure, errors.UniqueViolation)


async def _lock_key(conn: AsyncConnection[Any], tenant: str, user_id: str, key: str) -> None:
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
        (f"{tenant}\x1f{user_id}\x1f{key}",),
    )


def _ops_json(*outcomes: Outcome) -> str:
    """The plans' operations, in order, as the JSON array ``memory_apply`` takes."""
    ops: list[dict[str, Any]] = []
    for outcome in outcomes:
        for op in outcome.ops:
            if isinstance(op, Save):
                ops.append({"op": "save", "row": op.fact.to_dict()})
            elif isinstance(op, Delete):
                ops.append({"op": "delete", "id": op.fact_id})
            elif isinstance(op, AddTag):
                ops.append({"op": "tag", "row": op.tag.to_dict()})
    return json.dumps(ops, ensure_ascii=False, separators=(",", ":"))


async def _apply(conn: AsyncConnection[Any], outcome: Outcome) -> Outcome:
    if outcome.ops:
        await conn.execute(_APPLY, (_ops_json(outcome),))
    return outcome


class PostgresMemoryStore:
    """Facts in PostgreSQL. The pool opens, and the ``memory`` migrations apply, on first use
    (or at once with ``await PostgresMemoryStore.open(dsn)``); ``aclose()`` closes the pool.

    Args:
        dsn: a ``postgresql://`` URL.
        min_size, max_size: the pool's bounds.
        timeout_s: how long opening the pool, or waiting for one of its connections, may take.
        synchronous_commit: ``False`` lets a commit return before its WAL record is flushed (a
            server crash may lose the last few hundred milliseconds of writes, never corrupts):
            the same trade as SQLite's WAL with ``synchronous=NORMAL``.
    """

    def __init__(
        self,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        timeout_s: float = 10.0,
        synchronous_commit: bool = True,
    ) -> None:
        self._db = PostgresPool(
            dsn,
            what="PostgreSQL memory store",
            namespace="memory",
            migrations=MIGRATIONS,
            min_size=min_size,
            max_size=max_size,
            timeout_s=timeout_s,
            setup=() if synchronous_commit else ("SET synchronous_commit = off",),
        )
        self._connection = self._db.connection

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        timeout_s: float = 10.0,
        synchronous_commit: bool = True,
    ) -> PostgresMemoryStore:
        """A store whose pool is open and schema migrated (BackendError if unreachable)."""
        store = cls(
            dsn,
            min_size=min_size,
            max_size=max_size,
            timeout_s=timeout_s,
            synchronous_commit=synchronous_commit,
        )
        await store._db.ready()
        return store

    async def migrate(self) -> list[str]:
        """Apply the ``memory`` migrations not yet applied (``schema_migrations`` table)."""
        async with self._connection() as conn:
            return await apply_postgres_migrations(conn, "memory", MIGRATIONS)

    async def write(self, tenant: str, user_id: str, key: str, plan: WritePlan) -> Outcome:
        # The first attempt plans for "no active fact yet": a new key is then one statement, and
        # an existing one costs the same two round trips as a read first, since memory_write
        # hands back the active fact instead of applying. ``plan`` is pure, so running it again
        # is safe.
        race = _race_errors()
        params = (tenant, user_id, key)
        current: Fact | None = None
        seen: str | None = None
        async with self._connection() as conn:
            for _ in range(_OPTIMISTIC_TRIES):
                outcome = plan(current)
                try:
                    cur = await conn.execute(_WRITE, (*params, seen, _ops_json(outcome)))
                    answer = await cur.fetchone()
                except race:  # a concurrent insert of the key committed first
                    cur = await conn.execute(_ACTIVE_OF_KEY, params)
                    answer = {"memory_write": {"row": await cur.fetchone()}}
                assert answer is not None
                if answer["memory_write"] is None:
                    return outcome
                row = answer["memory_write"]["row"]
                current = fact_from_row(row) if row else None
                seen = row["seen"] if row else None
            async with conn.transaction():  # contention: hold the key from read to commit
                await _lock_key(conn, tenant, user_id, key)
                cur = await conn.execute(_ACTIVE_OF_KEY + " FOR UPDATE", params)
                row = await cur.fetchone()
                outcome = plan(fact_from_row(row) if row else None)
                seen = row["seen"] if row else None
                cur = await conn.execute(_WRITE, (*params, seen, _ops_json(outcome)))
                answer = await cur.fetchone()
                if answer is None or answer["memory_write"] is not None:
                    raise BackendError("memory write: the locked fact changed")  # cannot happen
                return outcome

    async def change(self, tenant: str, user_id: str, fact_id: str, plan: ChangePlan) -> Outcome:
        select = (
            f"SELECT {_SELECT} FROM memory_facts WHERE id = %s AND tenant = %s AND user_id = %s"
        )
        async with self._connection() as conn, conn.transaction():
            cur = await conn.execute(select, (fact_id, tenant, user_id))
            row = await cur.fetchone()
            if row is None:
                raise NotFoundError(f"no memory fact {fact_id!r}", fact_id=fact_id)
            await _lock_key(conn, tenant, user_id, row["key"])
            cur = await conn.execute(select + " FOR UPDATE", (fact_id, tenant, user_id))
            row = await cur.fetchone()
            if row is None:
                raise NotFoundError(f"no memory fact {fact_id!r}", fact_id=fact_id)
            fact = fact_from_row(row)
            cur = await conn.execute(_ACTIVE_OF_KEY + " FOR UPDATE", (tenant, user_id, fact.key))
            active = await cur.fetchone()
            current = fact_from_row(active) if active else None
            if current is not None and current.id == fact.id:
                current = None
            return await _apply(conn, plan(fact, current))

    async def facts(
        self,
        tenant: str,
        user_id: str,
        statuses: Collection[FactStatus] | None = None,
        *,
        limit: int = 1000,
    ) -> list[Fact]:
        sql = f"SELECT {_SELECT} FROM memory_facts WHERE tenant = %s AND user_id = %s"
        params: list[Any] = [tenant, user_id]
        if statuses is not None:
            sql += " AND status = ANY(%s)"
            params.append([FactStatus(s).value for s in statuses])
        sql += " ORDER BY updated_at DESC LIMIT %s"
        params.append(limit)
        async with self._connection() as conn:
            cur = await conn.execute(sql, params)
            return [fact_from_row(r) for r in await cur.fetchall()]

    async def pending(self, *, limit: int = 500) -> list[Fact]:
        async with self._connection() as conn:
            cur = await conn.execute(
                f"SELECT {_SELECT} FROM memory_facts WHERE status = 'pending'"
                " ORDER BY created_at LIMIT %s",
                (limit,),
            )
            return [fact_from_row(r) for r in await cur.fetchall()]

    async def sweep(self, now: float, plan: SweepPlan, *, limit: int = 1000) -> list[Outcome]:
        async with self._connection() as conn, conn.transaction():
            cur = await conn.execute(
                f"SELECT {_SELECT} FROM memory_facts WHERE status = 'active' AND valid_until <= %s"
                " ORDER BY valid_until LIMIT %s FOR UPDATE SKIP LOCKED",
                (now, limit),
            )
            done = [o for row in await cur.fetchall() if (o := plan(fact_from_row(row)))]
            if done:  # the whole batch in one statement
                await conn.execute(_APPLY, (_ops_json(*done),))
            return done

    async def tags(self, tenant: str, user_id: str) -> list[LongTermTag]:
        async with self._connection() as conn:
            cur = await conn.execute(
                _TAG_SELECT + " WHERE tenant = %s AND user_id = %s ORDER BY tag", (tenant, user_id)
            )
            return [tag_from_row(r) for r in await cur.fetchall()]

    async def review_tag(
        self, tenant: str, user_id: str, tag: str, *, approve: bool, now: float
    ) -> LongTermTag | None:
        key = (tenant, user_id, tag)
        where = " WHERE tenant = %s AND user_id = %s AND tag = %s"
        async with self._connection() as conn, conn.transaction():
            if approve:
                await conn.execute(
                    "UPDATE memory_tags SET status = %s, reviewed_at = %s" + where,
                    (TagStatus.APPROVED.value, now, *key),
                )
                cur = await conn.execute(_TAG_SELECT + where, key)
                row = await cur.fetchone()
            else:
                cur = await conn.execute("DELETE FROM memory_tags" + where + " RETURNING tag", key)
                row = await cur.fetchone()
            if row is None:
                raise NotFoundError(f"no long-term tag {tag!r}", tag=tag)
            return tag_from_row(row) if approve else None

    async def ping(self) -> None:
        """``SELECT 1`` on a pooled connection (opening the pool first if need be);
        BackendUnavailableError when PostgreSQL does not answer."""
        await self._db.ping()

    async def aclose(self) -> None:
        """Close the pool. Idempotent."""
        await self._db.aclose()
