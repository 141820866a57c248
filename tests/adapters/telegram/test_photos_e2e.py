"""Photos and image files on Telegram, end to end: the real python-telegram-bot against the
loopback Bot API (getFile, then the file server), the real vision backend against the loopback
vision server that checks what it receives (an image part, a decodable JPEG, the model, no EXIF),
the real conversation and SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.core.chat.conversation import Conversation
from bot.core.chat.images import NO_BACKEND, NOTHING_KEPT, Images
from bot.core.media.models import SeeingPolicy
from bot.core.models import IMAGE
from bot.media.images import NOT_IMAGE
from bot.media.vision.openai import OpenAIVision
from tests.adapters.telegram.conftest import ANN, GROUP, replies_done, running_bot
from tests.media import pictures
from tests.media.vision_server import FakeVision, seeing
from tests.support.telegram_api import FakeTelegramBotApi
from tests.support.telegram_photos import image_document, photo_message

PERSON = f"telegram:{ANN}"
REPLY = "Lovely to hear from you."


@pytest.fixture
async def vision() -> AsyncIterator[tuple[FakeVision, OpenAIVision]]:
    async with seeing() as both:
        yield both


def looking(
    backend: OpenAIVision | None, policy: SeeingPolicy | None = None
) -> Callable[[Conversation], Images]:
    return lambda conversation: Images(conversation, backend, policy)


async def test_a_photo_is_fetched_in_its_largest_size_seen_answered_and_remembered(
    api: FakeTelegramBotApi, tmp_path: Path, vision: tuple[FakeVision, OpenAIVision]
) -> None:
    server, backend = vision
    sizes = [(pictures.photo("red", (90, 67)), 90, 67), (pictures.photo("red", (1280, 960)), 1280, 960)]
    async with running_bot(api, tmp_path, images=looking(backend)) as bot:
        photo_message(api, ANN, ANN, sizes, caption="My new bike!")
        assert await replies_done(api, ANN, 1) == [REPLY]
        turns = await bot.turns(PERSON, PERSON)
        kept = await bot.store.memories.list_memories(PERSON, 10)
        [used] = await bot.store.usage.days(kept[0].created_at.date(), kept[0].created_at.date(), PERSON)
    assert turns == [("user", "My new bike!"), ("assistant", REPLY)]
    assert (used.images, used.replies) == (1, 1), "the image seen is counted beside the reply"
    [described] = [memory for memory in kept if memory.kind == IMAGE]
    assert described.text == "A mostly red picture, 1280 by 960 pixels." and described.speaker == "assistant"
    [got] = server.received
    assert (got.model, got.format, got.width, got.height, got.exif) == ("llava:7b", "JPEG", 1280, 960, {})
    assert got.caption == "My new bike!" and b"Phonemaker" not in got.raw
    assert len(api.files.downloads) == 1 and api.files.downloads[0].startswith("photos/")


async def test_the_largest_size_within_the_limit_is_the_one_fetched(
    api: FakeTelegramBotApi, tmp_path: Path, vision: tuple[FakeVision, OpenAIVision]
) -> None:
    server, backend = vision
    sizes = [(pictures.photo("blue", (320, 240)), 320, 240), (pictures.photo("blue", (1280, 960)), 1280, 960)]
    policy = SeeingPolicy(max_bytes=64 * 1024)
    async with running_bot(api, tmp_path, images=looking(backend, policy)):
        photo_message(api, ANN, ANN, sizes, claimed_sizes=[10_000, 900_000])
        await replies_done(api, ANN, 1)
    assert [(got.width, got.height) for got in server.received] == [(320, 240)]


async def test_an_image_sent_as_a_file_is_seen_by_its_content(
    api: FakeTelegramBotApi, tmp_path: Path, vision: tuple[FakeVision, OpenAIVision]
) -> None:
    server, backend = vision
    async with running_bot(api, tmp_path, images=looking(backend)) as bot:
        image_document(api, ANN, ANN, pictures.png("green"), "scan.png", "image/png", caption="the garden")
        await replies_done(api, ANN, 1)
        # A PDF named like a photo: Telegram's app called it image/jpeg; its content says otherwise.
        image_document(api, ANN, ANN, pictures.PDF, "holiday.jpg", "image/jpeg")
        await api.wait_until(lambda: len(api.texts(ANN)) >= 2, what="the answer to the PDF")
        turns = await bot.turns(PERSON, PERSON)
    assert [got.caption for got in server.received] == ["the garden"]
    assert api.texts(ANN)[1] == f"{NOT_IMAGE} {NOTHING_KEPT}"
    assert turns == [("user", "the garden"), ("assistant", REPLY)]


async def test_in_a_group_only_a_photo_for_the_bot_is_seen(
    api: FakeTelegramBotApi, tmp_path: Path, vision: tuple[FakeVision, OpenAIVision]
) -> None:
    server, backend = vision
    sizes = [(pictures.photo("white", (200, 100)), 200, 100)]
    async with running_bot(api, tmp_path, images=looking(backend)) as bot:
        photo_message(api, GROUP, ANN, sizes, caption="us at the beach")  # among themselves
        photo_message(api, GROUP, ANN, sizes, caption="what do you think?", mention=True)
        await replies_done(api, GROUP, 1)
        turns = await bot.turns(PERSON, f"telegram:{GROUP}")
    assert len(server.received) == 1 and len(api.files.downloads) == 1
    assert turns[0] == ("user", "what do you think?")


async def test_without_a_backend_nothing_is_fetched_and_a_caption_is_answered_as_text(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    sizes = [(pictures.photo(), 640, 480)]
    async with running_bot(api, tmp_path, images=looking(None)) as bot:
        photo_message(api, ANN, ANN, sizes)
        await api.wait_until(lambda: len(api.texts(ANN)) >= 1, what="the answer")
        photo_message(api, ANN, ANN, sizes, caption="guess where I am")
        texts = await replies_done(api, ANN, 1)
        turns = await bot.turns(PERSON, PERSON)
    assert texts == [NO_BACKEND, f"({NO_BACKEND})\n\n{REPLY}"]
    assert turns == [("user", "guess where I am"), ("assistant", REPLY)]
    assert api.calls_of("getFile") == []


async def test_a_photo_too_large_by_what_telegram_says_is_refused_before_the_download(
    api: FakeTelegramBotApi, tmp_path: Path, vision: tuple[FakeVision, OpenAIVision]
) -> None:
    _, backend = vision
    async with running_bot(api, tmp_path, images=looking(backend, SeeingPolicy(max_bytes=1024))) as bot:
        photo_message(api, ANN, ANN, [(pictures.photo(), 640, 480)])
        await api.wait_until(lambda: len(api.texts(ANN)) >= 1, what="the answer")
        assert await bot.turns(PERSON, PERSON) == []
    assert api.texts(ANN)[0].startswith("That image is too large for me (")
    assert api.calls_of("getFile") == []
