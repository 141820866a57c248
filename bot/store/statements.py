"""SQL that both schemas run alike, written once with `?` marks: SQLite runs it as written, and
PostgreSQL through `POSTGRES.sql(...)`, which puts psycopg's `%s` in their place.

Only statements that are the same text in both dialects belong here. Where the schemas differ (FTS5
against tsvector, epoch seconds against timestamptz defaults), each store keeps its own SQL.
"""

from __future__ import annotations

from typing import Any

from bot.core.models import Feedback
from bot.store.rows import Dialect

# A second reaction from the same person and source replaces the first (TurnLog.record_feedback).
UPSERT_FEEDBACK = """
INSERT INTO feedback (turn_id, user_id, source, emoji, value, created_at)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (turn_id, user_id, source)
DO UPDATE SET emoji = excluded.emoji, value = excluded.value, created_at = excluded.created_at
"""
REMOVE_FEEDBACK = "DELETE FROM feedback WHERE turn_id = ? AND user_id = ? AND source = ?"
FIND_MESSAGE = """
SELECT turn_id, user_id FROM platform_messages WHERE platform = ? AND chat_id = ? AND message_id = ?
"""
USER_ACTIVE = "SELECT active FROM users WHERE id = ?"
MEMORY_COUNT = "SELECT memory_count FROM users WHERE id = ?"
MEMORY_EXISTS = "SELECT 1 AS found FROM memories WHERE id = ? AND user_id = ?"
STATS = """
SELECT (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM turns) AS turns,
       (SELECT count(*) FROM memories) AS memories, (SELECT count(*) FROM feedback) AS feedback
"""
# The memories a reply's prompt used, largest share first (RewardLog.reply_record).
USED_MEMORIES = """
SELECT rm.memory_id, rm.share, m.text FROM reply_memories rm JOIN memories m ON m.id = rm.memory_id
WHERE rm.turn_id = ? ORDER BY rm.share DESC, rm.memory_id
"""
RECORD_SIGNAL = """
INSERT INTO reply_signals (turn_id, signal, key, created_at) VALUES (?, ?, ?, ?)
ON CONFLICT DO NOTHING
"""


def feedback_params(feedback: Feedback, dialect: Dialect) -> tuple[Any, ...]:
    """UPSERT_FEEDBACK's parameters, in its column order."""
    return (
        feedback.turn_id,
        feedback.user_id,
        feedback.source,
        feedback.emoji,
        feedback.value,
        dialect.moment_param(feedback.created_at),
    )
