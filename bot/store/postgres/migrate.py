"""Bringing a PostgreSQL database up to Kindred's schema, safely when several processes start at once."""

from __future__ import annotations

from datetime import UTC, datetime

from psycopg import AsyncConnection
from psycopg.rows import DictRow

from bot.store import migrations

# Any fixed bigint shared by every Kindred process: it serialises migrations across processes.
MIGRATION_LOCK = 0x4B494E44  # "KIND"

_LOCK_SQL = "SELECT pg_advisory_xact_lock(%s)"
_TABLE_EXISTS_SQL = "SELECT to_regclass('schema_version') IS NOT NULL AS found"
_RECORDED_SQL = "SELECT version, name FROM schema_version"
_RENUMBER_SQL = "UPDATE schema_version SET version = %s WHERE version = %s"
_IS_APPLIED_SQL = "SELECT 1 FROM schema_version WHERE version = %s"
_RECORD_SQL = "INSERT INTO schema_version (version, name, applied_at) VALUES (%s, %s, %s)"


async def applied_versions(conn: AsyncConnection[DictRow]) -> list[int]:
    """Versions recorded in schema_version, in today's numbering; none before the first migration."""
    return migrations.current_versions("postgres", await _recorded(conn))


async def _recorded(conn: AsyncConnection[DictRow]) -> list[tuple[int, str]]:
    cursor = await conn.execute(_TABLE_EXISTS_SQL)
    exists = await cursor.fetchone()
    if not exists or not exists["found"]:
        return []
    cursor = await conn.execute(_RECORDED_SQL)
    return [(row["version"], row["name"]) for row in await cursor.fetchall()]


async def apply_pending(conn: AsyncConnection[DictRow]) -> list[int]:
    """Create the vector extension, then apply each pending migration in its own transaction.

    Every step holds the advisory lock and re-checks what is applied, so when two processes start
    at once, one migrates and the other waits and then finds nothing to do. Returns the versions
    this call applied. `conn` must be in autocommit mode.
    """
    async with conn.transaction():
        await conn.execute(_LOCK_SQL, (MIGRATION_LOCK,))
        # Concurrent CREATE EXTENSION / CREATE TABLE IF NOT EXISTS can still collide: hence the lock.
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await conn.execute(migrations.VERSION_TABLE_DDL)
        # Steps recorded under PostgreSQL's numbers from before the dialects shared one move to today's.
        moved = migrations.renumbering("postgres", await _recorded(conn))
        async with conn.cursor() as cursor:
            await cursor.executemany(_RENUMBER_SQL, migrations.renumber_updates(moved))
        applied = set(await applied_versions(conn))
    newly: list[int] = []
    for migration in migrations.pending("postgres", applied):
        async with conn.transaction():
            await conn.execute(_LOCK_SQL, (MIGRATION_LOCK,))
            cursor = await conn.execute(_IS_APPLIED_SQL, (migration.version,))
            if await cursor.fetchone() is not None:  # another process got here first
                continue
            # Several statements: without parameters psycopg sends them as one simple query.
            await conn.execute(migration.sql)
            now = datetime.now(UTC).isoformat()
            await conn.execute(_RECORD_SQL, (migration.version, migration.name, now))
        newly.append(migration.version)
    return newly
