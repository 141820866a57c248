"""Voice messages and audio attachments on Discord, end to end: discord.py's real client against
Discord on loopback (the gateway, REST and the attachments' CDN), the real speech backend against
the loopback speech server, the real conversation and SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from bot.adapters.discord.voice import NOT_FETCHED
from bot.core.chat.conversation import Conversation
from bot.core.chat.voice import NO_BACKEND, NOTHING_KEPT, SILENCE, VoiceNotes
from bot.media.speech.openai import OpenAISpeech
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.media import sounds
from tests.media.speech_server import FakeSpeech, listening
from tests.support import discord_payloads as p
from tests.support.discord_fake import ANN, FakeDiscord, dm_channel_id, settled
from tests.support.waiting import wait_until

SAID = "The garden is full of tomatoes this year"
REPLY = "Nice to hear from you."
PERSON = f"discord:{ANN['id']}"
DM = f"discord:{dm_channel_id(ANN)}"


@pytest.fixture
async def speech() -> AsyncIterator[tuple[FakeSpeech, OpenAISpeech]]:
    async with listening({440: SAID}) as both:
        yield both


def hearing(backend: OpenAISpeech | None) -> Callable[[Conversation], VoiceNotes]:
    return lambda conversation: VoiceNotes(conversation, backend)


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


async def test_a_voice_message_is_fetched_heard_and_stored_as_the_persons_words(
    fake: FakeDiscord, store: SqliteStore, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    server, backend = speech
    async with running(services(store, voice=hearing(backend))):
        message = await fake.voice_dm(ANN, sounds.sound(sounds.OGG_OPUS, 2.0))
        assert await answered(fake, message) == [REPLY]
    user, reply = await store.turns.recent_turns(PERSON, DM, 10)
    [memory] = await store.curation.get_memories(PERSON, [user.memory_id])
    assert (user.text, reply.text) == (SAID, REPLY) and memory.meta["source"] == "voice"
    assert len(fake.downloads) == 1 and [got.container for got in server.received] == ["ogg"]


async def test_an_audio_attachment_with_words_is_heard_with_them(
    fake: FakeDiscord, store: SqliteStore, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    server, backend = speech
    async with running(services(store, voice=hearing(backend))):
        message = await fake.voice_dm(
            ANN, sounds.sound(sounds.MP3, 1.5), voice_message=False, filename="song.mp3",
            content_type="audio/mpeg", text="what do you think of this?",
        )  # fmt: skip
        await answered(fake, message)
    user, _ = await store.turns.recent_turns(PERSON, DM, 10)
    assert user.text == f"what do you think of this?\n\n{SAID}"
    assert [got.container for got in server.received] == ["wav"]


async def test_in_a_server_only_a_voice_message_for_the_bot_is_heard(
    fake: FakeDiscord, store: SqliteStore, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    server, backend = speech
    note = sounds.sound(sounds.OGG_OPUS, 1.0)
    async with running(services(store, voice=hearing(backend))):
        chatter = await fake.voice_in_server(ANN, note)
        assert await settled(lambda: not fake.replies_to(chatter))
        mention = await fake.voice_in_server(ANN, note, mention=True)
        assert await answered(fake, mention) == [REPLY]
    assert len(server.received) == 1 and len(fake.downloads) == 1


async def test_without_a_backend_the_answer_says_so_and_nothing_is_fetched(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with running(services(store, voice=hearing(None))):
        message = await fake.voice_dm(ANN, sounds.sound(sounds.OGG_OPUS, 1.0))
        assert await answered(fake, message) == [NO_BACKEND]
    assert fake.downloads == [] and await store.turns.recent_turns(PERSON, DM, 10) == []


async def test_what_cannot_be_heard_gets_one_line_and_stores_nothing(
    fake: FakeDiscord, store: SqliteStore, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    _, backend = speech
    async with running(services(store, voice=hearing(backend))):
        silent = await fake.voice_dm(ANN, sounds.sound(sounds.OGG_OPUS, 1.0, freq=None))
        assert await answered(fake, silent) == [SILENCE]
        too_long = await fake.voice_dm(ANN, sounds.sound(sounds.OGG_OPUS, 1.0), duration=3 * 3600.0)
        assert await answered(fake, too_long) == [
            f"That recording is too long for me (180 min; I take up to 10 min). {NOTHING_KEPT}"
        ]
        gone = await fake.voice_dm(ANN, sounds.sound(sounds.OGG_OPUS, 1.0), deleted=True)
        assert await answered(fake, gone) == [NOT_FETCHED]
    assert await store.turns.recent_turns(PERSON, DM, 10) == []
