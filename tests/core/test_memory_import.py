"""import_items: batches embedded while the one before is written, progress after each, and what a
failure leaves behind — on both stores."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.core.errors import StoreUnavailable
from bot.core.memory import operations as memory_ops
from bot.core.memory.jsonl_format import ImportItem
from bot.core.memory.ports import MemoryIndex
from bot.core.models import NewMemory
from bot.core.store import Store
from tests.support.fakes import HashEmbedder

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


def items(n: int) -> list[ImportItem]:
    return [ImportItem(i, f"memory {i} about tea number {i}", "user", T0) for i in range(1, n + 1)]


async def test_every_item_is_stored_in_order_with_progress_after_each_batch(
    any_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_ops, "IMPORT_BATCH", 16)
    seen: list[tuple[int, int]] = []
    ids = await memory_ops.import_items(
        any_store.memories, HashEmbedder(), "ann", items(40), on_progress=lambda *step: seen.append(step)
    )
    assert seen == [(16, 40), (32, 40), (40, 40)]
    assert ids == sorted(ids) and len(ids) == 40
    listed = await any_store.memories.list_memories("ann", 100)
    assert [m.text for m in listed] == [item.text for item in items(40)]
    assert all(m.kind == "imported" and m.created_at == T0 for m in listed)


async def test_nothing_to_import_stores_nothing(any_store: Store) -> None:
    assert await memory_ops.import_items(any_store.memories, HashEmbedder(), "ann", []) == []


class FailsOnSecondBatch:
    """The import's side of a store (MemoryIndex) whose second write fails, as a vanished server's
    would; everything else is the real store's."""

    def __init__(self, store: MemoryIndex) -> None:
        self.store = store
        self.writes = 0

    async def add_memories(self, memories: Sequence[NewMemory]) -> list[int]:
        self.writes += 1
        if self.writes == 2:
            raise StoreUnavailable("gone")
        return await self.store.add_memories(memories)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


async def test_a_failed_batch_keeps_the_ones_before_and_stops(
    any_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_ops, "IMPORT_BATCH", 10)
    flaky = FailsOnSecondBatch(any_store.memories)
    embedder = HashEmbedder()
    progress: list[int] = []
    with pytest.raises(StoreUnavailable):
        await memory_ops.import_items(
            flaky, embedder, "ann", items(35), on_progress=lambda done, _: progress.append(done)
        )
    assert progress == [10]
    assert await any_store.memories.memory_count("ann") == 10
    assert flaky.writes == 2
