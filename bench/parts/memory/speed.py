"""The speed targets of the memory benchmark that are not a search: embedding one text with the
product's embedder against sentence-transformers in the same run, and importing a conversation.

Both embedders run the same short texts, one text per call, alternately, so that whatever else the
machine is doing weighs on both alike.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.parts.common import log, millis
from bench.parts.memory.phases import user_text
from bot.core.memory import operations as memory_ops
from bot.core.memory.jsonl_format import ImportItem
from bot.core.memory.ports import Embedder
from bot.core.store import Store

IMPORT_USER = "bench-import-user"
SHORT_TEXTS = ("I slept badly again", "my sister lives in Lyon", "what was the name of my dog?",
               "coffee keeps me awake", "I start the new job on Monday", "thanks, that helps")  # fmt: skip


async def embed_one(product: Embedder, torch: Embedder | None, count: int) -> dict[str, Any]:
    """p50/p95 of embedding one short text, for the product's embedder and for torch's."""
    for embedder in (product, torch):
        if embedder is not None:
            for text in SHORT_TEXTS:  # warm both: first calls allocate
                await embedder.embed([text])
    spent: dict[str, list[float]] = {"product": [], "torch": []}
    for number in range(count):
        text = f"{SHORT_TEXTS[number % len(SHORT_TEXTS)]} {number}"
        for name, embedder in (("product", product), ("torch", torch)):
            if embedder is None:
                continue
            began = time.perf_counter()
            await embedder.embed([text])
            spent[name].append(time.perf_counter() - began)
    found: dict[str, Any] = {"model": product.model_name, "runtime": type(product).__name__,
                             "product": millis(spent["product"])}  # fmt: skip
    if torch is not None:
        found["sentence_transformers"] = millis(spent["torch"])
        found["p95_ratio"] = round(found["product"]["p95_ms"] / found["sentence_transformers"]["p95_ms"], 3)
    log(
        f"embed one text: p95 {found['product']['p95_ms']} ms ({found['runtime']})"
        + (f", sentence-transformers {found['sentence_transformers']['p95_ms']} ms" if torch else "")
    )
    return found


def import_items(rng: random.Random, count: int) -> list[ImportItem]:
    """A conversation's turns as `kindred memory import` reads them: two named speakers, an hour apart."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    speakers = ("Caroline", "Melanie")
    return [
        ImportItem(number, user_text(rng), speakers[number % 2], start + timedelta(hours=number))
        for number in range(1, count + 1)
    ]


async def import_rate(store: Store, embedder: Embedder, rng: random.Random, count: int) -> dict[str, Any]:
    """`memory_ops.import_items` (what `kindred memory import` runs once the file is read), timed whole."""
    items = import_items(rng, count)
    began = time.perf_counter()
    ids = await memory_ops.import_items(store.memories, embedder, IMPORT_USER, items)
    seconds = time.perf_counter() - began
    rate = len(ids) / seconds
    log(f"  import: {len(ids):,} turns in {seconds:.1f}s, {rate:.0f} turns/s")
    return {"turns": len(ids), "seconds": round(seconds, 2), "turns_per_s": round(rate, 1)}
