"""Memory operations behind the CLI: import, search, export. Platform- and driver-free."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.core.kinds import MAX_STATEMENT_CHARS, QUESTION, REPLY, is_question
from bot.core.memory_file import ImportItem
from bot.core.models import Memory, NewMemory
from bot.core.ports import Embedder, MemoryIndex, RecallIndex
from bot.core.recall import Recalled, hybrid_search
from bot.core.scoring import SHIPPED, Scoring
from bot.core.text import EMBED_CHARS

IMPORT_BATCH = 256
ASSISTANT = "assistant"  # the speaker that Kindred's own replies export as
EXPORT_PAGE = 1000


@dataclass(frozen=True, slots=True)
class SearchResult:
    query_index: int
    rank: int
    recalled: Recalled


async def import_items(
    index: MemoryIndex, embedder: Embedder, user_id: str, items: Sequence[ImportItem]
) -> list[int]:
    """Embed and store items in batches. Each batch is one transaction. As in a chat, a line the
    assistant said is kept as a reply, and a line that only asks as a question: neither is
    searched as evidence (core/kinds.py)."""
    ids: list[int] = []
    now = datetime.now(UTC)
    for start in range(0, len(items), IMPORT_BATCH):
        batch = items[start : start + IMPORT_BATCH]
        vectors = await embedder.embed([item.text[:EMBED_CHARS] for item in batch])
        ids += await index.add_memories(
            [
                NewMemory(
                    user_id=user_id,
                    text=item.text,
                    speaker=item.speaker,
                    created_at=item.timestamp or now,
                    embedding=vector,
                    embedding_model=embedder.model_name,
                    kind=imported_kind(item),
                    meta=item.meta,
                )
                for item, vector in zip(batch, vectors, strict=True)
            ]
        )
    return ids


def imported_kind(item: ImportItem) -> str:
    if item.speaker == ASSISTANT:
        return REPLY
    return QUESTION if len(item.text) <= MAX_STATEMENT_CHARS and is_question(item.text) else "imported"


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


async def all_memories(
    index: MemoryIndex, user_id: str, *, without_kinds: Sequence[str] = ()
) -> AsyncIterator[Memory]:
    """Every memory of a user (but those of `without_kinds`), oldest first, a page at a time."""
    offset = 0
    while True:
        page = await index.list_memories(user_id, EXPORT_PAGE, offset, without_kinds=without_kinds)
        for memory in page:
            yield memory
        if len(page) < EXPORT_PAGE:
            return
        offset += len(page)
