"""An import commits batch by batch, by design: one that stops on batch N keeps the batches before
it, and the same import run again stores the rest, once, on SQLite and on PostgreSQL + pgvector.
Lines with and without a time, and a line repeated in the file, each end up stored exactly as often
as the file has them; a file imported twice adds nothing.

The store fails through `FailingOn`, a real store whose `add_memories` refuses its Nth call: the
failure must come at one exact batch, which no real fault (a dropped connection) can promise."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.errors import StoreUnavailable
from bot.core.memory.jsonl_format import ImportItem
from bot.core.memory.operations import IMPORT_BATCH, all_memories, import_items, not_yet_imported
from bot.core.memory.ports import MemoryIndex
from bot.core.models import NewMemory
from bot.core.store import Store
from tests.support.fakes import HashEmbedder

USER = "telegram:1"
T0 = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)  # microseconds: SQLite keeps a float


class FailingOn:
    """The memory index, but its `add_memories` raises StoreUnavailable on call number `call` (from 1)."""

    def __init__(self, store: MemoryIndex, call: int) -> None:
        self._store, self._call, self.calls = store, call, 0

    async def add_memories(self, memories: Sequence[NewMemory]) -> list[int]:
        self.calls += 1
        if self.calls == self._call:
            raise StoreUnavailable("the store went away (injected)")
        return await self._store.add_memories(memories)

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)


def file_items() -> list[ImportItem]:
    items = []
    for n in range(IMPORT_BATCH * 3 + 17):
        if n % 5 == 0:  # no time: stored at the time of the import
            items.append(ImportItem(n + 1, f"untimed line {n // 10}", "user", None))
        else:
            speaker = "assistant" if n % 7 == 0 else "user"
            items.append(ImportItem(n + 1, f"line {n // 2}", speaker, T0 + timedelta(seconds=n // 2)))
    return items  # "line k" twice with one time, "untimed line k" twice: repeats the file really has


def stored(memories: list[tuple[str, str | None]]) -> Counter[tuple[str, str | None]]:
    return Counter(memories)


async def held(store: Store) -> list[tuple[str, str | None]]:
    return [(memory.text, memory.speaker) async for memory in all_memories(store.memories, USER)]


async def test_an_import_stopped_on_a_batch_resumes_without_duplicates(any_store: Store) -> None:
    items, embedder = file_items(), HashEmbedder()
    failing = FailingOn(any_store.memories, call=3)
    with pytest.raises(StoreUnavailable):
        fresh = await not_yet_imported(any_store.memories, USER, items)
        await import_items(failing, embedder, USER, fresh)  # type: ignore[arg-type]
    assert len(await held(any_store)) == 2 * IMPORT_BATCH  # the two batches before the failure

    rest = await not_yet_imported(any_store.memories, USER, items)
    assert len(rest) == len(items) - 2 * IMPORT_BATCH
    await import_items(any_store.memories, embedder, USER, rest)
    expected = Counter((item.text, item.speaker) for item in items)
    assert stored(await held(any_store)) == expected

    # The whole file once more: everything is held already.
    assert await not_yet_imported(any_store.memories, USER, items) == []
    # One more copy of a repeated line in the file is one more memory, not none.
    extra = [*items, ImportItem(0, "line 3", "user", T0 + timedelta(seconds=3))]
    left = await not_yet_imported(any_store.memories, USER, extra)
    assert [(i.text, i.line) for i in left] == [("line 3", 0)]
