"""The AppStore on PostgreSQL: `apps_sql.SqlApps` over the pool, one connection per transaction.

The proactive store (`proactive_sql.SqlProactive`) runs on the same runner."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from psycopg import AsyncConnection

from bot.store.postgres.pool import PostgresPool
from bot.store.postgres.rows import POSTGRES
from bot.store.sql.miniapps import SqlApps, Transaction
from bot.store.sql.rows import Dialect, NamedRow


class PostgresRunner:
    dialect: Dialect = POSTGRES

    def __init__(self, pool: PostgresPool) -> None:
        self._pool = pool

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        async with self._pool.connection() as conn, conn.transaction():
            yield _Statements(conn)

    async def hold_owner(self, run: Transaction, owner: str) -> None:
        # Read committed lets two starts both count one running build; this lock makes them queue.
        await run("SELECT pg_advisory_xact_lock(hashtext(%s)) AS held", (owner,))


class _Statements:
    def __init__(self, conn: AsyncConnection[Any]) -> None:
        self._conn = conn

    async def __call__(self, sql: str, params: Sequence[Any] = ()) -> list[NamedRow]:
        cursor = await self._conn.execute(sql, params)
        return list(await cursor.fetchall()) if cursor.description else []


def pg_apps(pool: PostgresPool) -> SqlApps:
    return SqlApps(PostgresRunner(pool))
