"""`kindred memory add-file PATH --user ID [--json]`: a file kept as if that person had sent it.
Documents today (PDF, .docx, plain text, Markdown); audio and images are answered "not yet". It
returns when the file is stored and searchable, and prints what was stored."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bot.core.errors import InvalidInput
from bot.core.media.models import KeptDocument, MediaFile
from bot.core.models import Memory
from bot.core.store import Store
from bot.wiring.settings import Settings

# A passage's text in the plain listing; --json prints it whole.
SHOWN_CHARS = 100


async def add_file(settings: Settings, args: argparse.Namespace) -> int:
    from bot.wiring.backends import load_embedder, open_store
    from bot.wiring.documents import is_long, keep_file, keep_file_by_job

    document = MediaFile("document", _read(args.file, settings.documents.max_bytes), args.file.name)
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


def _read(path: Any, max_bytes: int) -> bytes:
    """The file's bytes, refused before it is read when it is over the limit (a 4 GB file is not
    loaded to be refused)."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InvalidInput(
                f"{path.name} is {size / 2**20:,.1f} MB; I read files of up to {max_bytes / 2**20:,.0f} MB "
                "(KINDRED_DOCUMENT_MAX_BYTES)."
            )
        with path.open("rb") as handle:
            return bytes(handle.read(max_bytes + 1))
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
        "memories": [
            {
                "id": m.id,
                "kind": m.kind,
                "text": m.text,
                "timestamp": m.created_at.isoformat(),
                "meta": dict(m.meta),
            }
            for m in stored
        ],
    }
