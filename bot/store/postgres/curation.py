"""MemoryCuration on PostgreSQL: reading memories by id, revising them, and their sources.

A revised text is re-indexed for words by itself: `tsv` is a generated column, recomputed by the
same UPDATE, and the HNSW and GIN indexes follow the row.
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg import sql

from bot.core.models import Memory, Revision
from bot.store.postgres.pool import PostgresPool
from bot.store.postgres.rows import POSTGRES, stored_value
from bot.store.sql import statements
from bot.store.sql.rows import MEMORY_COLUMNS, memory_from_row, revision_changes, select_list

_GET_SQL = f"""
SELECT {select_list(MEMORY_COLUMNS, "m")} FROM memories m
WHERE m.id = ANY(%(ids)s::bigint[]) AND m.user_id = %(user_id)s ORDER BY m.id
"""
_EXISTS_SQL = POSTGRES.sql(statements.MEMORY_EXISTS)
# Linking goes through the memory's row, so a memory forgotten meanwhile links nothing (no FK error).
_LINK_SQL = """
INSERT INTO memory_sources (memory_id, turn_id)
SELECT m.id, t.turn_id FROM memories m, unnest(%(turns)s::bigint[]) AS t(turn_id)
WHERE m.id = %(id)s
ON CONFLICT DO NOTHING
"""
_SOURCES_SQL = """
SELECT source_turn_id AS turn_id FROM memories WHERE id = %(id)s AND source_turn_id IS NOT NULL
UNION
SELECT turn_id FROM memory_sources WHERE memory_id = %(id)s
ORDER BY 1
"""
# From the users table (its primary key gives the order); EXISTS keeps people with no memory out.
_PEOPLE_SQL = """
SELECT u.id FROM users u
WHERE (%(after)s::text IS NULL OR u.id > %(after)s::text)
  AND EXISTS (SELECT 1 FROM memories m WHERE m.user_id = u.id)
ORDER BY u.id LIMIT %(limit)s
"""


class PostgresCuration:
    """MemoryCuration over the pool."""

    def __init__(self, pool: PostgresPool) -> None:
        self._pool = pool

    async def get_memories(self, user_id: str, memory_ids: Sequence[int]) -> list[Memory]:
        ids = sorted(set(memory_ids))
        if not ids:
            return []
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_GET_SQL, {"ids": ids, "user_id": user_id})
            return [memory_from_row(row, POSTGRES) for row in await cursor.fetchall()]

    async def revise_memory(self, user_id: str, memory_id: int, revision: Revision) -> bool:
        changes = revision_changes(revision)
        async with self._pool.connection() as conn:
            if not changes:  # nothing to change: the answer is only whether the memory is there
                cursor = await conn.execute(_EXISTS_SQL, (memory_id, user_id))
                return await cursor.fetchone() is not None
            params = {column: stored_value(column, value) for column, value in changes.items()}
            cursor = await conn.execute(
                _update_sql(list(changes)), {**params, "_id": memory_id, "_user_id": user_id}
            )
            return await cursor.fetchone() is not None

    async def link_sources(self, memory_id: int, turn_ids: Sequence[int]) -> None:
        turns = sorted(set(turn_ids))
        if not turns:
            return
        async with self._pool.connection() as conn:
            await conn.execute(_LINK_SQL, {"id": memory_id, "turns": turns})

    async def memory_sources(self, memory_id: int) -> list[int]:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_SOURCES_SQL, {"id": memory_id})
            return [int(row["turn_id"]) for row in await cursor.fetchall()]

    async def people(self, after: str | None, limit: int) -> list[str]:
        if limit <= 0:
            return []
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_PEOPLE_SQL, {"after": after, "limit": limit})
            return [str(row["id"]) for row in await cursor.fetchall()]


def _update_sql(columns: Sequence[str]) -> sql.Composed:
    """UPDATE of `columns` (from revision_changes' fixed set, quoted as identifiers), each value a
    named parameter of the same name, for one memory of one person."""
    assignments = sql.SQL(", ").join(
        sql.SQL("{} = {}").format(sql.Identifier(column), sql.Placeholder(column)) for column in columns
    )
    return sql.SQL(
        "UPDATE memories SET {} WHERE id = %(_id)s AND user_id = %(_user_id)s RETURNING id"
    ).format(assignments)
