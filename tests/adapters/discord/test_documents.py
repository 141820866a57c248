"""Document attachments on Discord, end to end: discord.py's real client against Discord on
loopback (gateway, REST, the attachments' CDN), the real document reader, conversation and SQLite
store. Kept documents are recalled with their source; refused ones store nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.core.chat.conversation import Conversation
from bot.core.chat.documents import ChatDocuments
from bot.core.jobs import JobRegistry
from bot.core.memory.ports import Embedder
from bot.core.store import Store
from bot.jobs.inprocess import InProcessJobs
from bot.store.sqlite.store import SqliteStore
from bot.wiring.media.documents import ChatKeeper
from bot.wiring.settings import DocumentSettings
from tests.adapters.discord.conftest import running, services
from tests.media.document_files import docx_bytes, pdf_bytes
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, FakeDiscord, settled
from tests.support.waiting import wait_until

PERSON = f"discord:{ANN['id']}"
SECTION = DocumentSettings(max_bytes=64 * 1024)
PDF: dict[str, Any] = {"voice_message": False, "filename": "plan.pdf", "content_type": "application/pdf"}


def reading(tmp_path: Path) -> Callable[[Store, Conversation, Embedder], ChatDocuments]:
    def wire(store: Store, conversation: Conversation, embedder: Embedder) -> ChatDocuments:
        # Every file here is short: kept in process; the runner is there for the keeper's shape.
        keeper = ChatKeeper(store.memories, embedder, SECTION, InProcessJobs(JobRegistry()), tmp_path)
        return ChatDocuments(conversation, keeper, store.turns, max_bytes=SECTION.max_bytes)

    return wire


def texts(fake: FakeDiscord, message: p.Payload) -> list[str]:
    return [shown.content for shown in fake.replies_to(message)]


async def answered(fake: FakeDiscord, message: p.Payload) -> list[str]:
    """What the bot showed, once whole: a streamed reply is shown in pieces (a busy machine shows
    its first word alone), and every answer here ends with a sentence."""

    def whole() -> bool:
        shown = texts(fake, message)
        return bool(shown) and shown[-1].rstrip().endswith((".", "!", "?", "…"))

    await wait_until(whole, what="a whole answer")
    return texts(fake, message)


async def kept_files(store: Store) -> list[tuple[str, object]]:
    listed = await store.memories.list_memories(PERSON, 100, 0)
    return [(m.text, m.meta.get("file")) for m in listed if m.kind == "document"]


async def test_a_pdf_and_a_docx_are_kept_with_their_source(
    fake: FakeDiscord, store: SqliteStore, tmp_path: Path
) -> None:
    letter = docx_bytes([("Normal", "The plumber comes on Tuesday.")])
    async with running(services(store, documents=reading(tmp_path))):
        first = await fake.voice_dm(ANN, pdf_bytes(["The allotment opens at seven."]), **PDF)
        [summary] = await answered(fake, first)
        docx = {"voice_message": False, "filename": "house.docx", "content_type": "application/octet-stream"}
        second = await fake.voice_dm(ANN, letter, text="what day?", **docx)
        [reply] = await answered(fake, second)
    assert summary.startswith("I keep plan.pdf: 1 passage from page 1")
    assert reply.startswith("I keep house.docx") and reply.endswith("Nice to hear from you.")
    assert sorted(await kept_files(store)) == [
        ("The allotment opens at seven.", "plan.pdf"),
        ("The plumber comes on Tuesday.", "house.docx"),
    ]


async def test_a_file_over_the_limit_is_refused_before_the_download(
    fake: FakeDiscord, store: SqliteStore, tmp_path: Path
) -> None:
    async with running(services(store, documents=reading(tmp_path))):
        message = await fake.voice_dm(ANN, b"%PDF-1.4", size=SECTION.max_bytes + 1, **PDF)
        [text] = await answered(fake, message)
    assert "too large" in text and fake.downloads == [] and await kept_files(store) == []


async def test_in_a_server_only_a_document_for_the_bot_is_read(
    fake: FakeDiscord, store: SqliteStore, tmp_path: Path
) -> None:
    data = pdf_bytes(["The allotment opens at seven."])
    async with running(services(store, documents=reading(tmp_path))):
        chatter = await fake.voice_in_server(ANN, data, **PDF)
        assert await settled(lambda: not fake.replies_to(chatter))
        mention = await fake.voice_in_server(ANN, data, mention=True, **PDF)
        [text] = await answered(fake, mention)
    assert text.startswith("I keep plan.pdf") and len(fake.downloads) == 1
