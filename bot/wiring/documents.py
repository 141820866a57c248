"""Documents people share: the reader the settings choose, and a file kept for a person."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.media.documents import KeptDocument, keep_document
from bot.core.media.models import MediaFile
from bot.core.media.ports import DocumentReader
from bot.core.memory.ports import Embedder, MemoryIndex
from bot.media.documents import DocumentFileReader
from bot.wiring.settings import DocumentSettings


def load_document_reader(section: DocumentSettings) -> DocumentReader:
    return DocumentFileReader(section.limits())


async def keep_file(
    index: MemoryIndex,
    embedder: Embedder,
    section: DocumentSettings,
    user_id: str,
    document: MediaFile,
    *,
    chat_id: str | None = None,
) -> KeptDocument:
    """`document` read within the section's limits and kept as `user_id`'s document memories,
    searchable when this returns (core/media/documents.py)."""
    return await keep_document(
        index,
        embedder,
        load_document_reader(section),
        user_id,
        document,
        limits=section.limits(),
        now=datetime.now(UTC),
        chat_id=chat_id,
    )
