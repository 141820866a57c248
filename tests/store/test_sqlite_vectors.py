"""SQLite's cached vector matrices: whatever writes, through whichever role or connection, the next
search sees it. Every search is checked against an exact ranking read straight from the file."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from bot.core.models import NewMemory, NewTurn, Revision, Vector
from bot.store.sqlite.db import SqliteDatabase
from bot.store.sqlite.store import SqliteStore
from bot.store.sqlite.vectors import MIN_CACHED_ROWS, VectorCache

DIM = 384
K = 10
BIG = MIN_CACHED_ROWS + 100  # big enough that the person's matrix is kept between searches
PERSON = "telegram:1"
MODEL = "test-model"
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def unit(rng: np.random.Generator) -> Vector:
    v = rng.standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def memory(vector: Vector, text: str = "a memory", user: str = PERSON) -> NewMemory:
    return NewMemory(user_id=user, text=text, speaker="user", created_at=NOW, embedding=vector,
                     embedding_model=MODEL, kind="imported")  # fmt: skip


def exact_top(path: Path, user: str, query: Vector, k: int = K) -> list[int]:
    """The right answer, from the file itself with no cache: recallable rows ranked by cosine."""
    with sqlite3.connect(path) as raw:
        rows = raw.execute(
            "SELECT id, embedding FROM memories WHERE user_id = ? AND status IN ('active', 'past')", (user,)
        ).fetchall()
    if not rows:
        return []
    ids = np.array([r[0] for r in rows])
    sims = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), DIM) @ query
    order = sorted(range(len(rows)), key=lambda i: (-round(float(sims[i]), 6), -int(ids[i])))
    return [int(ids[i]) for i in order[:k]]


async def searched(store: SqliteStore, query: Vector, user: str = PERSON) -> list[int]:
    return [hit.memory.id for hit in await store.memories.dense_search(user, query, K)]


@pytest.fixture
async def big(tmp_path: Path) -> tuple[SqliteStore, Path, np.random.Generator]:
    rng = np.random.default_rng(11)
    path = tmp_path / "kindred.db"
    store = await SqliteStore.open(path)
    await store.memories.add_memories([memory(unit(rng)) for _ in range(BIG)])
    await store.memories.add_memories([memory(unit(rng), user="telegram:2") for _ in range(20)])
    return store, path, rng


async def test_every_write_after_a_cached_search_is_seen(
    big: tuple[SqliteStore, Path, np.random.Generator],
) -> None:
    store, path, rng = big
    try:
        query = unit(rng)
        assert await searched(store, query) == exact_top(path, PERSON, query)  # the matrix is built

        (added,) = await store.memories.add_memories([memory(query, "the new one")])
        assert (await searched(store, query))[0] == added

        turn = await store.turns.add_turn(NewTurn(PERSON, "chat", "user", "said just now", query, MODEL, NOW))
        top = await searched(store, query)
        assert set(top[:2]) == {added, turn.memory_id} and top == exact_top(path, PERSON, query)

        superseded = Revision(status="superseded", superseded_by=turn.memory_id)
        assert await store.curation.revise_memory(PERSON, added, superseded)
        assert added not in await searched(store, query)
        assert await store.curation.revise_memory(PERSON, added, Revision(status="active"))
        assert (await searched(store, query))[:2] == exact_top(path, PERSON, query)[:2]

        away = unit(rng)
        assert await store.curation.revise_memory(PERSON, added, Revision(text="corrected", embedding=-query))
        assert added not in await searched(store, query)
        assert await store.curation.revise_memory(
            PERSON, turn.memory_id, Revision(kind="fact", embedding=away)
        )
        assert (await searched(store, away))[0] == turn.memory_id

        assert await store.memories.forget(PERSON, turn.memory_id)
        assert turn.memory_id not in await searched(store, away)
        assert await searched(store, query) == exact_top(path, PERSON, query)

        assert await store.memories.forget_all(PERSON) == BIG + 1
        assert await searched(store, query) == []
        (again,) = await store.memories.add_memories([memory(query)])
        assert await searched(store, query) == [again]
    finally:
        await store.close()


async def test_a_write_from_another_connection_is_seen(
    big: tuple[SqliteStore, Path, np.random.Generator],
) -> None:
    store, path, rng = big
    other = await SqliteStore.open(path)  # the memory job's own connection, or another process
    try:
        query = unit(rng)
        before = await searched(store, query)
        (added,) = await other.memories.add_memories([memory(query)])
        assert (await searched(store, query))[0] == added
        assert await other.curation.revise_memory(PERSON, before[0], Revision(status="archived"))
        assert await other.curation.revise_memory(PERSON, added, Revision(status="merged"))
        found = await searched(store, query)
        assert before[0] not in found and added not in found and found == exact_top(path, PERSON, query)
        assert await searched(store, query, "telegram:2") == exact_top(path, "telegram:2", query)
    finally:
        await other.close()
        await store.close()


async def test_searches_at_once_after_a_write_each_see_it_once(
    big: tuple[SqliteStore, Path, np.random.Generator],
) -> None:
    store, path, rng = big
    try:
        query = unit(rng)
        await searched(store, query)
        (added,) = await store.memories.add_memories([memory(query)])
        results = await asyncio.gather(*(searched(store, query) for _ in range(4)))
        for found in results:
            assert found == exact_top(path, PERSON, query) and found.count(added) == 1
        assert await searched(store, query) == exact_top(path, PERSON, query)
    finally:
        await store.close()


async def test_an_unchanged_person_is_served_from_memory_and_a_change_reads_again(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    store = await SqliteStore.open(tmp_path / "kindred.db")
    db = await SqliteDatabase.open(tmp_path / "kindred.db")
    try:
        ids = await store.memories.add_memories([memory(unit(rng)) for _ in range(5)])
        cache = VectorCache(db, DIM, min_rows=1)
        first_ids, first = await cache.vectors(PERSON)
        assert first_ids.tolist() == ids
        _, same = await cache.vectors(PERSON)
        assert same.base is first.base  # nothing changed: the same matrix
        (new,) = await store.memories.add_memories([memory(unit(rng))])
        grown_ids, _ = await cache.vectors(PERSON)
        assert grown_ids.tolist() == [*ids, new]  # appended
        await store.curation.revise_memory(PERSON, ids[0], Revision(status="superseded"))
        read_ids, _ = await cache.vectors(PERSON)
        assert read_ids.tolist() == [*ids[1:], new]
        assert (await cache.vectors("nobody"))[0].tolist() == []
    finally:
        await db.close()
        await store.close()


async def test_the_cache_holds_at_most_its_budget(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    store = await SqliteStore.open(tmp_path / "kindred.db")
    db = await SqliteDatabase.open(tmp_path / "kindred.db")
    try:
        for user in ("a", "b", "c"):
            await store.memories.add_memories([memory(unit(rng), user=user) for _ in range(4)])
        cache = VectorCache(db, DIM, min_rows=3, max_vectors=8)
        for user in ("a", "b", "c"):
            assert len((await cache.vectors(user))[0]) == 4
        assert list(cache._people) == ["b", "c"]  # the least recently searched went first
    finally:
        await db.close()
        await store.close()


async def test_a_person_who_forgot_all_and_came_back_gets_only_their_new_vectors(tmp_path: Path) -> None:
    """/forget all deletes the `users` row: the new one starts again at version 0, as the cached
    matrix may have, so the cache must tell the two people apart by more than the version."""
    rng = np.random.default_rng(4)
    store = await SqliteStore.open(tmp_path / "kindred.db")
    db = await SqliteDatabase.open(tmp_path / "kindred.db")
    try:
        await store.memories.add_memories([memory(unit(rng)) for _ in range(5)])
        cache = VectorCache(db, DIM, min_rows=1)
        await cache.vectors(PERSON)
        await store.memories.forget_all(PERSON)
        back = await store.memories.add_memories([memory(unit(rng)) for _ in range(2)])
        assert (await cache.vectors(PERSON))[0].tolist() == back
    finally:
        await db.close()
        await store.close()
