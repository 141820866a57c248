"""Documents on Telegram, end to end: the real python-telegram-bot against the loopback Bot API
(getFile, then the file server), the real document reader, the real conversation and SQLite
store, and for a long file the real job (in-process runner, run_attempt) with its steps shown.
A refused file stores nothing; a kept one is recalled with its source in the next message."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.core.chat.conversation import Conversation
from bot.core.chat.documents import ChatDocuments
from bot.core.jobs import JobRegistry
from bot.core.loading import LoadOnce
from bot.core.memory.ports import Embedder
from bot.core.store import Store
from bot.jobs.inprocess import InProcessJobs
from bot.media.shelf import FolderShelf
from bot.store.sqlite.store import SqliteStore
from bot.wiring.job_store import per_job
from bot.wiring.media.document_jobs import SPOOL, add_document_jobs
from bot.wiring.media.documents import ChatKeeper
from bot.wiring.settings import DocumentSettings
from tests.adapters.telegram.conftest import ANN, GROUP, replies_done, running_bot
from tests.media.document_files import docx_bomb, docx_bytes, encrypted_pdf, pdf_bytes
from tests.support.fakes import HashEmbedder, ScriptedInference
from tests.support.telegram_api import FakeTelegramBotApi

PERSON = f"telegram:{ANN}"
PAGES = ["The allotment opens at seven.", "No bonfires after nine in the evening, says the committee."]
Wiring = Callable[[Store, Conversation, Embedder], ChatDocuments]


@pytest.fixture
async def jobs(tmp_path: Path) -> AsyncIterator[InProcessJobs]:
    registry = JobRegistry()
    opener = per_job(lambda: SqliteStore.open(tmp_path / "kindred.db"))
    embedder: LoadOnce[Embedder] = LoadOnce(HashEmbedder, what="embedder")
    add_document_jobs(registry, opener, embedder, SECTION, tmp_path)
    runner = InProcessJobs(registry)
    yield runner
    await runner.close()


# Two PDF pages or 64 KiB make a file long here, so that a test file goes through the job.
SECTION = DocumentSettings(job_pages=2, job_bytes=64 * 1024, max_bytes=256 * 1024)


def reading(jobs: InProcessJobs, tmp_path: Path, *, shelf: FolderShelf | None = None) -> Wiring:
    def wire(store: Store, conversation: Conversation, embedder: Embedder) -> ChatDocuments:
        keeper = ChatKeeper(store.memories, embedder, SECTION, jobs, tmp_path, poll_s=0.01)
        return ChatDocuments(conversation, keeper, store.turns, max_bytes=SECTION.max_bytes, shelf=shelf)

    return wire


async def answered(api: FakeTelegramBotApi, chat_id: int, count: int = 1) -> list[str]:
    """The bot's answers once it has sent `count`; a long file's status lines (ending "…") are
    not answers."""

    def answers() -> list[str]:
        return [text for text in api.texts(chat_id) if not text.endswith("…")]

    await api.wait_until(lambda: len(answers()) >= count, what=f"{count} answers in {chat_id}")
    return answers()


async def documents_of(store: Store) -> list[tuple[str, object]]:
    listed = await store.memories.list_memories(PERSON, 100, 0)
    return [(m.text, m.meta.get("file")) for m in listed if m.kind == "document"]


async def test_a_pdf_is_kept_summarised_and_recalled_with_its_source_in_the_next_message(
    api: FakeTelegramBotApi, tmp_path: Path, jobs: InProcessJobs
) -> None:
    inference = ScriptedInference("It opens at seven.")
    async with running_bot(api, tmp_path, inference=inference, documents=reading(jobs, tmp_path)) as bot:
        api.document_message(ANN, ANN, pdf_bytes(PAGES[:1]), "plan.pdf")
        [summary] = await answered(api, ANN)
        assert summary.startswith("I keep plan.pdf: 1 passage from page 1")
        api.private_message(ANN, "When does the allotment open?")
        await replies_done(api, ANN, 1)
        kept = await documents_of(bot.store)
    assert kept == [("The allotment opens at seven.", "plan.pdf")]
    prompt = inference.prompts[-1]
    system = [m.content for m in prompt if m.role == "system"]
    person = prompt[-1].content
    assert '"plan.pdf"' in person and "The allotment opens at seven." in person
    assert not any("allotment" in text for text in system), "a file's text never enters the system role"


async def test_a_docx_with_a_caption_is_kept_then_the_caption_answered(
    api: FakeTelegramBotApi, tmp_path: Path, jobs: InProcessJobs
) -> None:
    letter = docx_bytes([("Heading 1", "Travel"), ("Normal", "We fly to Lisbon on 3 May.")])
    async with running_bot(api, tmp_path, documents=reading(jobs, tmp_path)) as bot:
        api.document_message(
            ANN, ANN, letter, "trip.docx", mime_type="application/octet-stream", caption="thoughts?"
        )
        [text] = await replies_done(api, ANN, 1)
        turns = await bot.turns(PERSON, PERSON)
        kept = await documents_of(bot.store)
    assert text.startswith("I keep trip.docx: 1 passage") and text.endswith("Lovely to hear from you.")
    assert turns == [("user", "thoughts?"), ("assistant", "Lovely to hear from you.")]
    assert kept == [("Travel: We fly to Lisbon on 3 May.", "trip.docx")]


async def test_a_long_pdf_goes_through_the_job_with_its_steps_shown(
    api: FakeTelegramBotApi, tmp_path: Path, jobs: InProcessJobs
) -> None:
    pages = [f"Rule {n}: the gate closes at {n + 5} in the evening." for n in range(1, 7)]
    async with running_bot(api, tmp_path, documents=reading(jobs, tmp_path)) as bot:
        api.document_message(ANN, ANN, pdf_bytes(pages), "rules.pdf")
        await api.wait_until(
            lambda: any(t.startswith("I keep rules.pdf") for t in api.texts(ANN)), what="the summary"
        )
        texts = api.texts(ANN)
        kept = await documents_of(bot.store)
    assert len(kept) == 6
    # One status message, edited through the steps, then the answer.
    status = api.bot_messages(ANN)[0]
    assert status.text is not None and status.text.endswith("…") and "rules.pdf" in status.text
    assert texts[-1].startswith("I keep rules.pdf: 6 passages from pages 1–6")
    assert not list((tmp_path / SPOOL).iterdir()), "nothing of the file stays in the spool"


@pytest.mark.parametrize(
    ("data", "name", "mime", "words"),
    [
        (b"", "empty.pdf", "application/pdf", "empty"),
        (pdf_bytes(["x y z"]), "notes.txt", "text/plain", "I keep notes.txt"),  # the content decides
        (b"\x89PNG\r\n\x1a\n" + bytes(64), "plan.pdf", "application/pdf", "image"),
        (encrypted_pdf(["The safe code is 1234."], "s3cret"), "safe.pdf", "application/pdf", "password"),
        (b"%PDF-1.7\n" + bytes(range(256)) * 8, "broken.pdf", "application/pdf", "Nothing was kept"),
        (docx_bomb(200), "letter.docx", "application/octet-stream", "unpacks to"),
    ],
    ids=["empty", "a lying extension", "an image named .pdf", "encrypted", "malformed", "docx bomb"],
)
async def test_a_hostile_file_gets_one_clear_line_and_stores_nothing_half_done(
    api: FakeTelegramBotApi,
    tmp_path: Path,
    jobs: InProcessJobs,
    data: bytes,
    name: str,
    mime: str,
    words: str,
) -> None:
    async with running_bot(api, tmp_path, documents=reading(jobs, tmp_path)) as bot:
        api.document_message(ANN, ANN, data, name, mime_type=mime)
        [text] = await answered(api, ANN)
        kept = await documents_of(bot.store)
    assert words in text
    assert bool(kept) == text.startswith("I keep")


async def test_a_file_over_the_size_limit_is_refused_before_the_download(
    api: FakeTelegramBotApi, tmp_path: Path, jobs: InProcessJobs
) -> None:
    async with running_bot(api, tmp_path, documents=reading(jobs, tmp_path)) as bot:
        api.document_message(ANN, ANN, b"x" * 1000, "huge.pdf", size=SECTION.max_bytes + 1)
        [text] = await answered(api, ANN)
        assert await documents_of(bot.store) == []
    assert "too large" in text and api.calls_of("getFile") == []


async def test_in_a_group_only_a_document_for_the_bot_is_read(
    api: FakeTelegramBotApi, tmp_path: Path, jobs: InProcessJobs
) -> None:
    async with running_bot(api, tmp_path, documents=reading(jobs, tmp_path)):
        api.document_message(GROUP, ANN, pdf_bytes(PAGES[:1]), "plan.pdf")  # shared among people
        api.document_message(GROUP, ANN, pdf_bytes(PAGES[1:]), "rules.pdf", mention=True)
        [text] = await answered(api, GROUP)
    assert text.startswith("I keep rules.pdf") and len(api.calls_of("getFile")) == 1


async def test_the_same_update_delivered_twice_keeps_the_file_once(
    api: FakeTelegramBotApi, tmp_path: Path, jobs: InProcessJobs
) -> None:
    async with running_bot(api, tmp_path, documents=reading(jobs, tmp_path)) as bot:
        update = api.document_message(ANN, ANN, pdf_bytes(PAGES[:1]), "plan.pdf")
        await answered(api, ANN)
        api.enqueue(update)  # a restart mid-poll hands the same update over again
        texts = await answered(api, ANN, 2)
        kept = await documents_of(bot.store)
    assert len(kept) == 1 and texts[1].startswith("I already keep plan.pdf")


async def test_privacy_files_keep_keeps_the_file_until_it_is_forgotten(
    api: FakeTelegramBotApi, tmp_path: Path, jobs: InProcessJobs
) -> None:
    shelf = FolderShelf(tmp_path / "data")
    async with running_bot(api, tmp_path, documents=reading(jobs, tmp_path, shelf=shelf), shelf=shelf) as bot:
        api.private_message(ANN, "/privacy files keep")
        await answered(api, ANN)
        api.document_message(ANN, ANN, pdf_bytes(PAGES[:1]), "plan.pdf")
        texts = await answered(api, ANN, 2)
        [kept_file] = [p for p in shelf.folder(PERSON).rglob("*") if p.is_file()]
        assert kept_file.name == "plan.pdf" and kept_file.read_bytes() == pdf_bytes(PAGES[:1])
        api.private_message(ANN, "/privacy")
        shown = await answered(api, ANN, 3)
        api.private_message(ANN, "/forget file plan.pdf")
        forgot = await answered(api, ANN, 4)
        assert await documents_of(bot.store) == []
    assert "I keep the file itself too" in texts[1]
    assert "Files you send me: kept" in shown[2]
    assert "The file itself is deleted too." in forgot[3]
    assert not kept_file.exists()


async def test_by_default_no_byte_of_the_file_stays_on_disk(
    api: FakeTelegramBotApi, tmp_path: Path, jobs: InProcessJobs
) -> None:
    shelf = FolderShelf(tmp_path / "data")
    async with running_bot(api, tmp_path, documents=reading(jobs, tmp_path, shelf=shelf), shelf=shelf):
        api.document_message(
            ANN, ANN, pdf_bytes([f"Rule {n}." for n in range(1, 5)]), "rules.pdf"
        )  # long: the job
        await api.wait_until(lambda: any(t.startswith("I keep") for t in api.texts(ANN)), what="the summary")
        api.private_message(ANN, "/privacy")
        shown = await answered(api, ANN, 2)
    assert "deleted once I have read them (the default)" in shown[-1]
    assert not (tmp_path / "data").exists() or not any(p.is_file() for p in (tmp_path / "data").rglob("*"))
    assert not any((tmp_path / SPOOL).iterdir())
