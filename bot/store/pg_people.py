"""The PostgreSQL store's bookkeeping about people and the database: platform message links,
whether a person can be reached, counts, daily activity and upkeep."""

from __future__ import annotations

from bot.core.models import DayStats, MessageLink, Stats
from bot.store.pg_pool import PostgresPool
from bot.store.rows import activity_window, day_stats

_LINK_MESSAGE_SQL = """
INSERT INTO platform_messages (platform, chat_id, message_id, turn_id, user_id)
VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING
"""
_FIND_MESSAGE_SQL = """
SELECT turn_id, user_id FROM platform_messages WHERE platform = %s AND chat_id = %s AND message_id = %s
"""
_SET_ACTIVE_SQL = """
INSERT INTO users AS u (id, created_at, active) VALUES (%s, now(), %s)
ON CONFLICT (id) DO UPDATE SET active = excluded.active
"""
_STATS_SQL = """
SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM turns),
       (SELECT count(*) FROM memories), (SELECT count(*) FROM feedback)
"""
# (kind, UTC day, count, extra) per day since %(since)s; see rows.day_stats.
_ACTIVITY_SQL = """
SELECT 't', (created_at AT TIME ZONE 'UTC')::date AS day, count(*),
       count(DISTINCT user_id) FILTER (WHERE role = 'user')
  FROM turns WHERE created_at >= (%(since)s::date)::timestamp AT TIME ZONE 'UTC' GROUP BY 2
UNION ALL
SELECT 'm', (created_at AT TIME ZONE 'UTC')::date, count(*), NULL
  FROM memories WHERE created_at >= (%(since)s::date)::timestamp AT TIME ZONE 'UTC' GROUP BY 2
UNION ALL
SELECT 'f', (created_at AT TIME ZONE 'UTC')::date, count(*), avg(value)
  FROM feedback WHERE created_at >= (%(since)s::date)::timestamp AT TIME ZONE 'UTC' GROUP BY 2
"""


class PostgresPeople(PostgresPool):
    """Message links, active flags, stats, daily activity and maintenance over the pool."""

    async def link_message(self, link: MessageLink) -> None:
        async with self._connection() as conn:
            await conn.execute(
                _LINK_MESSAGE_SQL, (link.platform, link.chat_id, link.message_id, link.turn_id, link.user_id)
            )

    async def find_message(self, platform: str, chat_id: str, message_id: str) -> MessageLink | None:
        async with self._connection() as conn:
            cursor = await conn.execute(_FIND_MESSAGE_SQL, (platform, chat_id, message_id))
            row = await cursor.fetchone()
        return MessageLink(platform, chat_id, message_id, row[0], row[1]) if row else None

    async def set_user_active(self, user_id: str, active: bool) -> None:
        async with self._connection() as conn:
            await conn.execute(_SET_ACTIVE_SQL, (user_id, active))

    async def is_user_active(self, user_id: str) -> bool:
        async with self._connection() as conn:
            cursor = await conn.execute("SELECT active FROM users WHERE id = %s", (user_id,))
            row = await cursor.fetchone()
        return bool(row[0]) if row else True

    async def stats(self) -> Stats:
        async with self._connection() as conn:
            cursor = await conn.execute(_STATS_SQL)
            row = await cursor.fetchone()
        users, turns, memories, feedback = row or (0, 0, 0, 0)
        return Stats(
            backend=self.backend,
            users=users,
            turns=turns,
            memories=memories,
            feedback_events=feedback,
        )

    async def daily_activity(self, days: int) -> list[DayStats]:
        window = activity_window(days)
        if not window:
            return []
        async with self._connection() as conn:
            cursor = await conn.execute(_ACTIVITY_SQL, {"since": window[0]})
            rows = await cursor.fetchall()
        return day_stats(window, [tuple(row) for row in rows])

    async def maintain(self) -> list[str]:
        # Autovacuum analyses too, but only after enough rows changed; the HNSW and per-user plans
        # depend on fresh statistics after a large import.
        async with self._connection() as conn:
            await conn.execute("ANALYZE memories")
            await conn.execute("ANALYZE turns")
        return ["ANALYZE memories", "ANALYZE turns"]
