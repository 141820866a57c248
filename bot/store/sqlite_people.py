"""The SQLite store's bookkeeping about people and the database: platform message links, whether a
person can be reached, counts, daily activity and upkeep."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from bot.core.models import DayStats, MessageLink, Stats
from bot.store.rows import activity_window, day_stats, to_epoch
from bot.store.sqlite_db import SqliteDatabase, map_error

# (kind, UTC day, count, extra) per day since the bound time; see rows.day_stats.
_ACTIVITY_SQL = """
SELECT 't', date(created_at, 'unixepoch'), count(*),
       count(DISTINCT CASE WHEN role = 'user' THEN user_id END)
  FROM turns WHERE created_at >= ? GROUP BY 2
UNION ALL
SELECT 'm', date(created_at, 'unixepoch'), count(*), NULL
  FROM memories WHERE created_at >= ? GROUP BY 2
UNION ALL
SELECT 'f', date(created_at, 'unixepoch'), count(*), avg(value)
  FROM feedback WHERE created_at >= ? GROUP BY 2
"""


class SqlitePeople(SqliteDatabase):
    """Message links, active flags, stats, daily activity and maintenance over one SQLite file."""

    async def link_message(self, link: MessageLink) -> None:
        async with self._write() as db:
            await db.execute(
                "INSERT INTO platform_messages(platform, chat_id, message_id, turn_id, user_id, created_at)"
                " VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                (link.platform, link.chat_id, link.message_id, link.turn_id, link.user_id, _now()),
            )

    async def find_message(self, platform: str, chat_id: str, message_id: str) -> MessageLink | None:
        rows = await self._read(
            "SELECT turn_id, user_id FROM platform_messages"
            " WHERE platform = ? AND chat_id = ? AND message_id = ?",
            (platform, chat_id, message_id),
        )
        return MessageLink(platform, chat_id, message_id, rows[0][0], rows[0][1]) if rows else None

    async def set_user_active(self, user_id: str, active: bool) -> None:
        async with self._write() as db:
            await db.execute(
                "INSERT INTO users(id, created_at, active) VALUES (?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET active = excluded.active",
                (user_id, _now(), active),
            )

    async def is_user_active(self, user_id: str) -> bool:
        rows = await self._read("SELECT active FROM users WHERE id = ?", (user_id,))
        return bool(rows[0][0]) if rows else True

    async def stats(self) -> Stats:
        rows = await self._read(
            "SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM turns),"
            " (SELECT count(*) FROM memories), (SELECT count(*) FROM feedback)"
        )
        users, turns, memories, feedback = rows[0]
        return Stats(self.backend, users, turns, memories, feedback)

    async def daily_activity(self, days: int) -> list[DayStats]:
        window = activity_window(days)
        if not window:
            return []
        since = to_epoch(datetime.combine(window[0], datetime.min.time(), UTC))
        rows = await self._read(_ACTIVITY_SQL, (since, since, since))
        return day_stats(window, [tuple(row) for row in rows])

    async def maintain(self) -> list[str]:
        async with self._lock:
            try:
                # Refresh the planner's statistics, then fold the WAL back into the database file
                # so that it does not grow without bound under a long-running bot.
                await self._db.execute("PRAGMA optimize")
                await self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise map_error(exc, self._path) from None
        return ["PRAGMA optimize", "PRAGMA wal_checkpoint(TRUNCATE)"]


def _now() -> float:
    return datetime.now(UTC).timestamp()
