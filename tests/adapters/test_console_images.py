"""Photos from disk in the terminal chat (`/image PATH [CAPTION]`, and `/file` for a file whose
content is an image), with the real conversation and store and the real vision backend over HTTP
to the loopback vision server."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.adapters.console import ConsoleChat, ConsoleIO
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.images import NO_BACKEND, NOTHING_KEPT, Images
from bot.core.models import IMAGE
from bot.media.images import NOT_IMAGE
from bot.media.vision.openai import OpenAIVision
from bot.store.sqlite.store import SqliteStore
from tests.media import pictures
from tests.media.vision_server import FakeVision, seeing
from tests.support.fakes import HashEmbedder, ScriptedInference

REPLY = "What a view."


@pytest.fixture
async def vision() -> AsyncIterator[tuple[FakeVision, OpenAIVision]]:
    async with seeing() as both:
        yield both


async def chat(store: SqliteStore, vision: OpenAIVision | None, *lines: str) -> str:
    """What a pipe reads back after sending `lines`."""
    conversation = Conversation(
        store, HashEmbedder(), ScriptedInference(REPLY), ConversationPolicy(persona="p")
    )
    waiting = [f"{line}\n" for line in lines]
    out = io.StringIO()
    pipe = ConsoleIO(lambda: waiting.pop(0) if waiting else "", out, io.StringIO(), interactive=False)
    await ConsoleChat(conversation, "ann", pipe, images=Images(conversation, vision)).run()
    return out.getvalue()


async def test_an_image_on_disk_is_seen_with_its_caption(
    store: SqliteStore, vision: tuple[FakeVision, OpenAIVision], tmp_path: Path
) -> None:
    server, backend = vision
    picture = tmp_path / "view.png"
    picture.write_bytes(pictures.png("blue"))
    assert await chat(store, backend, f"/image {picture} the view from the hut") == f"{REPLY}\n"
    user, _ = await store.turns.recent_turns("ann", "console", 10)
    assert user.text == "the view from the hut"
    assert [got.caption for got in server.received] == ["the view from the hut"]
    assert [m.kind for m in await store.memories.list_memories("ann", 10) if m.kind == IMAGE] == [IMAGE]


async def test_file_sees_an_image_by_its_content_whatever_its_name(
    store: SqliteStore, vision: tuple[FakeVision, OpenAIVision], tmp_path: Path
) -> None:
    server, backend = vision
    named_like_audio = tmp_path / "note.ogg"
    named_like_audio.write_bytes(pictures.photo("white"))
    assert await chat(store, backend, f"/file {named_like_audio}") == f"{REPLY}\n"
    assert server.received[0].width == 640


async def test_a_pdf_named_jpg_and_no_backend_are_each_one_line(
    store: SqliteStore, vision: tuple[FakeVision, OpenAIVision], tmp_path: Path
) -> None:
    server, backend = vision
    lying = tmp_path / "holiday.jpg"
    lying.write_bytes(pictures.PDF)
    assert await chat(store, backend, f"/image {lying}") == f"{NOT_IMAGE} {NOTHING_KEPT}\n"
    assert await chat(store, None, f"/image {lying}") == f"{NO_BACKEND}\n"
    assert server.received == [] and await store.memories.list_memories("ann", 10) == []
