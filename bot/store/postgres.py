"""The Store on PostgreSQL with pgvector: turns, feedback, memories and search.

The pool, migrations and the mapping of driver errors are in `pg_pool`; links, active flags, stats
and upkeep in `pg_people`; the dense and full-text queries in `pg_search`; revising memories in
`pg_curation`. Search sees only recallable memories (rows.recallable).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from psycopg.types.json import Jsonb

from bot.core.errors import StoreError
from bot.core.models import (
    Feedback,
    Memory,
    MemoryHit,
    NewMemory,
    NewTurn,
    Turn,
    Vector,
)
from bot.store import pg_search
from bot.store.pg_curation import PostgresCuration
from bot.store.pg_pool import DEFAULT_TIMEOUT_S
from bot.store.pg_rows import MEMORY_COLUMNS, TURN_COLUMNS, memory_from_row, to_utc, turn_from_row

__all__ = ["DEFAULT_TIMEOUT_S", "PostgresStore"]

# One statement, so one round trip: reserve both ids, insert the turn unless its idempotency key is
# already stored, insert its memory, and create the person or bump their memory count.
# Foreign keys are checked at the end of the statement, after `person` has run.
_ADD_TURN_SQL = """
WITH ids AS (
    SELECT nextval(pg_get_serial_sequence('turns', 'id')) AS turn_id,
           nextval(pg_get_serial_sequence('memories', 'id')) AS memory_id
), turn AS (
    INSERT INTO turns (id, user_id, chat_id, role, text, created_at, memory_id, used_memory_ids,
                       reply_to, idempotency_key, meta)
    SELECT turn_id, %(user_id)s::text, %(chat_id)s::text, %(role)s::text, %(text)s::text,
           %(created_at)s::timestamptz, memory_id, %(used)s::bigint[], %(reply_to)s::bigint,
           %(key)s::text, %(meta)s::jsonb
    FROM ids
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id, memory_id
), memory AS (
    INSERT INTO memories (id, user_id, kind, text, speaker, created_at, meta, embedding,
                          embedding_model, source_turn_id)
    SELECT memory_id, %(user_id)s::text, %(kind)s::text, %(text)s::text, %(role)s::text,
           %(created_at)s::timestamptz, %(meta)s::jsonb, %(embedding)s::vector, %(model)s::text, id
    FROM turn
), shares AS (
    INSERT INTO reply_memories (turn_id, memory_id, share)
    SELECT turn.id, used.memory_id, used.share
    FROM turn, unnest(%(share_ids)s::bigint[], %(shares)s::float8[]) AS used(memory_id, share)
), person AS (
    INSERT INTO users AS u (id, created_at, memory_count)
    SELECT %(user_id)s::text, %(created_at)s::timestamptz, count(*) FROM turn
    ON CONFLICT (id) DO UPDATE SET memory_count = u.memory_count + excluded.memory_count,
        -- A person who writes again is reachable again, whatever an earlier failed send said.
        active = u.active OR %(role)s::text = 'user'
    WHERE excluded.memory_count > 0
)
SELECT id, memory_id FROM turn
"""
_TURN_BY_KEY_SQL = f"SELECT {TURN_COLUMNS} FROM turns t WHERE t.idempotency_key = %s"
_RECENT_TURNS_SQL = f"""
SELECT * FROM (
    SELECT {TURN_COLUMNS} FROM turns t WHERE t.user_id = %s AND t.chat_id = %s
      -- A turn whose memory was forgotten is forgotten as history too.
      AND EXISTS (SELECT 1 FROM memories m WHERE m.id = t.memory_id)
    ORDER BY t.id DESC LIMIT %s
) recent ORDER BY id
"""
_UPSERT_FEEDBACK_SQL = """
INSERT INTO feedback (turn_id, user_id, source, emoji, value, created_at)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (turn_id, user_id, source)
DO UPDATE SET emoji = excluded.emoji, value = excluded.value, created_at = excluded.created_at
"""
_REMOVE_FEEDBACK_SQL = "DELETE FROM feedback WHERE turn_id = %s AND user_id = %s AND source = %s"
_COUNT_MEMORIES_SQL = """
INSERT INTO users AS u (id, created_at, memory_count) VALUES (%s, %s, %s)
ON CONFLICT (id) DO UPDATE SET memory_count = u.memory_count + excluded.memory_count
"""
_INSERT_MEMORY_SQL = """
INSERT INTO memories (user_id, kind, text, speaker, created_at, meta, embedding, embedding_model)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id
"""
_MEMORY_COUNT_SQL = """
SELECT u.memory_count, c.reltuples FROM users u, pg_class c
WHERE u.id = %s AND c.oid = 'memories'::regclass
"""
_LIST_MEMORIES_SQL = f"""
SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.user_id = %s ORDER BY m.id LIMIT %s OFFSET %s
"""
# Forgetting a turn's memory also forgets what was derived from that turn (extracted statements,
# the memory a twin was merged into, summaries covering it): its words must not stay behind.
_FORGET_SQL = """
WITH target AS (
    SELECT id, source_turn_id FROM memories WHERE id = %(id)s AND user_id = %(user_id)s
), doomed AS (
    SELECT id FROM target
    UNION
    SELECT s.memory_id FROM memory_sources s
    JOIN target t ON s.turn_id = t.source_turn_id
    JOIN memories m ON m.id = s.memory_id AND m.user_id = %(user_id)s
), gone AS (DELETE FROM memories WHERE id IN (SELECT id FROM doomed) RETURNING id),
     credit AS (DELETE FROM reply_memories WHERE memory_id IN (SELECT id FROM gone)),
     person AS (
        UPDATE users SET memory_count = memory_count - (SELECT count(*) FROM gone)
        WHERE id = %(user_id)s AND EXISTS (SELECT 1 FROM gone)
     )
SELECT id FROM gone WHERE id = %(id)s
"""
# Reactions this person gave anywhere; others' reactions to their turns go with the turns (cascade).
# The users row stays, with a zero count, as in the SQLite store.
_FORGET_ALL_SQL = """
WITH reactions AS (DELETE FROM feedback WHERE user_id = %(user_id)s),
     memories_gone AS (DELETE FROM memories WHERE user_id = %(user_id)s RETURNING 1),
     links_gone AS (DELETE FROM platform_messages WHERE user_id = %(user_id)s),
     turns_gone AS (DELETE FROM turns WHERE user_id = %(user_id)s),
     person AS (UPDATE users SET memory_count = 0 WHERE id = %(user_id)s)
SELECT count(*) FROM memories_gone
"""


class PostgresStore(PostgresCuration):
    """Kindred's Store on PostgreSQL ≥ 13 with pgvector ≥ 0.8. Build it with `await open(dsn)`."""

    # -- TurnLog ---------------------------------------------------------------------------

    async def add_turn(self, turn: NewTurn) -> Turn:
        params = {
            "user_id": turn.user_id,
            "chat_id": turn.chat_id,
            "role": turn.role,
            "text": turn.text,
            "created_at": to_utc(turn.created_at),
            "used": list(turn.used_memory_ids),
            "reply_to": turn.reply_to,
            "key": turn.idempotency_key,
            "meta": Jsonb(dict(turn.meta)),
            "embedding": turn.embedding,
            "model": turn.embedding_model,
            "kind": turn.memory_kind,
            # No shares (a user turn, an older caller): nothing for a reaction to credit.
            "share_ids": list(turn.used_memory_ids[: len(turn.memory_shares)]),
            "shares": list(turn.memory_shares[: len(turn.used_memory_ids)]),
        }
        async with self._connection() as conn:
            cursor = await conn.execute(_ADD_TURN_SQL, params)
            ids = await cursor.fetchone()
            if ids is None:  # a retry: the key is stored already
                cursor = await conn.execute(_TURN_BY_KEY_SQL, (turn.idempotency_key,))
                existing = await cursor.fetchone()
                if existing is None:
                    raise StoreError("idempotency key conflicted but no turn holds it")
                return turn_from_row(existing)
        return Turn(
            id=ids[0],
            memory_id=ids[1],
            user_id=turn.user_id,
            chat_id=turn.chat_id,
            role=turn.role,
            text=turn.text,
            created_at=to_utc(turn.created_at),
            used_memory_ids=tuple(turn.used_memory_ids),
            reply_to=turn.reply_to,
        )

    async def recent_turns(self, user_id: str, chat_id: str, limit: int) -> list[Turn]:
        if limit <= 0:
            return []
        async with self._connection() as conn:
            cursor = await conn.execute(_RECENT_TURNS_SQL, (user_id, chat_id, limit))
            return [turn_from_row(row) for row in await cursor.fetchall()]

    async def record_feedback(self, feedback: Feedback) -> None:
        async with self._connection() as conn:
            await conn.execute(
                _UPSERT_FEEDBACK_SQL,
                (
                    feedback.turn_id,
                    feedback.user_id,
                    feedback.source,
                    feedback.emoji,
                    feedback.value,
                    to_utc(feedback.created_at),
                ),
            )

    async def remove_feedback(self, turn_id: int, user_id: str, source: str) -> None:
        async with self._connection() as conn:
            await conn.execute(_REMOVE_FEEDBACK_SQL, (turn_id, user_id, source))

    # -- MemoryIndex -----------------------------------------------------------------------

    async def add_memories(self, memories: Sequence[NewMemory]) -> list[int]:
        if not memories:
            return []
        per_user = Counter(m.user_id for m in memories)
        first_seen: dict[str, datetime] = {}
        for m in memories:
            first_seen.setdefault(m.user_id, to_utc(m.created_at))
        rows = [
            (
                m.user_id,
                m.kind,
                m.text,
                m.speaker,
                to_utc(m.created_at),
                Jsonb(dict(m.meta)),
                m.embedding,
                m.embedding_model,
            )
            for m in memories
        ]
        ids: list[int] = []
        async with self._connection() as conn, conn.transaction(), conn.cursor() as cursor:
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
                ids.append(row[0])
        return ids

    async def dense_search(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        """Exact up to `exact_scan_max` memories; above, HNSW where it is quicker (see pg_search)."""
        if k <= 0:
            return []
        async with self._connection() as conn:
            cursor = await conn.execute(_MEMORY_COUNT_SQL, (user_id,))
            row = await cursor.fetchone()
            if row is None or row[0] == 0:
                return []
            if pg_search.walks_index(row[0], row[1], k, self._exact_scan_max):
                return await pg_search.dense_index(conn, user_id, vector, k)
            return await pg_search.dense_exact(conn, user_id, vector, k)

    async def dense_search_exact(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        """Always the exact scan: the ground truth a benchmark measures the index against."""
        if k <= 0:
            return []
        async with self._connection() as conn:
            return await pg_search.dense_exact(conn, user_id, vector, k)

    async def dense_search_index(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        """Always the HNSW path with iterative scan, whatever the person's memory count."""
        if k <= 0:
            return []
        async with self._connection() as conn:
            return await pg_search.dense_index(conn, user_id, vector, k)

    async def lexical_search(self, user_id: str, terms: Sequence[str], k: int) -> list[MemoryHit]:
        if k <= 0 or not terms:
            return []
        async with self._connection() as conn:
            return await pg_search.lexical(conn, user_id, terms, k)

    async def rare_terms(self, user_id: str, terms: Sequence[str], *, share: float, floor: int) -> list[str]:
        if not terms:
            return []
        async with self._connection() as conn:
            return await pg_search.rare_terms(conn, user_id, terms, share=share, floor=floor)

    async def list_memories(self, user_id: str, limit: int, offset: int = 0) -> list[Memory]:
        if limit <= 0:
            return []
        async with self._connection() as conn:
            cursor = await conn.execute(_LIST_MEMORIES_SQL, (user_id, limit, max(offset, 0)))
            return [memory_from_row(row) for row in await cursor.fetchall()]

    async def memory_count(self, user_id: str) -> int:
        async with self._connection() as conn:
            cursor = await conn.execute("SELECT memory_count FROM users WHERE id = %s", (user_id,))
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def forget(self, user_id: str, memory_id: int) -> bool:
        async with self._connection() as conn:
            cursor = await conn.execute(_FORGET_SQL, {"id": memory_id, "user_id": user_id})
            return await cursor.fetchone() is not None

    async def forget_all(self, user_id: str) -> int:
        async with self._connection() as conn:
            cursor = await conn.execute(_FORGET_ALL_SQL, {"user_id": user_id})
            row = await cursor.fetchone()
            return int(row[0]) if row else 0
