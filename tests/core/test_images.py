"""Photos through the core (bot/core/chat/images.py) with the real vision backend over HTTP to the
loopback vision server, the real conversation and SQLite store: the caption is the person's turn,
the description goes beside it into their message (never the system prompt) and is kept as the
model's words, weighing least. Every image that cannot be seen gets one line and stores nothing of
it; a caption is then still answered as text."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.images import NO_BACKEND, NO_CAPTION, NOTHING_KEPT, Images
from bot.core.chat.prompt import PHOTO_HEADER
from bot.core.events import ImageNote, Refusal, ReplyDone, ReplyEvent, UserMessage
from bot.core.media.models import MediaFile
from bot.core.memory.scoring import SHIPPED, speaker_weight
from bot.core.models import DOCUMENT, IMAGE, Memory
from bot.media.images import DAMAGED, EMPTY, NOT_IMAGE
from bot.media.vision.openai import CANNOT_SEE, GARBLED, TOO_SLOW, OpenAIVision
from bot.store.sqlite.store import SqliteStore
from tests.media import pictures
from tests.media.vision_server import FakeVision, seeing
from tests.support.fakes import HashEmbedder, ScriptedInference

REPLY = "What a lovely bike!"
RED = "A mostly red picture, 640 by 480 pixels."
AT = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)


@pytest.fixture
async def vision() -> AsyncIterator[tuple[FakeVision, OpenAIVision]]:
    async with seeing(timeout_s=0.5) as both:
        yield both


def images(store: SqliteStore, vision: OpenAIVision | None) -> tuple[Images, ScriptedInference]:
    model = ScriptedInference(REPLY)
    conversation = Conversation(store, HashEmbedder(), model, ConversationPolicy(persona="You are kind."))
    return Images(conversation, vision), model


def photo(data: bytes, caption: str = "", key: str | None = None) -> ImageNote:
    return ImageNote(
        "ann", "c1", MediaFile("image", data, "holiday.jpg", "image/jpeg"), AT, key, caption=caption
    )


async def answer(events: AsyncIterator[ReplyEvent]) -> list[ReplyEvent]:
    return [event async for event in events]


async def everything(store: SqliteStore) -> list[Memory]:
    return await store.memories.list_memories("ann", 100)


async def test_the_caption_is_the_persons_turn_and_the_description_the_models_memory(
    store: SqliteStore, vision: tuple[FakeVision, OpenAIVision]
) -> None:
    server, backend = vision
    handler, model = images(store, backend)
    events = await answer(handler.handle(photo(pictures.photo("red"), "My new bike!")))
    done = events[-1]
    assert isinstance(done, ReplyDone) and done.text == REPLY
    assert server.received[0].caption == "My new bike!"
    user, reply = await store.turns.recent_turns("ann", "c1", 10)
    assert (user.role, user.text, reply.text) == ("user", "My new bike!", REPLY)
    kept = {memory.kind: memory for memory in await everything(store)}
    assert kept[IMAGE].text == RED and kept[IMAGE].speaker == "assistant"
    assert kept[IMAGE].meta["source"] == "image" and kept[IMAGE].meta["chat_id"] == "c1"
    [said] = [m for m in await everything(store) if m.speaker == "user"]
    assert said.text == "My new bike!" and said.meta["source"] == "image"
    # The model saw the description in the person's turn, quoted, never in the system prompt.
    system, *_, last = model.prompts[0]
    assert RED not in system.content
    assert last.content.startswith(PHOTO_HEADER) and f'"{RED}"' in last.content
    assert last.content.endswith("My new bike!")


async def test_the_description_weighs_least_below_the_persons_words_and_their_files(
    store: SqliteStore, vision: tuple[FakeVision, OpenAIVision]
) -> None:
    handler, _ = images(store, vision[1])
    await answer(handler.handle(photo(pictures.photo("red"), "My new bike!")))
    kept = {memory.speaker: memory for memory in await everything(store) if memory.kind != "reply"}
    described, said = kept["assistant"], kept["user"]
    assert speaker_weight(described, SHIPPED) == SHIPPED.assistant_weight
    assert speaker_weight(described, SHIPPED) < SHIPPED.document_weight < speaker_weight(said, SHIPPED)
    assert described.recallable and DOCUMENT != IMAGE


async def test_a_photo_without_a_caption_is_answered_and_kept_once_when_delivered_twice(
    store: SqliteStore, vision: tuple[FakeVision, OpenAIVision]
) -> None:
    handler, _ = images(store, vision[1])
    for _ in range(2):
        await answer(handler.handle(photo(pictures.photo("green"), key="telegram:1:7")))
    turns = await store.turns.recent_turns("ann", "c1", 10)
    assert [turn.text for turn in turns if turn.role == "user"] == [NO_CAPTION]
    assert [m.text for m in await everything(store) if m.kind == IMAGE] == [
        "A mostly green picture, 640 by 480 pixels."
    ]


async def test_without_a_backend_a_caption_is_still_answered_as_text(store: SqliteStore) -> None:
    handler, _ = images(store, None)
    alone = await answer(handler.handle(photo(pictures.photo())))
    assert alone == [Refusal(NO_BACKEND)]
    assert await everything(store) == []
    events = await answer(handler.handle(photo(pictures.photo(), "Guess where I am")))
    done = events[-1]
    assert isinstance(done, ReplyDone) and done.text == f"({NO_BACKEND})\n\n{REPLY}"
    user, reply = await store.turns.recent_turns("ann", "c1", 10)
    assert (user.text, reply.text) == ("Guess where I am", REPLY)  # the notice is not the model's
    assert [m.kind for m in await everything(store) if m.kind == IMAGE] == []


async def test_a_text_only_model_says_so_and_the_caption_is_answered(store: SqliteStore) -> None:
    async with seeing(text_only=True) as (_, backend):
        handler, _ = images(store, backend)
        events = await answer(handler.handle(photo(pictures.photo(), "Look!")))
    done = events[-1]
    assert isinstance(done, ReplyDone) and done.text.startswith(f"({CANNOT_SEE} {NOTHING_KEPT})")
    assert [m.kind for m in await everything(store) if m.kind == IMAGE] == []


HOSTILE = {
    "corrupt": (pictures.truncated(), DAMAGED),
    "empty": (b"", EMPTY),
    "pdf-named-jpg": (pictures.PDF, NOT_IMAGE),
    "bomb": (pictures.bomb(), "That image is far too large to open safely; I take up to 50 megapixels."),
}


@pytest.mark.parametrize("case", HOSTILE, ids=list(HOSTILE))
async def test_a_hostile_file_is_one_line_stores_nothing_and_the_chat_goes_on(
    store: SqliteStore, vision: tuple[FakeVision, OpenAIVision], case: str
) -> None:
    server, backend = vision
    data, line = HOSTILE[case]
    handler, _ = images(store, backend)
    [refused] = await answer(handler.handle(photo(data)))
    assert isinstance(refused, Refusal) and refused.text.startswith(line)
    assert server.received == [] and await everything(store) == []
    after = await answer(handler.conversation.handle_message(UserMessage("ann", "c1", "still there?", AT)))
    assert isinstance(after[-1], ReplyDone)


@pytest.mark.parametrize(
    ("failure", "line"),
    [("500", "The vision service failed (HTTP 500)"), ("stall", TOO_SLOW), ("garbage", GARBLED)],
)
async def test_a_failing_vision_server_is_one_line_and_stores_nothing(
    store: SqliteStore, vision: tuple[FakeVision, OpenAIVision], failure: str, line: str
) -> None:
    server, backend = vision
    server.fail_next(failure)  # type: ignore[arg-type]
    handler, _ = images(store, backend)
    [refused] = await answer(handler.handle(photo(pictures.photo())))
    assert (
        isinstance(refused, Refusal) and refused.text.startswith(line) and refused.text.endswith(NOTHING_KEPT)
    )
    assert await everything(store) == []
    # The next photo is seen: the service stayed up.
    await answer(handler.handle(photo(pictures.photo("blue"))))
    assert [m.kind for m in await everything(store) if m.kind == IMAGE] == [IMAGE]
