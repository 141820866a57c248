"""TurnLog on PostgreSQL: turns (each stored with its memory in one statement), reactions, platform
message links, and whether a person can be reached."""

from __future__ import annotations

from typing import Any

from bot.core.errors import StoreError
from bot.core.models import Feedback, Generation, MessageLink, NewTurn, Turn
from bot.store.postgres.pool import PostgresPool
from bot.store.postgres.rows import POSTGRES, jsonb, to_utc
from bot.store.sql import statements
from bot.store.sql.learning_rows import VARIANT_COLUMNS, prompt_json, variant_params
from bot.store.sql.rows import TURN_COLUMNS, select_list, stored_turn, turn_from_row

_COLUMNS = select_list(TURN_COLUMNS, "t")
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
), generation AS (
    -- How a reply was made ([learning]); a person's turn has none.
    INSERT INTO generations (turn_id, prompt, adapter_version, cut, base_model, reward_model_version, n,
                             persona, arm, canary_id)
    SELECT turn.id, %(prompt)s::jsonb, %(adapter_version)s::integer, %(cut)s::boolean,
           %(base_model)s::text, %(reward_model_version)s::integer, %(n)s::integer, %(persona)s::text,
           %(arm)s::text, %(canary_id)s::integer
    FROM turn
    WHERE %(prompt)s::jsonb IS NOT NULL
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
_TURN_BY_KEY_SQL = f"SELECT {_COLUMNS} FROM turns t WHERE t.idempotency_key = %s"
_RECENT_TURNS_SQL = f"""
SELECT * FROM (
    SELECT {_COLUMNS} FROM turns t WHERE t.user_id = %s AND t.chat_id = %s
      -- A turn whose memory was forgotten is forgotten as history too.
      AND EXISTS (SELECT 1 FROM memories m WHERE m.id = t.memory_id)
    ORDER BY t.id DESC LIMIT %s
) recent ORDER BY id
"""
_LINK_MESSAGE_SQL = """
INSERT INTO platform_messages (platform, chat_id, message_id, turn_id, user_id)
VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING
"""
_SET_ACTIVE_SQL = """
INSERT INTO users AS u (id, created_at, active) VALUES (%s, now(), %s)
ON CONFLICT (id) DO UPDATE SET active = excluded.active
"""
_SET_KEEP_FILES_SQL = """
INSERT INTO users AS u (id, created_at, keep_files) VALUES (%s, now(), %s)
ON CONFLICT (id) DO UPDATE SET keep_files = excluded.keep_files
"""
_KEEP_FILES_SQL = POSTGRES.sql(statements.KEEP_FILES)
_SET_SPOKEN_SQL = """
INSERT INTO users AS u (id, created_at, spoken_replies) VALUES (%s, now(), %s)
ON CONFLICT (id) DO UPDATE SET spoken_replies = excluded.spoken_replies
"""
_SPOKEN_SQL = POSTGRES.sql(statements.SPOKEN_REPLIES)
_UPSERT_FEEDBACK_SQL = POSTGRES.sql(statements.UPSERT_FEEDBACK)
_REMOVE_FEEDBACK_SQL = POSTGRES.sql(statements.REMOVE_FEEDBACK)
_FIND_MESSAGE_SQL = POSTGRES.sql(statements.FIND_MESSAGE)
_USER_ACTIVE_SQL = POSTGRES.sql(statements.USER_ACTIVE)
# A person's turn has no generation; its variant parameters are unused (the insert is skipped).
_NO_GENERATION = Generation(prompt=(), adapter_version=None, cut=False)


def _add_turn_params(turn: NewTurn) -> dict[str, Any]:
    generation = turn.generation
    return {
        "user_id": turn.user_id,
        "chat_id": turn.chat_id,
        "role": turn.role,
        "text": turn.text,
        "created_at": to_utc(turn.created_at),
        "used": list(turn.used_memory_ids),
        "reply_to": turn.reply_to,
        "key": turn.idempotency_key,
        "meta": jsonb(turn.meta),
        "embedding": turn.embedding,
        "model": turn.embedding_model,
        "kind": turn.memory_kind,
        # No shares (a user turn, an older caller): nothing for a reaction to credit.
        "share_ids": list(turn.used_memory_ids[: len(turn.memory_shares)]),
        "shares": list(turn.memory_shares[: len(turn.used_memory_ids)]),
        "prompt": None if generation is None else jsonb(prompt_json(generation.prompt)),
        "adapter_version": None if generation is None else generation.adapter_version,
        "cut": generation is not None and generation.cut,
        **dict(zip(VARIANT_COLUMNS, variant_params(generation or _NO_GENERATION), strict=True)),
    }


class PostgresTurns:
    """TurnLog over the pool."""

    def __init__(self, pool: PostgresPool) -> None:
        self._pool = pool

    async def add_turn(self, turn: NewTurn) -> Turn:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_ADD_TURN_SQL, _add_turn_params(turn))
            ids = await cursor.fetchone()
            if ids is None:  # a retry: the key is stored already
                cursor = await conn.execute(_TURN_BY_KEY_SQL, (turn.idempotency_key,))
                existing = await cursor.fetchone()
                if existing is None:
                    raise StoreError("idempotency key conflicted but no turn holds it")
                return turn_from_row(existing, POSTGRES)
        return stored_turn(turn, ids["id"], ids["memory_id"], to_utc(turn.created_at))

    async def recent_turns(self, user_id: str, chat_id: str, limit: int) -> list[Turn]:
        if limit <= 0:
            return []
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_RECENT_TURNS_SQL, (user_id, chat_id, limit))
            return [turn_from_row(row, POSTGRES) for row in await cursor.fetchall()]

    async def record_feedback(self, feedback: Feedback) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(_UPSERT_FEEDBACK_SQL, statements.feedback_params(feedback, POSTGRES))

    async def remove_feedback(self, turn_id: int, user_id: str, source: str) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(_REMOVE_FEEDBACK_SQL, (turn_id, user_id, source))

    async def link_message(self, link: MessageLink) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(
                _LINK_MESSAGE_SQL, (link.platform, link.chat_id, link.message_id, link.turn_id, link.user_id)
            )

    async def find_message(self, platform: str, chat_id: str, message_id: str) -> MessageLink | None:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_FIND_MESSAGE_SQL, (platform, chat_id, message_id))
            row = await cursor.fetchone()
        return MessageLink(platform, chat_id, message_id, row["turn_id"], row["user_id"]) if row else None

    async def set_user_active(self, user_id: str, active: bool) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(_SET_ACTIVE_SQL, (user_id, active))

    async def is_user_active(self, user_id: str) -> bool:
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_USER_ACTIVE_SQL, (user_id,))
            row = await cursor.fetchone()
        return bool(row["active"]) if row else True

    async def set_keep_files(self, user_id: str, keep: bool) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(_SET_KEEP_FILES_SQL, (user_id, keep))

    async def keeps_files(self, user_id: str) -> bool:
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_KEEP_FILES_SQL, (user_id,))).fetchone()
        return bool(row["keep_files"]) if row else False

    async def set_spoken_replies(self, user_id: str, on: bool) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(_SET_SPOKEN_SQL, (user_id, on))

    async def speaks_replies(self, user_id: str) -> bool:
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_SPOKEN_SQL, (user_id,))).fetchone()
        return bool(row["spoken_replies"]) if row else False
