"""/export is bounded, on SQLite and on PostgreSQL: past `max_export_bytes` the person is told in
words, as soon as the file grows past it, and nothing is sent; within it the file is whole."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.errors import InvalidInput
from bot.core.memory.controls import Controls
from bot.core.models import NewMemory
from bot.core.store import Store
from tests.support.fakes import HashEmbedder

USER = "telegram:1"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def test_an_export_past_its_bound_is_refused_in_words(any_store: Store) -> None:
    embedder = HashEmbedder()
    texts = [f"the garden note number {n}, " + "x" * 200 for n in range(40)]
    await any_store.memories.add_memories(
        [NewMemory(USER, text, "user", T0 + timedelta(minutes=n), embedder.vector(text), "h")
         for n, text in enumerate(texts)]
    )  # fmt: skip
    whole = await Controls(any_store, "p").export_jsonl(USER)
    assert [json.loads(line)["text"] for line in whole.decode().splitlines()] == texts
    assert await Controls(any_store, "p", max_export_bytes=len(whole)).export_jsonl(USER) == whole
    with pytest.raises(InvalidInput, match=r"more than 8 KiB, too much to send as one file here"):
        await Controls(any_store, "p", max_export_bytes=8 * 1024).export_jsonl(USER)
