"""Memory operations behind the CLI: import, search, export. Platform- and driver-free."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.core.indexing import SHIPPED_INDEXING, Indexing, Said, searched
from bot.core.memory_file import ImportItem
from bot.core.models import Memory, NewMemory
from bot.core.ports import Embedder, MemoryIndex, RecallIndex
from bot.core.recall import Recalled, hybrid_search
from bot.core.scoring import SHIPPED, Scoring
from bot.core.text import EMBED_CHARS

IMPORT_BATCH = 256
EXPORT_PAGE = 1000


@dataclass(frozen=True, slots=True)
class SearchResult:
    query_index: int
    rank: int
    recalled: Recalled


async def import_items(
    index: MemoryIndex,
    embedder: Embedder,
    user_id: str,
    items: Sequence[ImportItem],
    indexing: Indexing = SHIPPED_INDEXING,
) -> list[int]:
    """Embed and store items in batches, in file order. Each batch is one transaction. A named
    speaker and a short item's previous item are searched with it (core/indexing.py)."""
    ids: list[int] = []
    now = datetime.now(UTC)
    extras = searched([Said(item.text, item.speaker) for item in items], indexing)
    for start in range(0, len(items), IMPORT_BATCH):
        batch = items[start : start + IMPORT_BATCH]
        extra = extras[start : start + IMPORT_BATCH]
        vectors = await embedder.embed([found.embedded[:EMBED_CHARS] for found in extra])
        ids += await index.add_memories(
            [
                NewMemory(
                    user_id=user_id,
                    text=item.text,
                    speaker=item.speaker,
                    created_at=item.timestamp or now,
                    embedding=vector,
                    embedding_model=embedder.model_name,
                    kind="imported",
                    meta=item.meta,
                    context=found.context,
                )
                for item, found, vector in zip(batch, extra, vectors, strict=True)
            ]
        )
    return ids


async def search(
    index: RecallIndex,
    embedder: Embedder,
    user_id: str,
    queries: Sequence[str],
    k: int,
    *,
    scoring: Scoring | None = SHIPPED,
) -> list[SearchResult]:
    """Each query's top k, ranked as a reply's prompt would rank them now; `recalled.why` says why."""
    vectors = await embedder.embed([query[:EMBED_CHARS] for query in queries])
    results: list[SearchResult] = []
    for number, (query, vector) in enumerate(zip(queries, vectors, strict=True)):
        found = await hybrid_search(index, user_id, query, vector, k, scoring=scoring)
        results += [SearchResult(number, rank, item) for rank, item in enumerate(found)]
    return results


async def all_memories(index: MemoryIndex, user_id: str) -> AsyncIterator[Memory]:
    """Every memory of a user, oldest first, a page at a time."""
    offset = 0
    while True:
        page = await index.list_memories(user_id, EXPORT_PAGE, offset)
        for memory in page:
            yield memory
        if len(page) < EXPORT_PAGE:
            return
        offset += len(page)
