"""MemoryIndex on SQLite: memories, FTS5 for words, exact cosine search for meaning.

Dense search is exact: it reads one user's vectors through the (user_id, id) index and ranks
them with numpy, so it never misses a result the way a filtered approximate index can. A big
person's vectors stay in memory between searches (sqlite_vectors.py), checked against the
database on every search. Search sees only recallable memories (rows.recallable).
"""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite
import numpy as np

from bot.core.models import Memory, MemoryHit, NewMemory, Vector
from bot.store.sql import statements
from bot.store.sql.learning_rows import needles
from bot.store.sql.rows import (
    MEMORY_COLUMNS,
    dump_json,
    memory_from_row,
    recallable,
    select_list,
    to_epoch,
    unit,
    user_tag,
    vector_to_blob,
)
from bot.store.sqlite.db import SqliteDatabase
from bot.store.sqlite.learning import scrub_generations
from bot.store.sqlite.rows import SQLITE
from bot.store.sqlite.vectors import VectorCache

_COLUMNS = select_list(MEMORY_COLUMNS, "m")
TIE_DIGITS = 6  # cosines equal to this many decimals are ties
# BM25 weight of a word found in a memory's context (speaker, previous turn) against its own text.
CONTEXT_WEIGHT = 0.5
_INSERT_SQL = """
INSERT INTO memories(user_id, kind, text, speaker, created_at, meta, embedding, embedding_model,
                     source_turn_id, user_tag, context)
VALUES (?,?,?,?,?,?,?,?,?,?,?)
"""
_LEXICAL_SQL = f"""
SELECT {_COLUMNS}, bm25(memories_fts, 1.0, 0.0, {CONTEXT_WEIGHT}) AS rank FROM memories_fts
JOIN memories m ON m.id = memories_fts.rowid
WHERE memories_fts MATCH ? AND m.user_id = ? AND {recallable("m.status")}
ORDER BY rank LIMIT ?
"""
_TERM_COUNT_SQL = f"""
SELECT count(*) AS n FROM (
    SELECT 1 FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
    WHERE memories_fts MATCH ? AND {recallable("m.status")} LIMIT ?
)
"""
_DERIVED_SQL = """
SELECT s.memory_id FROM memory_sources s JOIN memories m ON m.id = s.memory_id
WHERE s.turn_id = ? AND m.user_id = ?
"""

# A summary covers memories by id (meta.covers): an imported line has no turn to link it by.
_COVERING_SQL = """
SELECT m.id AS memory_id FROM memories m
WHERE m.user_id = ? AND m.kind = 'summary'
  AND EXISTS (SELECT 1 FROM json_each(m.meta, '$.covers') j WHERE j.value = ?)
"""
# A short memory is searched with the one before it (core/memory/indexing.py): its context quotes that
# text, which must go when that memory is forgotten.
_UNQUOTE_SQL = "UPDATE memories SET context = '' WHERE user_id = ? AND instr(context, ?) > 0"


async def ensure_user(db: aiosqlite.Connection, user_id: str, at: float, *, spoke: bool = False) -> None:
    """Create the person's row if it is new. A person who writes again (`spoke`) is reachable
    again, whatever an earlier failed send said."""
    await db.execute(
        "INSERT INTO users(id, created_at) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET active = 1 WHERE ?",
        (user_id, at, spoke),
    )


async def insert_memory(db: aiosqlite.Connection, m: NewMemory, turn_id: int | None) -> int:
    """Insert one memory (of `turn_id`, if a turn's) and count it for its person; returns its id."""
    cur = await db.execute(
        _INSERT_SQL,
        (
            m.user_id,
            m.kind,
            m.text,
            m.speaker,
            to_epoch(m.created_at),
            dump_json(m.meta),
            vector_to_blob(unit(m.embedding)),
            m.embedding_model,
            turn_id,
            user_tag(m.user_id),
            m.context,
        ),
    )
    await db.execute("UPDATE users SET memory_count = memory_count + 1 WHERE id = ?", (m.user_id,))
    assert cur.lastrowid is not None
    return cur.lastrowid


def fts_match(user_id: str, terms: Sequence[str]) -> str | None:
    """An FTS5 query for any of `terms` in one user's memories (their text or context); each term
    is a quoted phrase, so no word is ever read as syntax. None when no term has anything in it."""
    words = [term.replace('"', '""') for term in terms if term.strip()]
    if not words:
        return None
    either = " OR ".join(f'"{word}"' for word in words)
    return f'user_tag:"{user_tag(user_id)}" AND {{text context}}:({either})'


def _kinds_left_out(kinds: Sequence[str]) -> str:
    """The condition that leaves memories of `kinds` out (one parameter each), or nothing."""
    return f" AND m.kind NOT IN ({','.join('?' for _ in kinds)})" if kinds else ""


class SqliteMemories:
    """MemoryIndex over one SQLite file; vectors have `dim` float32 components."""

    def __init__(self, db: SqliteDatabase, dim: int) -> None:
        self._db = db
        self._dim = dim
        self._vectors = VectorCache(db, dim)

    async def add_memories(self, memories: Sequence[NewMemory]) -> list[int]:
        ids: list[int] = []
        if not memories:
            return ids
        async with self._db.write() as db:
            for memory in memories:
                await ensure_user(db, memory.user_id, to_epoch(memory.created_at))
                ids.append(await insert_memory(db, memory, None))
        return ids

    async def dense_search(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        if k <= 0:
            return []
        found, sims = await self._vectors.similarities(user_id, unit(vector))
        if not len(found):
            return []
        take = min(k, len(found))
        top = np.argpartition(-sims, take - 1)[:take]
        ids = {i: int(found[i]) for i in top.tolist()}
        # Ties (and equal vectors) fall back to the newer memory, so results are deterministic. BLAS
        # may round two equal rows apart in the last bits, so scores this close count as equal.
        order = sorted(ids, key=lambda i: (-round(float(sims[i]), TIE_DIGITS), -ids[i]))
        by_id = await self._memories_by_id([ids[i] for i in order])
        return [MemoryHit(by_id[ids[i]], float(sims[i])) for i in order if ids[i] in by_id]

    async def _memories_by_id(self, ids: Sequence[int]) -> dict[int, Memory]:
        if not ids:
            return {}
        marks = ",".join("?" for _ in ids)
        rows = await self._db.read(f"SELECT {_COLUMNS} FROM memories m WHERE m.id IN ({marks})", ids)
        return {row["id"]: memory_from_row(row, SQLITE) for row in rows}

    async def lexical_search(self, user_id: str, terms: Sequence[str], k: int) -> list[MemoryHit]:
        query = fts_match(user_id, terms)
        if query is None or k <= 0:
            return []
        rows = await self._db.read(_LEXICAL_SQL, (query, user_id, k))
        return [MemoryHit(memory_from_row(row, SQLITE), -float(row["rank"])) for row in rows]

    async def rare_terms(self, user_id: str, terms: Sequence[str], *, share: float, floor: int) -> list[str]:
        rows = await self._db.read(statements.MEMORY_COUNT, (user_id,))
        if not rows:
            return []
        most = max(floor, int(share * rows[0]["memory_count"]))
        rare: list[str] = []
        for term in terms:
            query = fts_match(user_id, [term])
            if query is None:
                continue
            found = await self._db.read(_TERM_COUNT_SQL, (query, most + 1))
            if 0 < found[0]["n"] <= most:
                rare.append(term)
        return rare

    async def list_memories(
        self, user_id: str, limit: int, offset: int = 0, *, without_kinds: Sequence[str] = ()
    ) -> list[Memory]:
        rows = await self._db.read(
            f"SELECT {_COLUMNS} FROM memories m WHERE m.user_id = ?{_kinds_left_out(without_kinds)}"
            " ORDER BY m.id LIMIT ? OFFSET ?",
            (user_id, *without_kinds, limit, offset),
        )
        return [memory_from_row(row, SQLITE) for row in rows]

    async def memory_count(
        self, user_id: str, *, without_kinds: Sequence[str] = (), only_kinds: Sequence[str] = ()
    ) -> int:
        if without_kinds or only_kinds:
            only = f" AND m.kind IN ({','.join('?' for _ in only_kinds)})" if only_kinds else ""
            where = f"m.user_id = ?{_kinds_left_out(without_kinds)}{only}"
            rows = await self._db.read(
                f"SELECT count(*) AS memory_count FROM memories m WHERE {where}",
                (user_id, *without_kinds, *only_kinds),
            )
        else:  # the count the store keeps, with no scan
            rows = await self._db.read(statements.MEMORY_COUNT, (user_id,))
        return int(rows[0]["memory_count"]) if rows else 0

    async def forget(self, user_id: str, memory_id: int) -> bool:
        async with self._db.write() as db:
            found = list(await db.execute_fetchall(
                "SELECT source_turn_id FROM memories WHERE id = ? AND user_id = ?", (memory_id, user_id)
            ))  # fmt: skip
            if not found:
                return False
            # What was derived from this memory's turn goes with it (see pg_memories' _FORGET_SQL).
            derived = [
                *await db.execute_fetchall(_DERIVED_SQL, (found[0]["source_turn_id"], user_id)),
                *await db.execute_fetchall(_COVERING_SQL, (user_id, memory_id)),
            ]
            doomed = {memory_id, *(int(row["memory_id"]) for row in derived)}
            marks = ",".join("?" for _ in doomed)
            texts = await db.execute_fetchall(f"SELECT text FROM memories WHERE id IN ({marks})", [*doomed])
            # Before reply_memories goes: it says which stored prompts used these memories.
            await scrub_generations(db, user_id, doomed, [row["text"] for row in texts])
            for doomed_id in doomed:
                await db.execute("DELETE FROM memories WHERE id = ?", (doomed_id,))
                await db.execute("DELETE FROM reply_memories WHERE memory_id = ?", (doomed_id,))
            for needle in needles([row["text"] for row in texts]):
                await db.execute(_UNQUOTE_SQL, (user_id, needle))
            await db.execute(
                "UPDATE users SET memory_count = memory_count - ? WHERE id = ?", (len(doomed), user_id)
            )
            await _drop_forgotten_words(db)
        await self._db.checkpoint()
        return True

    async def forget_all(self, user_id: str) -> int:
        async with self._db.write() as db:
            rows = await db.execute_fetchall(
                "SELECT count(*) AS n FROM memories WHERE user_id = ?", (user_id,)
            )  # fmt: skip
            for statement in statements.FORGET_PERSON:
                await db.execute(statement, (user_id,))
            await _drop_forgotten_words(db)
        await self._db.checkpoint()
        return int(next(iter(rows))["n"])


async def _drop_forgotten_words(db: aiosqlite.Connection) -> None:
    """Merge the full-text index into one segment. FTS5 records a delete as a marker beside the
    old entry, so the forgotten words stay in the file until the segment holding them is merged;
    with secure_delete on, the merged-away pages are zeroed (sqlite_db)."""
    await db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
