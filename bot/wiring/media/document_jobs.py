"""`kindred.media.keep_document` (the default queue): a long document kept by a job, with its
progress, rather than in the process that received it.

Payload: {user_id, spooled, name, chat_id}, ids and text only. The file's bytes wait in the data
dir's spool (`media/spool/<name>`, shared with the workers: docker-compose gives every Kindred
service the same `kindred-data` volume), written whole before the job is queued. The job reads it,
keeps it (core/media/documents.py), reports each step (`report_progress`: the Celery task's
PROGRESS state, which Flower shows) and deletes it, kept or refused; only a failure a retry can fix
leaves it for the retry. A file the reader refuses is a result ({"ok": false, "message"}), not an
error: retrying would refuse it the same way, and the person should read why.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from bot.core.errors import JobError, MediaError
from bot.core.jobs import JobPayload, JobRegistry, is_transient, report_progress
from bot.core.loading import LoadOnce
from bot.core.media.documents import keep_document
from bot.core.media.models import MediaFile
from bot.core.memory.ports import Embedder
from bot.media.documents import DocumentFileReader
from bot.wiring.job_store import StoreAccess
from bot.wiring.settings import DocumentSettings

KEEP_JOB = "kindred.media.keep_document"
SPOOL = Path("media") / "spool"
# Reading, embedding and one transaction, on a busy worker: far more than a 500-page PDF needs.
KEEP_EXTRA_S = 600.0
_SPOOLED = re.compile(r"[0-9a-f]{32}")
# Longer than any job waits with its retries: what is older was left behind.
SPOOL_KEPT_S = 2 * 86_400.0


def spool(data_dir: Path, document: MediaFile) -> str:
    """Write the file's bytes to the spool whole (a temporary name, then renamed) and return its
    spool name: a name of its own each time, so that two people sending the same file wait apart
    and neither job deletes the other's. Files left behind (a job that failed on its last retry)
    are swept when they are older than SPOOL_KEPT_S."""
    name = uuid.uuid4().hex
    folder = data_dir / SPOOL
    folder.mkdir(parents=True, exist_ok=True)
    _sweep(folder)
    partial = folder / f".{name}.partial"
    partial.write_bytes(document.data)
    os.replace(partial, folder / name)
    return name


def _sweep(folder: Path) -> None:
    stale = time.time() - SPOOL_KEPT_S
    for left in folder.iterdir():
        try:
            if left.stat().st_mtime < stale:
                left.unlink(missing_ok=True)
        except OSError:  # another process swept it first
            continue


def is_spool_name(name: str) -> bool:
    """Whether `name` is one `spool` gives (a payload names the file; nothing else is read)."""
    return _SPOOLED.fullmatch(name) is not None


def unspool(data_dir: Path, spooled: str) -> None:
    (data_dir / SPOOL / spooled).unlink(missing_ok=True)


def add_document_jobs(
    registry: JobRegistry,
    stores: StoreAccess,
    embedder: LoadOnce[Embedder],
    section: DocumentSettings,
    data_dir: Path,
) -> None:
    limits = section.limits()
    reader = DocumentFileReader(limits)
    soft_s = limits.max_seconds + KEEP_EXTRA_S

    @registry.job(KEEP_JOB, soft_s=soft_s, hard_s=soft_s + 60, retries=2, retry_delay_s=5)
    async def keep(payload: JobPayload) -> JobPayload:
        user_id, spooled, name = (payload.get(key) for key in ("user_id", "spooled", "name"))
        chat_id = payload.get("chat_id")
        if not (isinstance(user_id, str) and isinstance(name, str) and isinstance(spooled, str)):
            raise JobError(f"{KEEP_JOB} needs user_id, spooled and name (text)")
        if not is_spool_name(spooled) or not (chat_id is None or isinstance(chat_id, str)):
            raise JobError(f"{KEEP_JOB}: spooled must be a spool name (32 hex digits), chat_id text or null")
        path = data_dir / SPOOL / spooled
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            # Kept and deleted by an earlier delivery of this job, or never spooled here.
            return {"ok": False, "reason": "gone", "message": f"{name} is no longer waiting to be read."}
        report_progress({"step": "reading", "file": name})

        async def kept_now() -> JobPayload:
            async with stores() as store:
                kept = await keep_document(
                    store.memories, embedder.get(), reader, user_id, MediaFile("document", data, name),
                    limits=limits, now=datetime.now(UTC), chat_id=chat_id,
                    on_progress=_embedding_progress,
                )  # fmt: skip
            return {"ok": True, **kept.as_payload(), "summary": kept.summary()}

        return await from_spool(path, kept_now, refused=(MediaError,))


async def from_spool(
    path: Path, work: Callable[[], Awaitable[JobPayload]], *, refused: tuple[type[Exception], ...]
) -> JobPayload:
    """What `work()` returns, or `{"ok": False, "reason": "refused"}` with the words of one of the
    `refused` errors; the spooled file at `path` is deleted once the job is done with it. A failure
    that will be retried leaves the file for the retry."""
    try:
        result = await work()
    except refused as exc:
        result = {"ok": False, "reason": "refused", "message": str(exc)}
    except Exception as exc:
        if not is_transient(exc):  # no retry will come for it: the file goes now
            _drop(path)
        raise
    _drop(path)
    return result


def _drop(path: Path) -> None:
    # One unlink on local disk: not worth a thread.
    path.unlink(missing_ok=True)


def _embedding_progress(done: int, total: int) -> None:
    report_progress({"step": "embedding", "done": done, "total": total})
