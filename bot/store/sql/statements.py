"""SQL that both schemas run alike, written once with `?` marks: SQLite runs it as written, and
PostgreSQL through `POSTGRES.sql(...)`, which puts psycopg's `%s` in their place.

Only statements that are the same text in both dialects belong here. Where the schemas differ (FTS5
against tsvector, epoch seconds against timestamptz defaults), each store keeps its own SQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.core.learning.models import ExampleSnapshot, NewAdapter
from bot.core.models import Feedback
from bot.store.sql.learning_rows import ADAPTER_COLUMNS, RUN_COLUMNS
from bot.store.sql.rows import Dialect

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
KEEP_FILES = "SELECT keep_files FROM users WHERE id = ?"
SPOKEN_REPLIES = "SELECT spoken_replies FROM users WHERE id = ?"
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

# Everything kept of a person, for /forget all, children before parents; each takes the person's id.
# Others' reactions to their turns, stored prompts, credits and signals go with the turns (cascade),
# app versions and state with the apps. A new table that holds a person's rows gets a line here
# (tests/store/test_forget_everywhere.py reads every table from the catalog and finds any it misses).
FORGET_PERSON = (
    "DELETE FROM feedback WHERE user_id = ?",
    "DELETE FROM training_examples WHERE user_id = ?",
    "DELETE FROM platform_messages WHERE user_id = ?",
    "DELETE FROM memories WHERE user_id = ?",
    "DELETE FROM proactive_sent WHERE user_id = ?",  # [proactive]
    "DELETE FROM reminders WHERE user_id = ?",
    "DELETE FROM proactive_settings WHERE user_id = ?",
    "DELETE FROM turns WHERE user_id = ?",
    "DELETE FROM usage_records WHERE user_id = ?",  # [personal]
    "DELETE FROM app_builds WHERE owner = ?",
    "DELETE FROM apps WHERE owner = ?",
    "DELETE FROM chat_personas WHERE owner = ?",  # [personal]: their private chats' persona
    "DELETE FROM chat_models WHERE owner = ?",  # [personal]: and model
    "DELETE FROM users WHERE id = ?",
)
# The tables FORGET_PERSON touches, with those its cascades reach: what PostgreSQL vacuums after.
FORGOTTEN_TABLES = (
    "feedback", "training_examples", "platform_messages", "memories", "memory_sources", "turns",
    "generations", "canary_entries", "reply_memories", "reply_signals", "app_builds", "apps", "app_versions",
    "app_state", "proactive_sent", "reminders", "proactive_settings", "usage_records", "chat_personas",
    "chat_models", "users",
)  # fmt: skip


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


# -- LearningLog ([learning]) -------------------------------------------------------------------
# Replies of a window that have a stored prompt and a rating: a current reaction, or a recorded
# tool use or proactive success (β, the turns that followed, rates nothing by itself). One query for
# everyone; a reply whose own memory was forgotten is forgotten here too, as in recent_turns.
RATED_REPLIES = """
SELECT t.id, t.user_id, t.created_at, t.text, g.prompt, g.adapter_version, g.cut, g.base_model,
       g.reward_model_version, g.n, g.persona, g.arm, g.canary_id, u.training_consent
FROM turns t
JOIN generations g ON g.turn_id = t.id
JOIN users u ON u.id = t.user_id
WHERE t.role = 'assistant' AND t.created_at >= ? AND t.created_at < ?
  AND EXISTS (SELECT 1 FROM memories m WHERE m.id = t.memory_id)
  AND (EXISTS (SELECT 1 FROM feedback f WHERE f.turn_id = t.id)
       OR EXISTS (SELECT 1 FROM reply_signals s WHERE s.turn_id = t.id))
ORDER BY t.created_at, t.id
"""
TRAINING_CONSENT = "SELECT training_consent FROM users WHERE id = ?"
# An unknown person gets a row: an opt-out given before a first message must hold.
SET_TRAINING_CONSENT = """
INSERT INTO users (id, created_at, training_consent) VALUES (?, ?, ?)
ON CONFLICT (id) DO UPDATE SET training_consent = excluded.training_consent
"""
# Through the run's and the turn's rows, so a reply forgotten meanwhile (or an unknown run) is
# skipped instead of failing the batch on a foreign key.
RECORD_EXAMPLE = """
INSERT INTO training_examples (run_id, turn_id, user_id, label, split, reward, parts)
SELECT r.id, t.id, ?, ?, ?, ?, ? FROM training_runs r, turns t WHERE r.id = ? AND t.id = ?
ON CONFLICT DO NOTHING
"""
RUN_EXAMPLES = """
SELECT turn_id, user_id, label, split, reward, parts FROM training_examples
WHERE run_id = ? ORDER BY turn_id
"""
# Per version (NULL: the base model, and every reply stored before generations were kept), base
# first. A reply is rated when it has a reaction; positive when their mean is above zero.
VERSION_RATES = """
SELECT adapter_version, count(*) AS replies, count(mean) AS rated,
       sum(CASE WHEN mean > 0 THEN 1 ELSE 0 END) AS positive
FROM (
    SELECT g.adapter_version, (SELECT avg(f.value) FROM feedback f WHERE f.turn_id = t.id) AS mean
    FROM turns t LEFT JOIN generations g ON g.turn_id = t.id
    WHERE t.role = 'assistant' AND t.created_at >= ?
) per_reply
GROUP BY adapter_version
ORDER BY adapter_version IS NOT NULL, adapter_version
"""

# -- AdapterRegistry ([learning]) ---------------------------------------------------------------
_ADAPTER = ", ".join(ADAPTER_COLUMNS)
_RUN = ", ".join(RUN_COLUMNS)
ADD_ADAPTER = f"""
INSERT INTO adapters (scope, base_model, path, window_start, window_end, status, dataset, metrics,
                      gate, run_id, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING {_ADAPTER}
"""
GET_ADAPTER = f"SELECT {_ADAPTER} FROM adapters WHERE version = ?"
LIST_ADAPTERS = f"SELECT {_ADAPTER} FROM adapters WHERE scope = ? ORDER BY version DESC"
SERVING_ADAPTER = f"SELECT {_ADAPTER} FROM adapters WHERE scope = ? AND status = 'serving'"
SET_ADAPTER_STATUS = "UPDATE adapters SET status = ?, gate = COALESCE(?, gate) WHERE version = ?"
# Promotion and serve_base: the scope's serving version steps down first, so that the partial
# unique index (one serving per scope) never sees two.
RETIRE_SERVING = f"""
UPDATE adapters SET status = 'retired' WHERE scope = ? AND status = 'serving' RETURNING {_ADAPTER}
"""
SERVE_ADAPTER = "UPDATE adapters SET status = 'serving', promoted_at = ? WHERE version = ?"
# start_run: a redelivered job's run, then any run whose worker went quiet, fail before the insert;
# the insert then meets the one-running index only if a live run holds it.
FAIL_SAME_JOB = """
UPDATE training_runs SET status = 'failed', finished_at = ?, message = ?
WHERE status = 'running' AND job_key = ?
"""
FAIL_STALE = """
UPDATE training_runs SET status = 'failed', finished_at = ?, message = ?
WHERE status = 'running' AND COALESCE(heartbeat_at, started_at) < ?
"""
START_RUN = f"""
INSERT INTO training_runs (job_key, status, started_at, heartbeat_at) VALUES (?, 'running', ?, ?)
ON CONFLICT DO NOTHING RETURNING {_RUN}
"""
# Only a running run finishes: one that a successor failed (redelivered, stale) stays failed.
FINISH_RUN = """
UPDATE training_runs
SET status = ?, message = ?, finished_at = ?, heartbeat_at = ?, adapter_version = ?,
    result = COALESCE(?, result)
WHERE id = ? AND status = 'running'
"""
GET_RUN = f"SELECT {_RUN} FROM training_runs WHERE id = ?"
LIST_RUNS = f"SELECT {_RUN} FROM training_runs ORDER BY id DESC LIMIT ?"


def adapter_params(adapter: NewAdapter, created_at: datetime, dialect: Dialect) -> tuple[Any, ...]:
    """ADD_ADAPTER's parameters, in its column order."""
    return (
        adapter.scope,
        adapter.base_model,
        adapter.path,
        dialect.moment_param(adapter.window_start),
        dialect.moment_param(adapter.window_end),
        adapter.status,
        dialect.json_param(adapter.dataset),
        dialect.json_param(adapter.metrics),
        dialect.json_param(adapter.gate),
        adapter.run_id,
        dialect.moment_param(created_at),
    )


def example_params(run_id: int, example: ExampleSnapshot, dialect: Dialect) -> tuple[Any, ...]:
    """RECORD_EXAMPLE's parameters, in its order."""
    return (
        example.user_id,
        example.label,
        example.split,
        float(example.reward),
        dialect.json_param(example.parts),
        run_id,
        example.turn_id,
    )
