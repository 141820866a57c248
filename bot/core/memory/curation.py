"""Revising memories: one replaces another, the person confirms or corrects one.

Nothing is deleted here. A replaced memory keeps its text and its link to what replaced it
(`superseded_by`), so /memories and /export can show what happened; search no longer sees it.
A summary that a new statement makes partly untrue keeps the rest: the untrue sentences move to
its `meta.dropped`, with the id of the memory that made them untrue.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from bot.core.memory import consolidation
from bot.core.memory.contradiction import Contradiction, untrue_sentences
from bot.core.memory.ports import Embedder, MemoryCuration, MemoryIndex
from bot.core.models import Memory, NewMemory, Revision
from bot.core.text import EMBED_CHARS


class CurationStore(Protocol):
    """What revising memories needs of the store."""

    @property
    def memories(self) -> MemoryIndex: ...

    @property
    def curation(self) -> MemoryCuration: ...


async def supersede(
    store: CurationStore,
    user_id: str,
    old_ids: Sequence[int],
    new_id: int,
    now: datetime,
    *,
    status: str = "superseded",
) -> list[int]:
    """Mark each old memory as replaced by `new_id` (status superseded, or merged for a twin).
    Returns the ids that changed."""
    changed: list[int] = []
    for old_id in old_ids:
        if old_id == new_id:
            continue
        revision = Revision(status=status, superseded_by=new_id, updated_at=now)
        if await store.curation.revise_memory(user_id, old_id, revision):
            changed.append(old_id)
    return changed


async def replace(store: CurationStore, embedder: Embedder, old: Memory, text: str, now: datetime) -> int:
    """A confirmed memory with `text` takes the place of `old` (a correction). Returns its id."""
    vector = (await embedder.embed([text[:EMBED_CHARS]]))[0]
    meta = {**old.meta, "corrects": old.id}
    (new_id,) = await store.memories.add_memories(
        [NewMemory(old.user_id, text, "user", now, vector, embedder.model_name, old.kind, meta)]
    )
    await store.curation.revise_memory(old.user_id, new_id, Revision(verification=1.0, pinned=old.pinned))
    await store.curation.link_sources(new_id, await store.curation.memory_sources(old.id))
    await supersede(store, old.user_id, [old.id], new_id, now)
    return new_id


async def revise_summary(
    store: CurationStore, embedder: Embedder, summary: Memory, found: Contradiction, by_id: int, now: datetime
) -> bool:
    """Drop the sentences of `summary` that `found` (said in memory `by_id`) makes untrue; with
    none left, the summary is superseded. Returns whether it changed."""
    head, said = consolidation.summary_parts(summary.text)
    untrue = set(untrue_sentences(found, said))
    if not untrue:
        return False
    kept = [sentence for index, sentence in enumerate(said) if index not in untrue]
    earlier = summary.meta.get("dropped")
    dropped = list(earlier) if isinstance(earlier, list) else []
    dropped += [{"text": said[index], "by": by_id} for index in sorted(untrue)]
    meta = {**summary.meta, "dropped": dropped}
    if not kept:  # nothing true is left: it goes with the fact
        revision = Revision(status="superseded", superseded_by=by_id, meta=meta, updated_at=now)
        return await store.curation.revise_memory(summary.user_id, summary.id, revision)
    text = consolidation.summary_from(head, kept)
    vector = (await embedder.embed([text[:EMBED_CHARS]]))[0]
    revision = Revision(text=text, embedding=vector, meta=meta, updated_at=now)
    return await store.curation.revise_memory(summary.user_id, summary.id, revision)
