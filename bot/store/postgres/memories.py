"""MemoryIndex on PostgreSQL with pgvector: memories, their dense and full-text search (the queries
are in `pg_search`), and forgetting. Search sees only recallable memories (rows.recallable)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from bot.core.errors import StoreError
from bot.core.models import Memory, MemoryHit, NewMemory, Vector
from bot.store.postgres import search
from bot.store.postgres.learning import SCRUB_CTES
from bot.store.postgres.pool import PostgresPool
from bot.store.postgres.rows import POSTGRES, jsonb, to_utc
from bot.store.sql import statements
from bot.store.sql.rows import MEMORY_COLUMNS, memory_from_row, select_list

_COUNT_MEMORIES_SQL = """
INSERT INTO users AS u (id, created_at, memory_count) VALUES (%s, %s, %s)
ON CONFLICT (id) DO UPDATE SET memory_count = u.memory_count + excluded.memory_count
"""
_INSERT_MEMORY_SQL = """
INSERT INTO memories (user_id, kind, text, speaker, created_at, meta, embedding, embedding_model,
                      context)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id
"""
_SEARCH_SIZE_SQL = """
SELECT u.memory_count, c.reltuples AS table_rows FROM users u, pg_class c
WHERE u.id = %s AND c.oid = 'memories'::regclass
"""
_MEMORY_COUNT_SQL = POSTGRES.sql(statements.MEMORY_COUNT)
_LIST_MEMORIES_SQL = f"""
SELECT {select_list(MEMORY_COLUMNS, "m")} FROM memories m
WHERE m.user_id = %s AND m.kind <> ALL(%s::text[]) ORDER BY m.id LIMIT %s OFFSET %s
"""
_COUNT_KINDS_SQL = """
SELECT count(*) AS memory_count FROM memories
WHERE user_id = %s AND kind <> ALL(%s::text[]) AND (cardinality(%s::text[]) = 0 OR kind = ANY(%s::text[]))
"""
# Forgetting a turn's memory also forgets what was derived from that turn (extracted statements,
# the memory a twin was merged into, summaries covering it): its words must not stay behind.
_FORGET_SQL = f"""
WITH target AS (
    SELECT id, source_turn_id FROM memories WHERE id = %(id)s AND user_id = %(user_id)s
), doomed AS (
    SELECT id FROM target
    UNION
    SELECT s.memory_id FROM memory_sources s
    JOIN target t ON s.turn_id = t.source_turn_id
    JOIN memories m ON m.id = s.memory_id AND m.user_id = %(user_id)s
    UNION  -- a summary covers memories by id too (meta.covers): an imported line has no turn
    SELECT m.id FROM memories m, target t
    WHERE m.user_id = %(user_id)s AND m.kind = 'summary' AND m.meta -> 'covers' @> to_jsonb(t.id)
), {SCRUB_CTES},
     gone AS (DELETE FROM memories WHERE id IN (SELECT id FROM doomed) RETURNING id),
     credit AS (DELETE FROM reply_memories WHERE memory_id IN (SELECT id FROM gone)),
     -- A short memory's context quotes the one before it (core/memory/indexing.py).
     unquoted AS (
        UPDATE memories m SET context = '' FROM doomed_text d
        WHERE m.user_id = %(user_id)s AND m.id NOT IN (SELECT id FROM doomed)
          AND strpos(m.context, d.needle) > 0
     ),
     person AS (
        UPDATE users SET memory_count = memory_count - (SELECT count(*) FROM gone)
        WHERE id = %(user_id)s AND EXISTS (SELECT 1 FROM gone)
     )
SELECT id FROM gone WHERE id = %(id)s
"""
_COUNT_PERSON_SQL = "SELECT count(*) AS n FROM memories WHERE user_id = %s"
_FORGET_PERSON = tuple(POSTGRES.sql(statement) for statement in statements.FORGET_PERSON)
# Dead rows keep their text in the table's pages until VACUUM clears them (docs/memory.md).
_VACUUM_SQL = "VACUUM " + ", ".join(statements.FORGOTTEN_TABLES)


class PostgresMemories:
    """MemoryIndex over the pool. People with more than `exact_scan_max` memories may be searched
    through the HNSW index (see pg_search)."""

    def __init__(self, pool: PostgresPool, exact_scan_max: int) -> None:
        self._pool = pool
        self._exact_scan_max = exact_scan_max

    async def add_memories(self, memories: Sequence[NewMemory]) -> list[int]:
        if not memories:
            return []
        per_user = Counter(m.user_id for m in memories)
        first_seen: dict[str, datetime] = {}
        for m in memories:
            first_seen.setdefault(m.user_id, to_utc(m.created_at))
        rows = [
            (m.user_id, m.kind, m.text, m.speaker, to_utc(m.created_at), jsonb(m.meta), m.embedding,
             m.embedding_model, m.context)
            for m in memories
        ]  # fmt: skip
        ids: list[int] = []
        async with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cursor:
            # Users in a fixed order, so concurrent batches lock their rows without deadlock.
            await cursor.executemany(
                _COUNT_MEMORIES_SQL,
                [(user_id, first_seen[user_id], count) for user_id, count in sorted(per_user.items())],
            )
            await cursor.executemany(_INSERT_MEMORY_SQL, rows, returning=True)
            async for result in cursor.results():
                row = await result.fetchone()
                if row is None:
                    raise StoreError("memory insert returned no id")
                ids.append(row["id"])
        return ids

    async def dense_search(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        """Exact up to `exact_scan_max` memories; above, HNSW where it is quicker (see pg_search)."""
        if k <= 0:
            return []
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_SEARCH_SIZE_SQL, (user_id,))
            size = await cursor.fetchone()
            if size is None or size["memory_count"] == 0:
                return []
            if search.walks_index(size["memory_count"], size["table_rows"], k, self._exact_scan_max):
                return await search.dense_index(conn, user_id, vector, k)
            return await search.dense_exact(conn, user_id, vector, k)

    async def dense_search_exact(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        """Always the exact scan: the ground truth a benchmark measures the index against."""
        if k <= 0:
            return []
        async with self._pool.connection() as conn:
            return await search.dense_exact(conn, user_id, vector, k)

    async def dense_search_index(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        """Always the HNSW path with iterative scan, whatever the person's memory count."""
        if k <= 0:
            return []
        async with self._pool.connection() as conn:
            return await search.dense_index(conn, user_id, vector, k)

    async def lexical_search(self, user_id: str, terms: Sequence[str], k: int) -> list[MemoryHit]:
        if k <= 0 or not terms:
            return []
        async with self._pool.connection() as conn:
            return await search.lexical(conn, user_id, terms, k)

    async def rare_terms(self, user_id: str, terms: Sequence[str], *, share: float, floor: int) -> list[str]:
        if not terms:
            return []
        async with self._pool.connection() as conn:
            return await search.rare_terms(conn, user_id, terms, share=share, floor=floor)

    async def list_memories(
        self, user_id: str, limit: int, offset: int = 0, *, without_kinds: Sequence[str] = ()
    ) -> list[Memory]:
        if limit <= 0:
            return []
        params = (user_id, list(without_kinds), limit, max(offset, 0))
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_LIST_MEMORIES_SQL, params)
            return [memory_from_row(row, POSTGRES) for row in await cursor.fetchall()]

    async def memory_count(
        self, user_id: str, *, without_kinds: Sequence[str] = (), only_kinds: Sequence[str] = ()
    ) -> int:
        async with self._pool.connection() as conn:
            if without_kinds or only_kinds:
                only = list(only_kinds)
                cursor = await conn.execute(_COUNT_KINDS_SQL, (user_id, list(without_kinds), only, only))
            else:  # the count the store keeps, with no scan
                cursor = await conn.execute(_MEMORY_COUNT_SQL, (user_id,))
            row = await cursor.fetchone()
        return int(row["memory_count"]) if row else 0

    async def forget(self, user_id: str, memory_id: int) -> bool:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_FORGET_SQL, {"id": memory_id, "user_id": user_id})
            return await cursor.fetchone() is not None

    async def forget_all(self, user_id: str) -> int:
        async with self._pool.connection() as conn:
            async with conn.transaction():
                row = await (await conn.execute(_COUNT_PERSON_SQL, (user_id,))).fetchone()
                for statement in _FORGET_PERSON:
                    await conn.execute(statement, (user_id,))
            # Outside the transaction: VACUUM refuses to run in one (the pool is autocommit).
            await conn.execute(_VACUUM_SQL)
        return int(row["n"]) if row else 0
