"""The PostgreSQL store's connection: a psycopg async connection pool, migrations, error mapping.

Driver and pool errors become Kindred's errors here and nowhere else: a server that cannot be
reached (refused, gone mid-query, pool timeout) is `StoreUnavailable`, anything else `StoreError`.
The pool checks each connection before lending it, so after the server comes back the same store
object reconnects by itself; one that fails its check has every idle one checked at once
(`CheckAllOnLoss`). Every role of the store (pg_turns, pg_memories, pg_curation, pg_reward)
shares one `PostgresPool`; rows come back as dicts (`dict_row`), read by column name.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Self

import psycopg
from pgvector.psycopg import register_vector_async
from psycopg import AsyncConnection
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import DictRow, dict_row
from psycopg.types import TypeInfo
from psycopg_pool import AsyncConnectionPool, PoolClosed

from bot.core.errors import StoreError, StoreUnavailable
from bot.store.postgres import migrate

DEFAULT_TIMEOUT_S = 5.0

Connection = AsyncConnection[DictRow]


class CheckAllOnLoss:
    """The pool's check of a connection before it lends it. When one fails, the idle ones are
    checked then and there, and the dead among them replaced.

    Connections are lost together (the server restarted, an admin or a proxy cut the sessions), and
    psycopg_pool waits between two failed checks (1 s, 2 s, 4 s…) to spare a server that is down:
    with ten dead idle connections, the next request timed out after 5 s although the server was
    up all along (bench/soak.py, pg_terminate_backend)."""

    def __init__(self) -> None:
        self.pool: AsyncConnectionPool[Connection] | None = None

    async def __call__(self, conn: Connection) -> None:
        try:
            await AsyncConnectionPool.check_connection(conn)
        except psycopg.Error:
            if self.pool is not None:
                await self.pool.check()
            raise


class PostgresPool:
    """The connection pool, migrations and error mapping that the PostgreSQL store is built on."""

    def __init__(self, pool: AsyncConnectionPool[Connection], dsn: str, *, timeout_s: float) -> None:
        self._pool = pool
        self._dsn = dsn
        self._password = _password_of(dsn)
        self._timeout_s = timeout_s

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        migrate: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> Self:
        """Connect, apply pending migrations unless `migrate=False`, and fill the pool.

        `timeout_s` bounds each wait for a connection. Raises StoreUnavailable if the server cannot
        be reached within it.
        """
        check = CheckAllOnLoss()
        pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
            dsn,
            connection_class=Connection,
            # No server-side prepared statements: a generic plan walks HNSW and filters afterwards.
            kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row},
            min_size=min_size,
            max_size=max_size,
            open=False,
            configure=_register_vector,
            check=check,
            timeout=timeout_s,
            # Short: once background retries give up, the next request reconnects at once.
            reconnect_timeout=timeout_s,
            name="kindred-postgres",
        )
        check.pool = pool
        store = cls(pool, dsn, timeout_s=timeout_s)
        # Migrate before the pool connects, so that every pooled connection knows the vector type.
        if migrate:
            await store._apply_migrations()
        with store._mapped_errors():
            try:
                await pool.open(wait=True, timeout=timeout_s)
            except BaseException:
                await pool.close()
                raise
        return store

    async def close(self) -> None:
        await self._pool.close()

    # -- migrations -------------------------------------------------------------------------

    async def migrate(self) -> list[int]:
        """Apply pending migrations, each in its own transaction; return the versions applied."""
        applied = await self._apply_migrations()
        # Connections made before the vector type existed have no adapter for it: renew them.
        await self._pool.drain()
        return applied

    async def applied_versions(self) -> list[int]:
        async with self.connection() as conn:
            return await migrate.applied_versions(conn)

    async def _apply_migrations(self) -> list[int]:
        with self._mapped_errors():
            async with await _connect(self._dsn, self._timeout_s) as conn:
                return await migrate.apply_pending(conn)

    # -- connections and errors ------------------------------------------------------------

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A pooled connection (autocommit, rows as dicts); driver errors become Kindred's."""
        with self._mapped_errors():
            async with self._pool.connection() as conn:
                yield conn

    @contextmanager
    def _mapped_errors(self) -> Iterator[None]:
        with _map_errors(self._password):
            yield


async def schema_versions(dsn: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[int]:
    """The schema versions a database has, read over one connection and no pool: a quick look
    that raises StoreUnavailable within about `timeout_s`, with the server's own reason."""
    with _map_errors(_password_of(dsn)):
        async with await _connect(dsn, timeout_s) as conn:
            return await migrate.applied_versions(conn)


async def _connect(dsn: str, timeout_s: float) -> Connection:
    return await AsyncConnection.connect(
        dsn,
        autocommit=True,
        prepare_threshold=None,
        # libpq counts whole seconds, and 1 s is too short for a server across a network.
        connect_timeout=max(2, round(timeout_s)),
        row_factory=dict_row,
    )


def _password_of(dsn: str) -> str:
    try:
        return str(conninfo_to_dict(dsn).get("password") or "")
    except psycopg.Error:
        # The parser's message may quote the DSN, password included.
        raise StoreError("cannot parse the PostgreSQL DSN (not shown: it may hold a password)") from None


@contextmanager
def _map_errors(password: str) -> Iterator[None]:
    try:
        yield
    except PoolClosed as err:
        raise StoreError("the PostgreSQL store is closed") from err
    except psycopg.OperationalError as err:  # refused, lost, shut down, pool timeout
        raise StoreUnavailable(_describe(err, password)) from err
    except psycopg.Error as err:
        raise StoreError(_describe(err, password)) from err


def _describe(err: Exception, password: str) -> str:
    message = f"PostgreSQL {type(err).__name__}: {err}".strip()
    if password:
        message = message.replace(password, "***")
    return message


async def _register_vector(conn: AsyncConnection[Any]) -> None:
    # Before the first migration the database has no vector type; migrate() renews the pool after.
    if await TypeInfo.fetch(conn, "vector") is not None:
        await register_vector_async(conn)
