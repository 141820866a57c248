"""Image attachments on Discord, end to end: discord.py's real client against Discord on loopback
(the gateway, REST and the attachments' CDN), the real vision backend against the loopback vision
server that checks what it receives, the real conversation and SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from bot.adapters.discord.images import NOT_FETCHED
from bot.core.chat.conversation import Conversation
from bot.core.chat.images import NO_BACKEND, NOTHING_KEPT, Images
from bot.core.models import IMAGE
from bot.media.images import DAMAGED
from bot.media.vision.openai import OpenAIVision
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.media import pictures
from tests.media.vision_server import FakeVision, seeing
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, FakeDiscord, dm_channel_id
from tests.support.waiting import wait_until

REPLY = "Nice to hear from you."
PERSON = f"discord:{ANN['id']}"
DM = f"discord:{dm_channel_id(ANN)}"
JPEG = {"voice_message": False, "filename": "IMG_2231.jpg", "content_type": "image/jpeg"}


@pytest.fixture
async def vision() -> AsyncIterator[tuple[FakeVision, OpenAIVision]]:
    async with seeing(timeout_s=1.0) as both:
        yield both


def looking(backend: OpenAIVision | None) -> Callable[[Conversation], Images]:
    return lambda conversation: Images(conversation, backend)


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


async def test_an_image_is_fetched_seen_answered_and_remembered(
    fake: FakeDiscord, store: SqliteStore, vision: tuple[FakeVision, OpenAIVision]
) -> None:
    server, backend = vision
    async with running(services(store, images=looking(backend))):
        message = await fake.voice_dm(ANN, pictures.photo("green"), text="our allotment", **JPEG)
        assert await answered(fake, message) == [REPLY]
    user, reply = await store.turns.recent_turns(PERSON, DM, 10)
    assert (user.text, reply.text) == ("our allotment", REPLY)
    [described] = [m for m in await store.memories.list_memories(PERSON, 10) if m.kind == IMAGE]
    assert described.text.startswith("A mostly green picture") and described.speaker == "assistant"
    [got] = server.received
    assert (got.model, got.format, got.exif, got.caption) == ("llava:7b", "JPEG", {}, "our allotment")
    assert len(fake.downloads) == 1


async def test_without_a_backend_the_image_is_not_fetched(fake: FakeDiscord, store: SqliteStore) -> None:
    async with running(services(store, images=looking(None))):
        message = await fake.voice_dm(ANN, pictures.photo(), **JPEG)
        assert await answered(fake, message) == [NO_BACKEND]
    assert fake.downloads == [] and await store.turns.recent_turns(PERSON, DM, 10) == []


@pytest.mark.parametrize(
    ("data", "attached", "line"),
    [
        (pictures.truncated(), {}, f"{DAMAGED} {NOTHING_KEPT}"),
        (pictures.photo(), {"deleted": True}, NOT_FETCHED),
    ],
    ids=["corrupt", "gone-from-the-cdn"],
)
async def test_an_image_that_cannot_be_seen_is_one_line_and_stores_nothing(
    fake: FakeDiscord,
    store: SqliteStore,
    vision: tuple[FakeVision, OpenAIVision],
    data: bytes,
    attached: dict[str, object],
    line: str,
) -> None:
    server, backend = vision
    async with running(services(store, images=looking(backend))):
        message = await fake.voice_dm(ANN, data, **JPEG, **attached)
        assert await answered(fake, message) == [line]
    assert server.received == [] and await store.memories.list_memories(PERSON, 10) == []


async def test_a_vision_server_failing_is_one_line_and_the_bot_answers_on(
    fake: FakeDiscord, store: SqliteStore, vision: tuple[FakeVision, OpenAIVision]
) -> None:
    server, backend = vision
    server.fail_next("500")
    async with running(services(store, images=looking(backend))):
        failed = await fake.voice_dm(ANN, pictures.photo(), **JPEG)
        assert await answered(fake, failed) == [
            f"The vision service failed (HTTP 500), so I couldn't look at that image. {NOTHING_KEPT}"
        ]
        again = await fake.voice_dm(ANN, pictures.photo("blue"), **JPEG)
        assert await answered(fake, again) == [REPLY]
    assert [m.kind for m in await store.memories.list_memories(PERSON, 10) if m.kind == IMAGE] == [IMAGE]
