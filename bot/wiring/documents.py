"""Documents people share: the reader the settings choose, and a file kept for a person, here or,
for a long one, by `kindred.media.keep_document` (bot/wiring/document_jobs.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.errors import MediaError
from bot.core.media.documents import KeptDocument, file_label, keep_document
from bot.core.media.models import MediaFile
from bot.core.media.ports import DocumentReader
from bot.core.memory.ports import Embedder, MemoryIndex
from bot.media.documents import DocumentFileReader
from bot.wiring.document_jobs import KEEP_EXTRA_S, KEEP_JOB, spool, unspool
from bot.wiring.settings import DocumentSettings, Settings

# Beyond the job's own hard limit: the time it may wait in the queue behind others.
QUEUE_WAIT_S = 600.0


def load_document_reader(section: DocumentSettings) -> DocumentReader:
    return DocumentFileReader(section.limits())


def is_long(section: DocumentSettings, document: MediaFile) -> bool:
    """Over KINDRED_DOCUMENT_JOB_BYTES, or a PDF of more than KINDRED_DOCUMENT_JOB_PAGES pages."""
    return DocumentFileReader(section.limits()).is_long(document)


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


async def keep_file_by_job(
    settings: Settings, user_id: str, document: MediaFile, *, chat_id: str | None = None
) -> KeptDocument:
    """What `keep_file` does, by the job on the configured runner (a Celery worker with
    REDIS_URL), waited for: searchable when this returns. Raises MediaError with the job's words
    for a file it refused, JobError or JobTimeout when the job itself failed."""
    from bot.wiring.jobs import load_jobs

    jobs = load_jobs(settings)
    try:
        spooled = spool(settings.data_dir, document)
        name = file_label(document.name)
        try:
            job_id = jobs.submit(
                KEEP_JOB, {"user_id": user_id, "spooled": spooled, "name": name, "chat_id": chat_id}
            )
        except Exception:
            unspool(settings.data_dir, spooled)  # nothing was queued: no job will delete it
            raise
        result = await jobs.result(job_id, _job_wait_s(settings))
    finally:
        await jobs.close()
    if not result.get("ok"):
        raise MediaError(str(result.get("message") or f"{document.name} could not be kept."))
    return KeptDocument.from_payload(result)


def _job_wait_s(settings: Settings) -> float:
    return settings.documents.max_seconds + KEEP_EXTRA_S + 60 + QUEUE_WAIT_S
