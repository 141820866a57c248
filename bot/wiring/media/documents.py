"""Documents people share: the reader the settings choose, and a file kept for a person, here or,
for a long one, by `kindred.media.keep_document` (bot/wiring/media/document_jobs.py): for
`kindred memory add-file`, and for chats (`ChatKeeper`, which shows the job's steps)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

from bot.core.errors import MediaError
from bot.core.jobs import JobId, JobPayload, Jobs
from bot.core.media.documents import file_label, keep_document
from bot.core.media.models import KeptDocument, MediaFile
from bot.core.media.ports import DocumentReader, Show
from bot.core.memory.ports import Embedder, MemoryIndex
from bot.media.documents import DocumentFileReader
from bot.wiring.media.document_jobs import KEEP_EXTRA_S, KEEP_JOB, spool, unspool
from bot.wiring.media.job_progress import PROGRESS_POLL_S, followed
from bot.wiring.settings import DocumentSettings, Settings

log = logging.getLogger(__name__)

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
        job_id = submit_keep(jobs, settings.data_dir, user_id, document, chat_id)
        result = await jobs.result(job_id, job_wait_s(settings.documents))
    finally:
        await jobs.close()
    return kept_by_job(result, document.name)


def submit_keep(jobs: Jobs, data_dir: Path, user_id: str, document: MediaFile, chat_id: str | None) -> JobId:
    """The file spooled and its job queued; nothing left in the spool when it could not be."""
    spooled = spool(data_dir, document)
    name = file_label(document.name)
    try:
        return jobs.submit(
            KEEP_JOB, {"user_id": user_id, "spooled": spooled, "name": name, "chat_id": chat_id}
        )
    except Exception:
        unspool(data_dir, spooled)  # nothing was queued: no job will delete it
        raise


def kept_by_job(result: JobPayload, name: str) -> KeptDocument:
    """What the job kept; MediaError with its words for a file it refused."""
    if not result.get("ok"):
        raise MediaError(str(result.get("message") or f"{name} could not be kept."))
    return KeptDocument.from_payload(result)


def job_wait_s(section: DocumentSettings) -> float:
    return section.max_seconds + KEEP_EXTRA_S + 60 + QUEUE_WAIT_S


class ChatKeeper:
    """The `DocumentKeeper` of chats: a small file kept in this process, a long one by the job on
    `jobs`, its steps shown as they pass (as mini-app builds show theirs)."""

    def __init__(
        self,
        index: MemoryIndex,
        embedder: Embedder,
        section: DocumentSettings,
        jobs: Jobs,
        data_dir: Path,
        *,
        poll_s: float = PROGRESS_POLL_S,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.section = section
        self.jobs = jobs
        self.data_dir = data_dir
        self.poll_s = poll_s

    async def keep(
        self, user_id: str, document: MediaFile, *, chat_id: str | None, show: Show
    ) -> KeptDocument:
        if not is_long(self.section, document):
            return await keep_file(
                self.index, self.embedder, self.section, user_id, document, chat_id=chat_id
            )
        name = file_label(document.name) or "your file"
        job_id = submit_keep(self.jobs, self.data_dir, user_id, document, chat_id)
        await show(f"{name} is long, so I'm reading it in the background…")
        result = await followed(
            self.jobs, job_id, job_wait_s(self.section), show, lambda p: _step(name, p), poll_s=self.poll_s
        )
        return kept_by_job(result, name)


def _step(name: str, progress: JobPayload | None) -> str | None:
    """A job's progress (document_jobs.py reports it) in words for the person."""
    if progress is None:
        return None
    if progress.get("step") == "reading":
        return f"Reading {name}…"
    done, total = progress.get("done"), progress.get("total")
    if progress.get("step") == "embedding" and isinstance(done, int) and isinstance(total, int):
        return f"Reading {name}: {done:,} of {total:,} passages…"
    return None
