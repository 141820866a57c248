"""The PostgreSQL store's reward reads and writes: r(m) per memory, one reply's reward parts, and
implicit signals. Every figure is derived from the current rows when it is asked for."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.core.models import ReplyRecord, Signal, UsedMemory
from bot.store.pg_people import PostgresPeople
from bot.store.pg_rows import to_utc

# r(m): share × the reply's mean current reaction, summed over the replies that used m, for the
# given memories that are this person's. A reply with no reaction adds nothing (avg over no rows is
# NULL, and sum skips NULLs). The plan starts from the few ids asked about (primary key) and reads
# each one's rows through its index (LATERAL): it never scans a table, however large it grows.
_REWARDS_SQL = """
WITH mine AS MATERIALIZED (
    SELECT id FROM memories WHERE id = ANY(%(ids)s::bigint[]) AND user_id = %(user_id)s
)
SELECT mine.id, credit.value
FROM mine, LATERAL (
    SELECT sum(rm.share * (SELECT avg(f.value) FROM feedback f WHERE f.turn_id = rm.turn_id)) AS value
    FROM reply_memories rm WHERE rm.memory_id = mine.id
) AS credit
WHERE credit.value IS NOT NULL
"""
# One round trip for the whole record; each part is an array or a count beside the turn.
_RECORD_SQL = """
SELECT t.user_id, t.chat_id, t.created_at,
       ARRAY(SELECT f.value FROM feedback f WHERE f.turn_id = t.id ORDER BY f.user_id, f.source),
       (SELECT count(*) FROM reply_signals s WHERE s.turn_id = t.id AND s.signal = 'tool_use'),
       (SELECT count(*) FROM reply_signals s WHERE s.turn_id = t.id AND s.signal = 'proactive_success'),
       ARRAY(SELECT l.created_at FROM turns l
             WHERE l.user_id = t.user_id AND l.chat_id = t.chat_id AND l.role = 'user' AND l.id > t.id
             ORDER BY l.id LIMIT %(later)s)
FROM turns t WHERE t.id = %(turn_id)s
"""
_USED_SQL = """
SELECT rm.memory_id, rm.share, m.text FROM reply_memories rm JOIN memories m ON m.id = rm.memory_id
WHERE rm.turn_id = %s ORDER BY rm.share DESC, rm.memory_id
"""
_SIGNAL_SQL = """
INSERT INTO reply_signals (turn_id, signal, key, created_at) VALUES (%s, %s, %s, %s)
ON CONFLICT DO NOTHING
"""


class PostgresRewards(PostgresPeople):
    """RewardLog over the pool."""

    async def memory_rewards(self, user_id: str, memory_ids: Sequence[int]) -> dict[int, float]:
        if not memory_ids:
            return {}
        async with self._connection() as conn:
            cursor = await conn.execute(_REWARDS_SQL, {"user_id": user_id, "ids": list(memory_ids)})
            rows = await cursor.fetchall()
        return {int(mid): float(credit) for mid, credit in rows if credit is not None}

    async def reply_record(self, turn_id: int, later_limit: int) -> ReplyRecord | None:
        async with self._connection() as conn:
            cursor = await conn.execute(_RECORD_SQL, {"turn_id": turn_id, "later": max(later_limit, 0)})
            row = await cursor.fetchone()
            if row is None:
                return None
            used = await (await conn.execute(_USED_SQL, (turn_id,))).fetchall()
        user_id, chat_id, created_at, reactions, tool_uses, proactive, later = row
        return ReplyRecord(
            turn_id=turn_id,
            user_id=user_id,
            chat_id=chat_id,
            created_at=to_utc(created_at),
            reactions=tuple(float(value) for value in reactions),
            tool_uses=int(tool_uses),
            proactive_successes=int(proactive),
            later_turns=tuple(to_utc(at) for at in later),
            memories=tuple(UsedMemory(int(mid), float(share), text) for mid, share, text in used),
        )

    async def record_signal(self, turn_id: int, signal: Signal, key: str, at: datetime) -> None:
        async with self._connection() as conn:
            await conn.execute(_SIGNAL_SQL, (turn_id, signal, key, to_utc(at)))
