"""`kindred memory add-file PATH --user ID [--json]`: a file kept as if that person had sent it.
Documents (PDF, .docx, plain text, Markdown) here; audio and images in bot/cli/add_media.py. The
file's first bytes say which, never its name. It returns when the file is stored and searchable,
and prints what was stored."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bot.cli.add_media import add_audio, add_image, memory_record, read_file
from bot.core.errors import InvalidInput
from bot.core.media.kinds import looks_like_document
from bot.core.media.models import KeptDocument, MediaFile, looks_like_image
from bot.core.models import Memory
from bot.core.store import Store
from bot.wiring.settings import Settings

# A passage's text in the plain listing; --json prints it whole.
SHOWN_CHARS = 100
# Enough of a file's start to tell a document from audio (core/media/kinds.py samples 4 KiB).
HEAD_BYTES = 8192


async def add_file(settings: Settings, args: argparse.Namespace) -> int:
    head = _head(args.file)
    if looks_like_image(head):
        return await add_image(settings, args)
    if not looks_like_document(head):
        return await add_audio(settings, args)
    return await _add_document(settings, args)


async def _add_document(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.backends import load_embedder, open_store
    from bot.wiring.media.documents import is_long, keep_file, keep_file_by_job

    data = read_file(args.file, settings.documents.max_bytes, "KINDRED_DOCUMENT_MAX_BYTES")
    document = MediaFile("document", data, args.file.name)
    kept: KeptDocument | None = None
    if is_long(settings.documents, document):
        # A worker keeps it when REDIS_URL is set (threads here otherwise); waited for either way.
        print(f"kindred: {args.file.name} is long: a job keeps it; waiting for it", file=sys.stderr)
        kept = await keep_file_by_job(settings, args.user, document)
    store = await open_store(settings)
    try:
        if kept is None:
            embedder = load_embedder(settings)
            kept = await keep_file(store.memories, embedder, settings.documents, args.user, document)
        stored = await _stored(store, args.user, kept)
    finally:
        await store.close()
    if args.json:
        sys.stdout.write(json.dumps(_record(args.user, kept, stored), ensure_ascii=False) + "\n")
        return 0
    if kept.already:
        print(
            f"{kept.name} is already kept for {args.user} ({kept.passages:,} passages); nothing stored again"
        )
        return 0
    print(f"stored {kept.name} for {args.user}: {kept.contents}")
    for memory in stored:
        page = memory.meta.get("page")
        where = f" page {page}" if page is not None else ""
        text = memory.text if len(memory.text) <= SHOWN_CHARS else memory.text[: SHOWN_CHARS - 1] + "…"
        print(f"  #{memory.id}{where}: {text}")
    return 0


def _head(path: Path) -> bytes:
    """The file's first bytes, enough to tell what it is."""
    try:
        with path.open("rb") as handle:
            return handle.read(HEAD_BYTES)
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None


async def _stored(store: Store, user_id: str, kept: KeptDocument) -> list[Memory]:
    """The memories as the store now holds them: what was stored, read back."""
    return await store.curation.get_memories(user_id, kept.memory_ids) if kept.memory_ids else []


def _record(user_id: str, kept: KeptDocument, stored: list[Memory]) -> dict[str, Any]:
    return {
        "user": user_id,
        "file": kept.name,
        "document": kept.digest,
        "already_stored": kept.already,
        "passages": kept.passages,
        "pages": list(kept.pages),
        "characters": kept.characters,
        "memories": [memory_record(m) for m in stored],
    }
