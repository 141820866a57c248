"""Spoken replies on Discord, end to end: the real discord.py against the loopback gateway and
REST, the real OpenAI-compatible voice against the loopback speech server. The reply comes as
text, then as an OGG/Opus attachment (decoded here with PyAV); /voice sets it per person."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from dataclasses import replace

import av
import pytest

from bot.core.chat.spoken import NO_BACKEND, VOICE_ON, SpokenReplies
from bot.media.tts.openai import OpenAIVoice
from bot.store.sqlite.store import SqliteStore
from tests.adapters.discord.conftest import running, services
from tests.media.tts_server import FakeVoiceServer, speaking
from tests.support.discord_fake import ANN, FakeDiscord
from tests.support.waiting import wait_until

REPLY = "Nice to hear from you."
PERSON = f"discord:{ANN['id']}"


@pytest.fixture
async def voice() -> AsyncIterator[tuple[FakeVoiceServer, OpenAIVoice]]:
    async with speaking(timeout_s=1.0) as both:
        yield both


def opus_seconds(data: bytes) -> float:
    with av.open(io.BytesIO(data), mode="r") as container:
        stream = container.streams.audio[0]
        assert (container.format.name, stream.codec_context.name) == ("ogg", "opus")
        return sum(frame.samples for frame in container.decode(stream)) / stream.sample_rate


async def test_voice_on_then_a_dm_is_answered_in_text_then_as_an_audio_attachment(
    fake: FakeDiscord, store: SqliteStore, voice: tuple[FakeVoiceServer, OpenAIVoice]
) -> None:
    server, backend = voice
    wired = replace(services(store), spoken=SpokenReplies(store.turns, backend))
    async with running(wired):
        token = await fake.slash(ANN, "voice", spoken="on")
        await wait_until(lambda: any(shown.content for shown in fake.answers(token)), what="/voice's answer")
        message = await fake.dm(ANN, "How are you?")
        await wait_until(lambda: len(fake.replies_to(message)) >= 2, what="the text and the voice note")
        shown = fake.replies_to(message)
        link = await store.turns.find_message("discord", f"discord:{message['channel_id']}", str(shown[1].id))
    assert fake.answers(token)[0].content == VOICE_ON
    assert [one.content for one in shown] == [REPLY, ""]
    [(name, data)] = shown[1].files.items()
    assert name == "reply.ogg" and opus_seconds(data) >= 0.5
    assert [said.input for said in server.received] == [REPLY]
    assert link is not None, "a reaction on the voice note reaches the reply's turn"


async def test_a_failing_voice_leaves_the_text_once_and_one_short_line(
    fake: FakeDiscord, store: SqliteStore, voice: tuple[FakeVoiceServer, OpenAIVoice]
) -> None:
    server, backend = voice
    server.fail_next("500")
    await store.turns.set_spoken_replies(PERSON, True)
    async with running(replace(services(store), spoken=SpokenReplies(store.turns, backend))):
        message = await fake.dm(ANN, "How are you?")
        await wait_until(lambda: len(fake.replies_to(message)) >= 2, what="the text and a line")
        shown = fake.replies_to(message)
    assert shown[0].content == REPLY and "couldn't say that aloud" in shown[1].content
    assert len(shown) == 2 and not shown[1].files


async def test_voice_on_without_a_voice_says_how_an_admin_turns_it_on(
    fake: FakeDiscord, store: SqliteStore
) -> None:
    async with running(replace(services(store), spoken=SpokenReplies(store.turns, None))):
        token = await fake.slash(ANN, "voice", spoken="on")
        await wait_until(lambda: any(shown.content for shown in fake.answers(token)), what="/voice's answer")
    assert fake.answers(token)[0].content == NO_BACKEND
    assert not await store.turns.speaks_replies(PERSON)
