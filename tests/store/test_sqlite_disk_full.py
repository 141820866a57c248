"""The SQLite store's disk fills up mid-write (issue 32's hostile case): a real size-limited tmpfs
under the file (tests/support/full_disk.py; where mounting is not permitted, SQLite's own page cap,
which answers with the same SQLITE_FULL). A turn is stored whole, with its memory, its vector and
its words' index, or not at all; the error says plainly that the disk is full and is one the
callers keep the write for (StoreUnavailable); once space is freed the same store object writes
again, with no restart."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from bot.core.errors import StoreUnavailable
from bot.core.models import NewTurn, Vector
from bot.store.sqlite.store import SqliteStore
from tests.support.full_disk import FullDisk, full_disk

DIM = 384
PERSON = "telegram:7"
NOW = datetime(2026, 12, 5, tzinfo=UTC)
# Longer than a page (4 KiB): a turn needs new pages, whatever room the last ones have left.
LONG = "the river was high and we crossed it anyway, laughing; " * 120
TRIES = 40


def vector(seed: int) -> Vector:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def turn(n: int, text: str = LONG) -> NewTurn:
    return NewTurn(
        PERSON, PERSON, "user", f"{n}: {text}", vector(n), "test-model", NOW, idempotency_key=f"k{n}"
    )


@pytest.fixture
async def disk(tmp_path: Path) -> AsyncIterator[FullDisk]:
    with full_disk(tmp_path / "disk") as found:
        yield found


# Each finds the rows of one kind of half-stored write, by id.
TORN = {
    "a turn without its memory": "SELECT t.id FROM turns t LEFT JOIN memories m"
    " ON m.id = t.memory_id AND m.source_turn_id = t.id WHERE m.id IS NULL",
    "a memory of a missing turn": "SELECT m.id FROM memories m LEFT JOIN turns t ON t.id = m.source_turn_id"
    " WHERE m.source_turn_id IS NOT NULL AND t.id IS NULL",
    "a memory without its whole vector": f"SELECT id FROM memories WHERE length(embedding) IS NOT {DIM * 4}",
    "a person's memory count out of step": "SELECT u.id FROM users u"
    " WHERE u.memory_count != (SELECT count(*) FROM memories m WHERE m.user_id = u.id)",
}


def torn(path: Path) -> list[str]:
    """Whatever is half stored, read from the file by a connection of its own."""
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # The word index against the memories it indexes (FTS5 raises SQLITE_CORRUPT_VTAB if apart).
        raw.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")
        return [f"{what}: {i}" for what, sql in TORN.items() for (i,) in raw.execute(sql)]


def stored_keys(path: Path) -> list[str]:
    with sqlite3.connect(path) as raw:
        return [k for (k,) in raw.execute("SELECT idempotency_key FROM turns ORDER BY id")]


async def test_a_full_disk_stores_a_turn_whole_or_not_at_all_then_the_same_store_writes_again(
    disk: FullDisk,
) -> None:
    path = disk.folder / "kindred.db"
    store = await SqliteStore.open(path)
    try:
        for n in range(3):
            await store.turns.add_turn(turn(n))
        await disk.fill_store(store)
        refused: StoreUnavailable | None = None
        for n in range(3, 3 + TRIES):  # the first write that needs a page more than there is
            try:
                await store.turns.add_turn(turn(n))
            except StoreUnavailable as exc:
                refused, failed = exc, turn(n)
                break
        assert refused is not None, f"{TRIES} long turns fitted on a full disk ({disk.why_not or 'tmpfs'})"
        said, key = str(refused), f"k{n}"
        assert "disk is full" in said and str(path) in said, said
        assert "\n" not in said and "INSERT" not in said and LONG[:20] not in said, said
        assert torn(path) == []
        assert key not in stored_keys(path)
        # Asked again while the disk is still full: refused again, and still nothing half stored.
        with pytest.raises(StoreUnavailable, match="disk is full"):
            await store.turns.add_turn(failed)
        assert torn(path) == [] and key not in stored_keys(path)
        # Reads go on meanwhile: the history the prompt needs.
        assert len(await store.turns.recent_turns(PERSON, PERSON, 100)) == n
        await disk.free_store(store)
        again = await store.turns.add_turn(failed)
        same = await store.turns.add_turn(replace(failed, text="a retry with the same key"))
        assert same.id == again.id  # the key holds: a retry after the outage stores it once
        assert stored_keys(path).count(key) == 1 and torn(path) == []
        hits = await store.memories.dense_search(PERSON, failed.embedding, 3)
        assert [h.memory.id for h in hits].count(again.memory_id) == 1
        assert hits[0].memory.id == again.memory_id
        assert (await store.stats()).turns == n + 1
    finally:
        await store.close()
