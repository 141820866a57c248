"""MemoryCuration on SQLite: reading memories by id, revising them, and their sources.

A revised text is re-indexed for words by the `memories_au` trigger (schema 0004), in the same
transaction as the UPDATE; its new vector is simply the new `embedding` column.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.core.models import Memory, Revision
from bot.store.sql import statements
from bot.store.sql.rows import MEMORY_COLUMNS, memory_from_row, revision_changes
from bot.store.sqlite.db import SqliteDatabase
from bot.store.sqlite.rows import SQLITE, stored_value

_GET_SQL = "SELECT {columns} FROM memories WHERE user_id = ? AND id IN ({marks}) ORDER BY id"
# Linking goes through the memory's row, so a memory forgotten meanwhile links nothing (no FK error).
_LINK_SQL = """
INSERT INTO memory_sources(memory_id, turn_id) SELECT id, ? FROM memories WHERE id = ?
ON CONFLICT DO NOTHING
"""
_SOURCES_SQL = """
SELECT source_turn_id AS turn_id FROM memories WHERE id = ? AND source_turn_id IS NOT NULL
UNION
SELECT turn_id FROM memory_sources WHERE memory_id = ?
ORDER BY 1
"""
# From the users table (its primary key gives the order); EXISTS keeps people with no memory out.
_PEOPLE_SQL = """
SELECT id FROM users u
WHERE {after} EXISTS (SELECT 1 FROM memories m WHERE m.user_id = u.id)
ORDER BY id LIMIT ?
"""


class SqliteCuration:
    """MemoryCuration over one SQLite file."""

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    async def get_memories(self, user_id: str, memory_ids: Sequence[int]) -> list[Memory]:
        ids = sorted(set(memory_ids))
        if not ids:
            return []
        marks = ",".join("?" for _ in ids)
        sql = _GET_SQL.format(columns=", ".join(MEMORY_COLUMNS), marks=marks)
        rows = await self._db.read(sql, (user_id, *ids))
        return [memory_from_row(row, SQLITE) for row in rows]

    async def revise_memory(self, user_id: str, memory_id: int, revision: Revision) -> bool:
        changes = revision_changes(revision)
        if not changes:  # nothing to change: the answer is only whether the memory is there
            return bool(await self._db.read(statements.MEMORY_EXISTS, (memory_id, user_id)))
        # Column names come from revision_changes' fixed set; every value is a parameter.
        assignments = ", ".join(f"{column} = ?" for column in changes)
        values = [stored_value(column, value) for column, value in changes.items()]
        async with self._db.write() as db:
            cur = await db.execute(
                f"UPDATE memories SET {assignments} WHERE id = ? AND user_id = ?",
                (*values, memory_id, user_id),
            )
            return cur.rowcount > 0

    async def link_sources(self, memory_id: int, turn_ids: Sequence[int]) -> None:
        pairs = [(turn_id, memory_id) for turn_id in sorted(set(turn_ids))]
        if not pairs:
            return
        async with self._db.write() as db:
            await db.executemany(_LINK_SQL, pairs)

    async def memory_sources(self, memory_id: int) -> list[int]:
        rows = await self._db.read(_SOURCES_SQL, (memory_id, memory_id))
        return [int(row["turn_id"]) for row in rows]

    async def people(self, after: str | None, limit: int) -> list[str]:
        if limit <= 0:
            return []
        if after is None:
            rows = await self._db.read(_PEOPLE_SQL.format(after=""), (limit,))
        else:
            rows = await self._db.read(_PEOPLE_SQL.format(after="id > ? AND"), (after, limit))
        return [str(row["id"]) for row in rows]
