"""A document a person shared, kept as their document memories: each passage embedded and stored
with its source (`meta`: file, page), searchable as soon as this returns.

A file is kept whole or not at all: it is read and every passage embedded before anything is
written, and the passages are written in one transaction. The same file kept again (a retried
job, a file sent twice) is found by its digest and not stored twice. A document's text is data:
recall shows it quoted, with its source, in the person's message, never in the system prompt
(core/chat/prompt.py)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from bot.core.errors import MediaError
from bot.core.media.models import DocumentLimits, KeptDocument, MediaFile, Passage
from bot.core.media.ports import DocumentReader
from bot.core.memory.ports import Embedder, MemoryIndex
from bot.core.models import DOCUMENT, JSONObject, NewMemory, Vector
from bot.core.text import EMBED_CHARS, storable

# Passages embedded at a time; progress is reported after each batch.
EMBED_BATCH = 64
# How many nearest memories are looked at for a copy of the file's first passage.
COPY_PROBE = 10
MAX_NAME_CHARS = 120
_SPACES = re.compile(r"\s+")


def file_label(name: str) -> str:
    """The name a file is shown by: its last path part, without control or format characters
    (a right-to-left override), on one line, at most MAX_NAME_CHARS long."""
    base = storable(name).replace("\\", "/").rsplit("/", 1)[-1]
    base = _SPACES.sub(" ", base)  # a newline or tab becomes a space before controls go
    base = "".join(char for char in base if unicodedata.category(char)[0] != "C").strip()
    if len(base) > MAX_NAME_CHARS:
        _, dot, extension = base.rpartition(".")
        keep = extension if dot and len(extension) <= 8 else ""
        base = base[: MAX_NAME_CHARS - len(keep) - 2] + "…" + (f".{keep}" if keep else "")
    return base


def document_meta(passage: Passage, digest: str, number: int, total: int, chat_id: str | None) -> JSONObject:
    """What a passage's memory says of its source (export and import keep it as it is)."""
    meta: dict[str, object] = {"source": DOCUMENT, "file": passage.source, "document": digest}
    if passage.page is not None:
        meta["page"] = passage.page
    meta |= {"passage": number, "passages": total}
    if chat_id is not None:
        meta["chat_id"] = chat_id  # a shared chat recalls only what was shared there
    return meta


async def keep_document(
    index: MemoryIndex,
    embedder: Embedder,
    reader: DocumentReader,
    user_id: str,
    document: MediaFile,
    *,
    limits: DocumentLimits,
    now: datetime,
    chat_id: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> KeptDocument:
    """Read `document`, embed its passages and store them as `user_id`'s document memories.
    Raises MediaError (nothing stored) for a file the reader refuses, one with no text, or one
    that would take the person past `limits.max_passages_per_person`. `on_progress(done, total)`
    after each batch of passages is embedded."""
    document = replace(document, name=file_label(document.name))
    found = await reader.read(document)
    if not found:
        raise MediaError(f"I found no text in {document.name or 'your file'}.")
    digest = hashlib.sha256(document.data).hexdigest()[:32]
    first = (await embedder.embed([found[0].text[:EMBED_CHARS]]))[0]
    kept = KeptDocument(
        name=document.name,
        digest=digest,
        passages=len(found),
        pages=tuple(sorted({p.page for p in found if p.page is not None})),
        characters=sum(len(p.text) for p in found),
    )
    if await _kept_before(index, user_id, first, digest):
        return replace(kept, already=True)
    await _check_room(index, user_id, len(found), document.name, limits)
    vectors = [first, *await _embedded(embedder, found[1:], on_progress)]
    total = len(found)
    ids = await index.add_memories([
        NewMemory(
            user_id=user_id, text=passage.text, speaker=None, created_at=now, embedding=vector,
            embedding_model=embedder.model_name, kind=DOCUMENT,
            meta=document_meta(passage, digest, number, total, chat_id),
            # Searched beside the text, never shown: "what did plan.pdf say about …" finds it.
            context=passage.source,
        )
        for number, (passage, vector) in enumerate(zip(found, vectors, strict=True), start=1)
    ])  # fmt: skip
    return replace(kept, memory_ids=tuple(ids))


async def _embedded(
    embedder: Embedder, rest: Sequence[Passage], on_progress: Callable[[int, int], None] | None
) -> list[Vector]:
    vectors: list[Vector] = []
    total = len(rest) + 1
    for start in range(0, len(rest), EMBED_BATCH):
        batch = rest[start : start + EMBED_BATCH]
        vectors += await embedder.embed([p.text[:EMBED_CHARS] for p in batch])
        if on_progress is not None:
            on_progress(1 + len(vectors), total)
    return vectors


async def _kept_before(index: MemoryIndex, user_id: str, first: Vector, digest: str) -> bool:
    """The same file is kept already: its first passage is the nearest memory to itself."""
    hits = await index.dense_search(user_id, first, COPY_PROBE)
    return any(hit.memory.kind == DOCUMENT and hit.memory.meta.get("document") == digest for hit in hits)


async def _check_room(
    index: MemoryIndex, user_id: str, adding: int, name: str, limits: DocumentLimits
) -> None:
    kept = await index.memory_count(user_id, only_kinds=(DOCUMENT,))
    if kept + adding > limits.max_passages_per_person:
        raise MediaError(
            f"Keeping {name or 'this file'} ({adding:,} passages) would take you past the "
            f"{limits.max_passages_per_person:,} passages I keep from files for one person "
            f"({kept:,} kept now). /forget file NAME forgets a file you no longer need."
        )
