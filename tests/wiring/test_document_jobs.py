"""`kindred.media.keep_document`: a long document kept by a job, run here through the real attempt
policy (`run_attempt`, as both runners run it) on a real SQLite store: its steps are reported,
its spooled file deleted, kept or refused, and a second delivery stores nothing twice."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.errors import JobError
from bot.core.jobs import JobPayload, JobRegistry, run_attempt
from bot.core.loading import LoadOnce
from bot.core.media.models import MediaFile
from bot.core.memory.ports import Embedder
from bot.core.store import Store
from bot.store.sqlite.store import SqliteStore
from bot.wiring.job_store import per_job
from bot.wiring.media.document_jobs import KEEP_JOB, SPOOL, SPOOL_KEPT_S, add_document_jobs, spool
from bot.wiring.media.documents import is_long
from bot.wiring.settings import DocumentSettings
from tests.media.document_files import encrypted_pdf, pdf_bytes
from tests.support.fakes import HashEmbedder

ANN = "telegram:1"
PAGES = [f"Page {n} of the allotment rules: no bonfires after {n + 6} in the evening." for n in range(1, 9)]


@pytest.fixture
async def stored(tmp_path: Path) -> AsyncIterator[Store]:
    store = await SqliteStore.open(tmp_path / "kindred.db")
    yield store
    await store.close()


def registry(tmp_path: Path) -> JobRegistry:
    jobs = JobRegistry()
    opener = per_job(lambda: SqliteStore.open(tmp_path / "kindred.db"))
    embedder: LoadOnce[Embedder] = LoadOnce(HashEmbedder, what="embedder")
    add_document_jobs(jobs, opener, embedder, DocumentSettings(), tmp_path)
    return jobs


async def run(tmp_path: Path, payload: JobPayload, steps: list[JobPayload] | None = None) -> JobPayload:
    job = registry(tmp_path).get(KEEP_JOB)
    return await run_attempt(job, payload, "job-1", progress=None if steps is None else steps.append)


async def test_a_spooled_pdf_is_kept_with_its_steps_and_its_file_deleted(
    tmp_path: Path, stored: Store
) -> None:
    spooled = spool(tmp_path, MediaFile("document", pdf_bytes(PAGES), "rules.pdf"))
    assert (tmp_path / SPOOL / spooled).is_file()
    steps: list[JobPayload] = []
    payload = {"user_id": ANN, "spooled": spooled, "name": "rules.pdf", "chat_id": None}
    result = await run(tmp_path, payload, steps)
    assert result["ok"] is True and result["passages"] == 8 and result["pages"] == list(range(1, 9))
    assert result["summary"].startswith("I keep rules.pdf: 8 passages from pages 1–8")
    assert steps[0] == {"step": "reading", "file": "rules.pdf"}
    assert steps[-1] == {"step": "embedding", "done": 8, "total": 8}
    assert not (tmp_path / SPOOL / spooled).exists()
    assert await stored.memories.memory_count(ANN, only_kinds=("document",)) == 8

    # Delivered again after it was kept: its file is gone, and nothing is stored twice.
    again = await run(tmp_path, payload)
    assert again["ok"] is False and again["reason"] == "gone"
    assert await stored.memories.memory_count(ANN) == 8


async def test_a_refused_file_is_a_result_with_its_reason_and_its_file_goes(
    tmp_path: Path, stored: Store
) -> None:
    spooled = spool(tmp_path, MediaFile("document", encrypted_pdf(PAGES, "pw"), "rules.pdf"))
    result = await run(tmp_path, {"user_id": ANN, "spooled": spooled, "name": "rules.pdf", "chat_id": None})
    assert result == {
        "ok": False,
        "reason": "refused",
        "message": "rules.pdf is protected by a password. Send a copy without one and I'll read it.",
    }
    assert not (tmp_path / SPOOL / spooled).exists() and await stored.memories.memory_count(ANN) == 0


@pytest.mark.parametrize("spooled", ["../../kindred.db", "a" * 31, "A" * 32, "../" + "a" * 29])
async def test_a_spool_name_that_is_not_one_is_refused(tmp_path: Path, spooled: str) -> None:
    with pytest.raises(JobError, match="spool name"):
        await run(tmp_path, {"user_id": ANN, "spooled": spooled, "name": "x.pdf", "chat_id": None})


def test_the_same_file_spooled_twice_waits_twice_and_what_was_left_behind_is_swept(tmp_path: Path) -> None:
    document = MediaFile("document", pdf_bytes(PAGES), "rules.pdf")
    first, second = spool(tmp_path, document), spool(tmp_path, document)
    assert first != second and (tmp_path / SPOOL / first).read_bytes() == document.data
    old = time.time() - SPOOL_KEPT_S - 60
    os.utime(tmp_path / SPOOL / first, (old, old))
    third = spool(tmp_path, document)
    assert sorted(path.name for path in (tmp_path / SPOOL).iterdir()) == sorted([second, third])


def test_long_files_are_those_over_the_bytes_or_the_pages() -> None:
    section = DocumentSettings(job_bytes=10_000, job_pages=5)

    def long(data: bytes) -> bool:
        return is_long(section, MediaFile("document", data, "f"))

    assert long(pdf_bytes(PAGES)) and not long(pdf_bytes(PAGES[:5]))
    assert long(b"words " * 2000) and not long(b"words " * 100)
    assert not long(b"%PDF-1.4 but nothing after it")  # reading it will say why
