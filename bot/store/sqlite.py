"""The zero-setup store: one SQLite file, FTS5 for words, exact cosine search for meaning.

Dense search is exact: it reads one user's vectors through the (user_id, id) index and ranks
them with numpy. A person's memories number in the thousands, so this stays in single-digit
milliseconds and never misses a result the way a filtered approximate index can.

The connection, migrations and error mapping are in `sqlite_db`; links, active flags, stats and
upkeep in `sqlite_people`; revising memories in `sqlite_curation`. This module holds turns,
feedback, memories and search. Search sees only recallable memories (rows.recallable).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import aiosqlite
import numpy as np

from bot.core.models import (
    Feedback,
    Memory,
    MemoryHit,
    NewMemory,
    NewTurn,
    Turn,
    Vector,
)
from bot.store.rows import (
    blob_to_matrix,
    dump_json,
    from_epoch,
    load_json,
    recallable,
    to_epoch,
    unit,
    user_tag,
    vector_to_blob,
)
from bot.store.sqlite_curation import SqliteCuration
from bot.store.sqlite_rows import M_MEMORY_COLUMNS, MEMORY_COLUMNS, memory_from_row

_INSERT_SHARE_SQL = "INSERT INTO reply_memories(turn_id, memory_id, share) VALUES (?,?,?)"
_TURN_COLUMNS = "id, user_id, chat_id, role, text, created_at, memory_id, used_memory_ids, reply_to"


def _fts_match(user_id: str, terms: Sequence[str]) -> str | None:
    """An FTS5 query for any of `terms` in one user's memories; each term is a quoted phrase, so
    no word is ever read as syntax. None when no term has anything in it."""
    words = [term.replace('"', '""') for term in terms if term.strip()]
    if not words:
        return None
    either = " OR ".join(f'"{word}"' for word in words)
    return f'user_tag:"{user_tag(user_id)}" AND text:({either})'


def _turn(row: sqlite3.Row | tuple[Any, ...]) -> Turn:
    return Turn(
        id=row[0],
        user_id=row[1],
        chat_id=row[2],
        role=row[3],
        text=row[4],
        created_at=from_epoch(row[5]),
        memory_id=row[6],
        used_memory_ids=tuple(load_json(row[7]) or ()),
        reply_to=row[8],
    )


def _turn_memory(turn: NewTurn) -> NewMemory:
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


def _credited(turn: NewTurn) -> list[tuple[int, float]]:
    """(memory id, share) of each used memory that has a share."""
    return list(zip(turn.used_memory_ids, turn.memory_shares, strict=False))


class SqliteStore(SqliteCuration):
    """Kindred's Store on one SQLite file. Build it with `await SqliteStore.open(path)`."""

    async def _ensure_user(
        self, db: aiosqlite.Connection, user_id: str, at: float, *, spoke: bool = False
    ) -> None:
        # A person who writes again is reachable again, whatever an earlier failed send said.
        await db.execute(
            "INSERT INTO users(id, created_at) VALUES (?, ?)"
            " ON CONFLICT(id) DO UPDATE SET active = 1 WHERE ?",
            (user_id, at, spoke),
        )

    async def _insert_memory(self, db: aiosqlite.Connection, m: NewMemory, turn: int | None) -> int:
        cur = await db.execute(
            "INSERT INTO memories(user_id, kind, text, speaker, created_at, meta, embedding,"
            " embedding_model, source_turn_id, user_tag) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (
                m.user_id,
                m.kind,
                m.text,
                m.speaker,
                to_epoch(m.created_at),
                dump_json(m.meta),
                vector_to_blob(unit(m.embedding)),
                m.embedding_model,
                turn,
                user_tag(m.user_id),
            ),
        )
        await db.execute("UPDATE users SET memory_count = memory_count + 1 WHERE id = ?", (m.user_id,))
        assert cur.lastrowid is not None
        return cur.lastrowid

    # -- TurnLog ---------------------------------------------------------------------------

    async def add_turn(self, turn: NewTurn) -> Turn:
        if turn.idempotency_key is not None:
            rows = await self._read(
                f"SELECT {_TURN_COLUMNS} FROM turns WHERE idempotency_key = ?",
                (turn.idempotency_key,),
            )
            if rows:
                return _turn(rows[0])
        at = to_epoch(turn.created_at)
        async with self._write() as db:
            await self._ensure_user(db, turn.user_id, at, spoke=turn.role == "user")
            cur = await db.execute(
                "INSERT INTO turns(user_id, chat_id, role, text, created_at, used_memory_ids,"
                " reply_to, idempotency_key, meta) VALUES (?,?,?,?,?,?,?,?,?)",
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
            memory_id = await self._insert_memory(db, _turn_memory(turn), turn_id)
            await db.execute("UPDATE turns SET memory_id = ? WHERE id = ?", (memory_id, turn_id))
            # No shares (a user turn, an older caller): nothing for a reaction to credit.
            await db.executemany(_INSERT_SHARE_SQL, [(turn_id, mid, share) for mid, share in _credited(turn)])
        return Turn(
            id=turn_id,
            memory_id=memory_id,
            user_id=turn.user_id,
            chat_id=turn.chat_id,
            role=turn.role,
            text=turn.text,
            created_at=from_epoch(at),
            used_memory_ids=tuple(turn.used_memory_ids),
            reply_to=turn.reply_to,
        )

    async def recent_turns(self, user_id: str, chat_id: str, limit: int) -> list[Turn]:
        if limit <= 0:
            return []
        rows = await self._read(
            # A turn whose memory was forgotten is forgotten as history too.
            f"SELECT {_TURN_COLUMNS} FROM turns WHERE user_id = ? AND chat_id = ?"
            " AND EXISTS (SELECT 1 FROM memories m WHERE m.id = turns.memory_id)"
            " ORDER BY id DESC LIMIT ?",
            (user_id, chat_id, limit),
        )
        return [_turn(row) for row in reversed(rows)]

    async def record_feedback(self, feedback: Feedback) -> None:
        async with self._write() as db:
            await db.execute(
                "INSERT INTO feedback(turn_id, user_id, source, emoji, value, created_at)"
                " VALUES (?,?,?,?,?,?) ON CONFLICT(turn_id, user_id, source) DO UPDATE SET"
                " emoji = excluded.emoji, value = excluded.value, created_at = excluded.created_at",
                (
                    feedback.turn_id,
                    feedback.user_id,
                    feedback.source,
                    feedback.emoji,
                    feedback.value,
                    to_epoch(feedback.created_at),
                ),
            )

    async def remove_feedback(self, turn_id: int, user_id: str, source: str) -> None:
        async with self._write() as db:
            await db.execute(
                "DELETE FROM feedback WHERE turn_id = ? AND user_id = ? AND source = ?",
                (turn_id, user_id, source),
            )

    # -- MemoryIndex -----------------------------------------------------------------------

    async def add_memories(self, memories: Sequence[NewMemory]) -> list[int]:
        ids: list[int] = []
        if not memories:
            return ids
        async with self._write() as db:
            for memory in memories:
                await self._ensure_user(db, memory.user_id, to_epoch(memory.created_at))
                ids.append(await self._insert_memory(db, memory, None))
        return ids

    async def dense_search(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        if k <= 0:
            return []
        rows = await self._read(
            f"SELECT id, embedding FROM memories WHERE user_id = ? AND {recallable()}", (user_id,)
        )
        if not rows:
            return []
        matrix = blob_to_matrix([row[1] for row in rows], self._dim)
        sims = matrix @ unit(vector)
        take = min(k, len(rows))
        top = np.argpartition(-sims, take - 1)[:take]
        # Ties (and equal vectors) fall back to the newer memory, so results are deterministic.
        order = sorted(top.tolist(), key=lambda i: (-float(sims[i]), -int(rows[i][0])))
        ids = [int(rows[i][0]) for i in order]
        by_id = await self._memories_by_id(ids)
        return [MemoryHit(by_id[rows[i][0]], float(sims[i])) for i in order if rows[i][0] in by_id]

    async def _memories_by_id(self, ids: Sequence[int]) -> dict[int, Memory]:
        if not ids:
            return {}
        marks = ",".join("?" for _ in ids)
        rows = await self._read(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks})", ids)
        return {row[0]: memory_from_row(row) for row in rows}

    async def lexical_search(self, user_id: str, terms: Sequence[str], k: int) -> list[MemoryHit]:
        query = _fts_match(user_id, terms)
        if query is None or k <= 0:
            return []
        rows = await self._read(
            f"SELECT {M_MEMORY_COLUMNS}, bm25(memories_fts, 1.0, 0.0) AS rank FROM memories_fts"
            " JOIN memories m ON m.id = memories_fts.rowid"
            f" WHERE memories_fts MATCH ? AND m.user_id = ? AND {recallable('m.status')}"
            " ORDER BY rank LIMIT ?",
            (query, user_id, k),
        )
        return [MemoryHit(memory_from_row(row), -float(row[-1])) for row in rows]

    async def rare_terms(self, user_id: str, terms: Sequence[str], *, share: float, floor: int) -> list[str]:
        rows = await self._read("SELECT memory_count FROM users WHERE id = ?", (user_id,))
        if not rows:
            return []
        most = max(floor, int(share * rows[0][0]))
        rare: list[str] = []
        for term in terms:
            query = _fts_match(user_id, [term])
            if query is None:
                continue
            found = await self._read(
                "SELECT count(*) FROM (SELECT 1 FROM memories_fts"
                " JOIN memories m ON m.id = memories_fts.rowid"
                f" WHERE memories_fts MATCH ? AND {recallable('m.status')} LIMIT ?)",
                (query, most + 1),
            )
            if 0 < found[0][0] <= most:
                rare.append(term)
        return rare

    async def list_memories(self, user_id: str, limit: int, offset: int = 0) -> list[Memory]:
        rows = await self._read(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE user_id = ? ORDER BY id LIMIT ? OFFSET ?",
            (user_id, limit, offset),
        )
        return [memory_from_row(row) for row in rows]

    async def memory_count(self, user_id: str) -> int:
        rows = await self._read("SELECT memory_count FROM users WHERE id = ?", (user_id,))
        return int(rows[0][0]) if rows else 0

    async def forget(self, user_id: str, memory_id: int) -> bool:
        async with self._write() as db:
            found = list(await db.execute_fetchall(
                "SELECT source_turn_id FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id)
            ))  # fmt: skip
            if not found:
                return False
            # What was derived from this memory's turn goes with it (see PostgresStore.forget).
            derived = await db.execute_fetchall(
                "SELECT s.memory_id FROM memory_sources s JOIN memories m ON m.id = s.memory_id"
                " WHERE s.turn_id = ? AND m.user_id = ?",
                (found[0][0], user_id),
            )
            doomed = {memory_id, *(int(row[0]) for row in derived)}
            for doomed_id in doomed:
                await db.execute("DELETE FROM memories WHERE id = ?", (doomed_id,))
                await db.execute("DELETE FROM reply_memories WHERE memory_id = ?", (doomed_id,))
            await db.execute(
                "UPDATE users SET memory_count = memory_count - ? WHERE id = ?", (len(doomed), user_id)
            )
        return True

    async def forget_all(self, user_id: str) -> int:
        async with self._write() as db:
            cur = await db.execute("DELETE FROM memories WHERE user_id = ?", (user_id,))
            count = cur.rowcount
            await db.execute("DELETE FROM feedback WHERE user_id = ?", (user_id,))
            await db.execute("DELETE FROM platform_messages WHERE user_id = ?", (user_id,))
            await db.execute("DELETE FROM turns WHERE user_id = ?", (user_id,))
            await db.execute("UPDATE users SET memory_count = 0 WHERE id = ?", (user_id,))
        return count
