"""TurnLog on SQLite: turns (each stored with its memory), reactions, platform message links, and
whether a person can be reached."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.models import Feedback, MessageLink, NewMemory, NewTurn, Turn
from bot.store.sql import statements
from bot.store.sql.rows import TURN_COLUMNS, dump_json, from_epoch, stored_turn, to_epoch, turn_from_row
from bot.store.sqlite.db import SqliteDatabase
from bot.store.sqlite.learning import insert_generation
from bot.store.sqlite.memories import ensure_user, insert_memory
from bot.store.sqlite.rows import SQLITE

_COLUMNS = ", ".join(TURN_COLUMNS)
_TURN_BY_KEY_SQL = f"SELECT {_COLUMNS} FROM turns WHERE idempotency_key = ?"
_INSERT_TURN_SQL = """
INSERT INTO turns(user_id, chat_id, role, text, created_at, used_memory_ids, reply_to, idempotency_key, meta)
VALUES (?,?,?,?,?,?,?,?,?)
"""
_INSERT_SHARE_SQL = "INSERT INTO reply_memories(turn_id, memory_id, share) VALUES (?,?,?)"
# A turn whose memory was forgotten is forgotten as history too.
_RECENT_SQL = f"""
SELECT {_COLUMNS} FROM turns WHERE user_id = ? AND chat_id = ?
  AND EXISTS (SELECT 1 FROM memories m WHERE m.id = turns.memory_id)
ORDER BY id DESC LIMIT ?
"""
_LINK_SQL = """
INSERT INTO platform_messages(platform, chat_id, message_id, turn_id, user_id, created_at)
VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING
"""
_SET_ACTIVE_SQL = """
INSERT INTO users(id, created_at, active) VALUES (?, ?, ?)
ON CONFLICT(id) DO UPDATE SET active = excluded.active
"""
_SET_KEEP_FILES_SQL = """
INSERT INTO users(id, created_at, keep_files) VALUES (?, ?, ?)
ON CONFLICT(id) DO UPDATE SET keep_files = excluded.keep_files
"""
_SET_SPOKEN_SQL = """
INSERT INTO users(id, created_at, spoken_replies) VALUES (?, ?, ?)
ON CONFLICT(id) DO UPDATE SET spoken_replies = excluded.spoken_replies
"""


def turn_memory(turn: NewTurn) -> NewMemory:
    """The memory a turn is stored as."""
    return NewMemory(
        user_id=turn.user_id,
        text=turn.text,
        speaker=turn.role,
        created_at=turn.created_at,
        embedding=turn.embedding,
        embedding_model=turn.embedding_model,
        kind=turn.memory_kind,
        meta=turn.meta,
    )


class SqliteTurns:
    """TurnLog over one SQLite file."""

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    async def add_turn(self, turn: NewTurn) -> Turn:
        if turn.idempotency_key is not None:
            rows = await self._db.read(_TURN_BY_KEY_SQL, (turn.idempotency_key,))
            if rows:
                return turn_from_row(rows[0], SQLITE)
        at = to_epoch(turn.created_at)
        async with self._db.write() as db:
            await ensure_user(db, turn.user_id, at, spoke=turn.role == "user")
            cur = await db.execute(
                _INSERT_TURN_SQL,
                (
                    turn.user_id,
                    turn.chat_id,
                    turn.role,
                    turn.text,
                    at,
                    dump_json(list(turn.used_memory_ids)),
                    turn.reply_to,
                    turn.idempotency_key,
                    dump_json(turn.meta),
                ),
            )
            turn_id = cur.lastrowid
            assert turn_id is not None
            memory_id = await insert_memory(db, turn_memory(turn), turn_id)
            await db.execute("UPDATE turns SET memory_id = ? WHERE id = ?", (memory_id, turn_id))
            # No shares (a user turn, an older caller): nothing for a reaction to credit.
            shares = zip(turn.used_memory_ids, turn.memory_shares, strict=False)
            await db.executemany(_INSERT_SHARE_SQL, [(turn_id, mid, share) for mid, share in shares])
            if turn.generation is not None:
                await insert_generation(db, turn_id, turn.generation)
        return stored_turn(turn, turn_id, memory_id, from_epoch(at))

    async def recent_turns(self, user_id: str, chat_id: str, limit: int) -> list[Turn]:
        if limit <= 0:
            return []
        rows = await self._db.read(_RECENT_SQL, (user_id, chat_id, limit))
        return [turn_from_row(row, SQLITE) for row in reversed(rows)]

    async def record_feedback(self, feedback: Feedback) -> None:
        async with self._db.write() as db:
            await db.execute(statements.UPSERT_FEEDBACK, statements.feedback_params(feedback, SQLITE))

    async def remove_feedback(self, turn_id: int, user_id: str, source: str) -> None:
        async with self._db.write() as db:
            await db.execute(statements.REMOVE_FEEDBACK, (turn_id, user_id, source))

    async def link_message(self, link: MessageLink) -> None:
        async with self._db.write() as db:
            await db.execute(
                _LINK_SQL, (link.platform, link.chat_id, link.message_id, link.turn_id, link.user_id, _now())
            )

    async def find_message(self, platform: str, chat_id: str, message_id: str) -> MessageLink | None:
        rows = await self._db.read(statements.FIND_MESSAGE, (platform, chat_id, message_id))
        if not rows:
            return None
        return MessageLink(platform, chat_id, message_id, rows[0]["turn_id"], rows[0]["user_id"])

    async def set_user_active(self, user_id: str, active: bool) -> None:
        async with self._db.write() as db:
            await db.execute(_SET_ACTIVE_SQL, (user_id, _now(), active))

    async def is_user_active(self, user_id: str) -> bool:
        rows = await self._db.read(statements.USER_ACTIVE, (user_id,))
        return bool(rows[0]["active"]) if rows else True

    async def set_keep_files(self, user_id: str, keep: bool) -> None:
        async with self._db.write() as db:
            await db.execute(_SET_KEEP_FILES_SQL, (user_id, _now(), int(keep)))

    async def keeps_files(self, user_id: str) -> bool:
        rows = await self._db.read(statements.KEEP_FILES, (user_id,))
        return bool(rows[0]["keep_files"]) if rows else False

    async def set_spoken_replies(self, user_id: str, on: bool) -> None:
        async with self._db.write() as db:
            await db.execute(_SET_SPOKEN_SQL, (user_id, _now(), int(on)))

    async def speaks_replies(self, user_id: str) -> bool:
        rows = await self._db.read(statements.SPOKEN_REPLIES, (user_id,))
        return bool(rows[0]["spoken_replies"]) if rows else False


def _now() -> float:
    return datetime.now(UTC).timestamp()
