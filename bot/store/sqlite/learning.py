"""LearningLog on SQLite: the rated replies a night trains on, each person's training switch, the
snapshots of what a run trained on, and the reaction rate per adapter version. Also how a reply's
Generation is stored with it, and scrubbed when a memory it used or quotes is forgotten."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import UTC, datetime

import aiosqlite

from bot.core.learning.models import ExampleSnapshot, RatedReply, VersionRate
from bot.core.models import Generation
from bot.store.sql import statements
from bot.store.sql.learning_rows import (
    needles,
    prompt_text,
    rated_from_row,
    snapshot_from_row,
    variant_params,
)
from bot.store.sql.rows import to_epoch
from bot.store.sqlite.db import SqliteDatabase
from bot.store.sqlite.rows import SQLITE

_INSERT_GENERATION_SQL = """
INSERT INTO generations (turn_id, prompt, adapter_version, cut, base_model, reward_model_version, n,
                         persona, arm, canary_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING
"""
# The person's stored prompts that quote `needle` in any message's content. json_each reads the
# messages as text, so quotes and line breaks in a memory match as they were said, not as escaped.
_QUOTING_SQL = """
SELECT g.turn_id FROM generations g JOIN turns t ON t.id = g.turn_id
WHERE t.user_id = ? AND EXISTS (
    SELECT 1 FROM json_each(g.prompt) j WHERE instr(json_extract(j.value, '$.content'), ?) > 0
)
"""
# Prompts that used one of the memories, replies that are one of them, and replies to one of them.
_TOUCHING_SQL = """
SELECT turn_id FROM reply_memories WHERE memory_id IN ({marks})
UNION SELECT t.id FROM turns t WHERE t.memory_id IN ({marks}) AND t.user_id = ?
UNION SELECT r.id FROM turns r JOIN turns s ON s.id = r.reply_to
      WHERE s.memory_id IN ({marks}) AND s.user_id = ?
"""


async def insert_generation(db: aiosqlite.Connection, turn_id: int, generation: Generation) -> None:
    """Keep how a reply was made, in the transaction that stores the reply."""
    await db.execute(
        _INSERT_GENERATION_SQL,
        (
            turn_id,
            prompt_text(generation.prompt),
            generation.adapter_version,
            int(generation.cut),
            *variant_params(generation),
        ),
    )


async def scrub_generations(
    db: aiosqlite.Connection, user_id: str, memory_ids: Collection[int], texts: Sequence[str]
) -> None:
    """Delete the person's stored prompts that used, quote or answer the forgotten memories, and
    the training snapshots of those replies, in the forgetting's transaction. Call it before the
    memories' reply_memories rows go."""
    ids = sorted(memory_ids)
    doomed: set[int] = set()
    if ids:
        marks = ",".join("?" for _ in ids)
        rows = await db.execute_fetchall(
            _TOUCHING_SQL.format(marks=marks), (*ids, *ids, user_id, *ids, user_id)
        )
        doomed.update(int(row["turn_id"]) for row in rows)
    for needle in needles(texts):
        rows = await db.execute_fetchall(_QUOTING_SQL, (user_id, needle))
        doomed.update(int(row["turn_id"]) for row in rows)
    for turn_id in sorted(doomed):
        await db.execute("DELETE FROM generations WHERE turn_id = ?", (turn_id,))
        await db.execute("DELETE FROM training_examples WHERE turn_id = ?", (turn_id,))


class SqliteLearning:
    """LearningLog over one SQLite file."""

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    async def rated_replies(self, since: datetime, until: datetime) -> list[RatedReply]:
        rows = await self._db.read(statements.RATED_REPLIES, (to_epoch(since), to_epoch(until)))
        return [rated_from_row(row, SQLITE) for row in rows]

    async def set_training_consent(self, user_id: str, consent: bool | None) -> None:
        stored = None if consent is None else int(consent)
        async with self._db.write() as db:
            await db.execute(statements.SET_TRAINING_CONSENT, (user_id, _now(), stored))

    async def training_consent(self, user_id: str) -> bool | None:
        rows = await self._db.read(statements.TRAINING_CONSENT, (user_id,))
        if not rows or rows[0]["training_consent"] is None:
            return None
        return bool(rows[0]["training_consent"])

    async def record_examples(self, run_id: int, examples: Sequence[ExampleSnapshot]) -> None:
        if not examples:
            return
        params = [statements.example_params(run_id, example, SQLITE) for example in examples]
        async with self._db.write() as db:
            await db.executemany(statements.RECORD_EXAMPLE, params)

    async def run_examples(self, run_id: int) -> list[ExampleSnapshot]:
        rows = await self._db.read(statements.RUN_EXAMPLES, (run_id,))
        return [snapshot_from_row(row) for row in rows]

    async def version_rates(self, since: datetime) -> list[VersionRate]:
        rows = await self._db.read(statements.VERSION_RATES, (to_epoch(since),))
        return [
            VersionRate(row["adapter_version"], int(row["replies"]), int(row["rated"]), int(row["positive"]))
            for row in rows
        ]


def _now() -> float:
    return datetime.now(UTC).timestamp()
