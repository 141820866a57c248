"""LearningLog on PostgreSQL: the rated replies a night trains on, each person's training switch,
the snapshots of what a run trained on, and the reaction rate per adapter version. Also the part
of forgetting that scrubs stored prompts (`SCRUB_CTES`, run inside pg_memories' forget)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from bot.core.learning.models import ExampleSnapshot, RatedReply, VersionRate
from bot.store.postgres.pool import PostgresPool
from bot.store.postgres.rows import POSTGRES, to_utc
from bot.store.sql import statements
from bot.store.sql.learning_rows import NEEDLE_CHARS, rated_from_row, snapshot_from_row

# Common table expressions for pg_memories' _FORGET_SQL, after its `doomed` (the memory ids that
# go): the person's stored prompts that used one of them (reply_memories, read before the same
# statement deletes those rows: one snapshot), replies that are one of them or answer one of them,
# and prompts whose messages quote one's start (learning_rows.needles, the same rule as SQLite's),
# go with their training snapshots.
SCRUB_CTES = f"""
doomed_text AS (
    SELECT left(m.text, {NEEDLE_CHARS}) AS needle FROM memories m
    WHERE m.id IN (SELECT id FROM doomed) AND btrim(m.text, E' \\t\\n\\r') <> ''
), scrubbed AS (
    SELECT g.turn_id FROM generations g JOIN turns t ON t.id = g.turn_id
    WHERE t.user_id = %(user_id)s AND (
        g.turn_id IN (SELECT rm.turn_id FROM reply_memories rm WHERE rm.memory_id IN (SELECT id FROM doomed))
        OR t.memory_id IN (SELECT id FROM doomed)
        OR t.reply_to IN (SELECT s.id FROM turns s
                          WHERE s.memory_id IN (SELECT id FROM doomed) AND s.user_id = %(user_id)s)
        OR EXISTS (SELECT 1 FROM jsonb_array_elements(g.prompt) e, doomed_text d
                   WHERE strpos(e.value ->> 'content', d.needle) > 0)
    )
), prompts_gone AS (DELETE FROM generations WHERE turn_id IN (SELECT turn_id FROM scrubbed)),
   snapshots_gone AS (DELETE FROM training_examples WHERE turn_id IN (SELECT turn_id FROM scrubbed))
"""
_RATED_SQL = POSTGRES.sql(statements.RATED_REPLIES)
_CONSENT_SQL = POSTGRES.sql(statements.TRAINING_CONSENT)
_SET_CONSENT_SQL = POSTGRES.sql(statements.SET_TRAINING_CONSENT)
_RECORD_SQL = POSTGRES.sql(statements.RECORD_EXAMPLE)
_EXAMPLES_SQL = POSTGRES.sql(statements.RUN_EXAMPLES)
_RATES_SQL = POSTGRES.sql(statements.VERSION_RATES)


class PostgresLearning:
    """LearningLog over the pool."""

    def __init__(self, pool: PostgresPool) -> None:
        self._pool = pool

    async def rated_replies(self, since: datetime, until: datetime) -> list[RatedReply]:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_RATED_SQL, (to_utc(since), to_utc(until)))
            return [rated_from_row(row, POSTGRES) for row in await cursor.fetchall()]

    async def set_training_consent(self, user_id: str, consent: bool | None) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(_SET_CONSENT_SQL, (user_id, datetime.now(UTC), consent))

    async def training_consent(self, user_id: str) -> bool | None:
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_CONSENT_SQL, (user_id,))).fetchone()
        if row is None or row["training_consent"] is None:
            return None
        return bool(row["training_consent"])

    async def record_examples(self, run_id: int, examples: Sequence[ExampleSnapshot]) -> None:
        if not examples:
            return
        params = [statements.example_params(run_id, example, POSTGRES) for example in examples]
        async with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cursor:
            await cursor.executemany(_RECORD_SQL, params)

    async def run_examples(self, run_id: int) -> list[ExampleSnapshot]:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_EXAMPLES_SQL, (run_id,))
            return [snapshot_from_row(row) for row in await cursor.fetchall()]

    async def version_rates(self, since: datetime) -> list[VersionRate]:
        async with self._pool.connection() as conn:
            rows = await (await conn.execute(_RATES_SQL, (to_utc(since),))).fetchall()
        return [
            VersionRate(row["adapter_version"], int(row["replies"]), int(row["rated"]), int(row["positive"]))
            for row in rows
        ]
