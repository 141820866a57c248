"""Memory operations behind the CLI: import, search, export. Platform- and driver-free."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.core.memory.indexing import SHIPPED_INDEXING, Indexing, Said, Searched, searched
from bot.core.memory.jsonl_format import ImportItem
from bot.core.memory.kinds import MAX_STATEMENT_CHARS, QUESTION, REPLY, is_question
from bot.core.memory.ports import Embedder, MemoryIndex, RecallIndex
from bot.core.memory.recall import Recalled, hybrid_search
from bot.core.memory.scoring import SHIPPED, Scoring
from bot.core.models import DOCUMENT, Memory, NewMemory, Vector
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
    index: MemoryIndex,
    embedder: Embedder,
    user_id: str,
    items: Sequence[ImportItem],
    indexing: Indexing = SHIPPED_INDEXING,
    *,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[int]:
    """Embed and store items in batches, in file order, each batch one transaction; returns the
    ids in order. A named speaker and a short item's previous item are searched with it
    (core/memory/indexing.py). As in a chat, a line the assistant said is kept as a reply, and a line
    that only asks as a question: neither is searched as evidence (core/memory/kinds.py).

    The next batch is embedded while the current one is written, so the embedder (its own
    thread) and the store (its own connection) work at the same time. `on_progress(done, total)`
    is called after each batch is stored. If a batch fails, the batches before it stay stored.
    """
    ids: list[int] = []
    now = datetime.now(UTC)
    extras = searched([Said(item.text, item.speaker) for item in items], indexing)
    starts = range(0, len(items), IMPORT_BATCH)
    batches = [(items[at : at + IMPORT_BATCH], extras[at : at + IMPORT_BATCH]) for at in starts]
    if not batches:
        return ids

    def embedding(found: Sequence[Searched]) -> asyncio.Task[list[Vector]]:
        return asyncio.ensure_future(embedder.embed([one.embedded[:EMBED_CHARS] for one in found]))

    pending = embedding(batches[0][1])
    try:
        for number, (batch, extra) in enumerate(batches):
            vectors = await pending
            if number + 1 < len(batches):
                pending = embedding(batches[number + 1][1])
            ids += await index.add_memories(
                [
                    _imported(user_id, item, found, vector, embedder.model_name, now)
                    for item, found, vector in zip(batch, extra, vectors, strict=True)
                ]
            )
            if on_progress is not None:
                on_progress(len(ids), len(items))
    finally:
        pending.cancel()  # a failed write leaves the next batch's embedding unawaited
    return ids


def _imported(
    user_id: str, item: ImportItem, found: Searched, vector: Vector, model: str, now: datetime
) -> NewMemory:
    return NewMemory(
        user_id=user_id,
        text=item.text,
        speaker=item.speaker,
        created_at=item.timestamp or now,
        embedding=vector,
        embedding_model=model,
        kind=imported_kind(item),
        meta=item.meta,
        context=found.context,
    )


# What an import stores (imported_kind): a line without a time is matched against these alone.
IMPORTED_KINDS = frozenset({"imported", QUESTION, REPLY, DOCUMENT})


def _import_key(text: str, speaker: str | None, at: datetime | None) -> tuple[str, str | None, float | None]:
    # Milliseconds: SQLite keeps a time as a float of seconds, which may round the microseconds.
    return (text, speaker, None if at is None else round(at.timestamp(), 3))


async def not_yet_imported(index: MemoryIndex, user_id: str, items: Sequence[ImportItem]) -> list[ImportItem]:
    """`items` less those the person's memories already hold, so that an import run again after it
    stopped part way (it commits batch by batch) stores the rest once, and a file imported twice
    adds nothing. A line is held when a memory has its text, speaker and time (to the millisecond);
    a line without a time, by an imported memory with its text and speaker. Repeats count: a file
    with a line twice against a store with it once imports it once more."""
    held: Counter[tuple[str, str | None, float | None]] = Counter()
    async for memory in all_memories(index, user_id):
        held[_import_key(memory.text, memory.speaker, memory.created_at)] += 1
        if memory.kind in IMPORTED_KINDS:
            held[_import_key(memory.text, memory.speaker, None)] += 1
    fresh = []
    for item in items:
        key = _import_key(item.text, item.speaker, item.timestamp)
        if held[key] > 0:
            held[key] -= 1
        else:
            fresh.append(item)
    return fresh


def imported_kind(item: ImportItem) -> str:
    if item.speaker == ASSISTANT:
        return REPLY
    if item.meta.get("source") == DOCUMENT:  # an exported passage of a file comes back as one
        return DOCUMENT
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
