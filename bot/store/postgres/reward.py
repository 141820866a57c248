"""RewardLog on PostgreSQL: r(m) per memory, one reply's reward parts, and implicit signals. Every
figure is derived from the current rows when it is asked for."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.core.models import Reaction, ReplyRecord, Signal, UsedMemory
from bot.store.postgres.pool import PostgresPool
from bot.store.postgres.rows import POSTGRES, to_utc
from bot.store.sql import statements

# r(m): share × the reply's mean current reaction, summed over the replies that used m, for the
# given memories that are this person's. A reply with no reaction adds nothing (avg over no rows is
# NULL, and sum skips NULLs). The plan starts from the few ids asked about (primary key) and reads
# each one's rows through its index (LATERAL): it never scans a table, however large it grows.
_REWARDS_SQL = """
WITH mine AS MATERIALIZED (
    SELECT id FROM memories WHERE id = ANY(%(ids)s::bigint[]) AND user_id = %(user_id)s
)
SELECT mine.id, credit.value AS credit
FROM mine, LATERAL (
    SELECT sum(rm.share * (SELECT avg(f.value) FROM feedback f WHERE f.turn_id = rm.turn_id)) AS value
    FROM reply_memories rm WHERE rm.memory_id = mine.id
) AS credit
WHERE credit.value IS NOT NULL
"""
# One round trip for the whole record; each part is an array or a count beside the turn.
_RECORD_SQL = """
SELECT t.user_id, t.chat_id, t.created_at,
       ARRAY(SELECT f.value FROM feedback f WHERE f.turn_id = t.id ORDER BY f.user_id, f.source)
           AS reactions,
       ARRAY(SELECT f.user_id FROM feedback f WHERE f.turn_id = t.id ORDER BY f.user_id, f.source)
           AS reactors,
       (SELECT count(*) FROM reply_signals s WHERE s.turn_id = t.id AND s.signal = 'tool_use')
           AS tool_uses,
       (SELECT count(*) FROM reply_signals s WHERE s.turn_id = t.id AND s.signal = 'proactive_success')
           AS proactive_successes,
       ARRAY(SELECT l.created_at FROM turns l
             WHERE l.user_id = t.user_id AND l.chat_id = t.chat_id AND l.role = 'user' AND l.id > t.id
             ORDER BY l.id LIMIT %(later)s) AS later_turns
FROM turns t WHERE t.id = %(turn_id)s
"""
_USED_SQL = POSTGRES.sql(statements.USED_MEMORIES)
_SIGNAL_SQL = POSTGRES.sql(statements.RECORD_SIGNAL)


class PostgresRewards:
    """RewardLog over the pool."""

    def __init__(self, pool: PostgresPool) -> None:
        self._pool = pool

    async def memory_rewards(self, user_id: str, memory_ids: Sequence[int]) -> dict[int, float]:
        if not memory_ids:
            return {}
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_REWARDS_SQL, {"user_id": user_id, "ids": list(memory_ids)})
            rows = await cursor.fetchall()
        return {int(row["id"]): float(row["credit"]) for row in rows if row["credit"] is not None}

    async def reply_record(self, turn_id: int, later_limit: int) -> ReplyRecord | None:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_RECORD_SQL, {"turn_id": turn_id, "later": max(later_limit, 0)})
            row = await cursor.fetchone()
            if row is None:
                return None
            used = await (await conn.execute(_USED_SQL, (turn_id,))).fetchall()
        return ReplyRecord(
            turn_id=turn_id,
            user_id=row["user_id"],
            chat_id=row["chat_id"],
            created_at=to_utc(row["created_at"]),
            reactions=tuple(
                Reaction(user_id, float(value))
                for user_id, value in zip(row["reactors"], row["reactions"], strict=True)
            ),
            tool_uses=int(row["tool_uses"]),
            proactive_successes=int(row["proactive_successes"]),
            later_turns=tuple(to_utc(at) for at in row["later_turns"]),
            memories=tuple(
                UsedMemory(int(used_row["memory_id"]), float(used_row["share"]), used_row["text"])
                for used_row in used
            ),
        )

    async def record_signal(self, turn_id: int, signal: Signal, key: str, at: datetime) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(_SIGNAL_SQL, (turn_id, signal, key, to_utc(at)))
