"""Spoken replies on Telegram, end to end: the real python-telegram-bot against the loopback Bot
API (whose sendVoice decodes what it gets with PyAV), the real OpenAI-compatible voice against the
loopback speech server, the real conversation and SQLite store. The text reply always comes first
and whole; the voice note follows it, or one short line says why not."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.core.chat.spoken import NO_BACKEND, STATE_OFF, STATE_ON, VOICE_OFF, VOICE_ON, SpokenReplies
from bot.core.media.ports import SpeechSynthesis
from bot.core.store import Store
from bot.media.tts.openai import OpenAIVoice
from tests.adapters.telegram.conftest import ANN, replies_done, running_bot
from tests.media.tts_server import FakeVoiceServer, speaking
from tests.support.fakes import ScriptedInference
from tests.support.telegram_api import FakeTelegramBotApi

REPLY = "Lovely to hear from you."
PERSON = f"telegram:{ANN}"


@pytest.fixture
async def voice() -> AsyncIterator[tuple[FakeVoiceServer, OpenAIVoice]]:
    async with speaking(timeout_s=1.0) as both:
        yield both


def spoken(backend: SpeechSynthesis | None, max_chars: int = 1000) -> Callable[[Store], SpokenReplies]:
    return lambda store: SpokenReplies(store.turns, backend, max_chars=max_chars)


async def told(api: FakeTelegramBotApi, count: int) -> list[str]:
    await api.wait_until(lambda: len(api.texts(ANN)) >= count, what=f"{count} messages")
    return api.texts(ANN)


async def test_voice_on_sends_each_reply_as_text_then_as_a_voice_note_linked_to_it(
    api: FakeTelegramBotApi, tmp_path: Path, voice: tuple[FakeVoiceServer, OpenAIVoice]
) -> None:
    server, backend = voice
    async with running_bot(api, tmp_path, spoken=spoken(backend)) as bot:
        api.private_message(ANN, "/voice")
        api.private_message(ANN, "/voice on")
        await told(api, 2)
        api.private_message(ANN, "How are you?")
        await replies_done(api, ANN, 1)
        await api.wait_until(lambda: len(api.voices) == 1, what="a voice note")
        api.private_message(ANN, "/voice")
        texts = await told(api, 4)
        turns = await bot.store.turns.recent_turns(PERSON, PERSON, 10)
        [sent] = api.voices
        [shown] = [message for message in api.bot_messages(ANN) if "voice" in message.data]
        voice_id = str(shown.data["message_id"])
        link = await bot.store.turns.find_message("telegram", str(ANN), voice_id)
    assert texts == [STATE_OFF, VOICE_ON, REPLY, STATE_ON]
    assert [said.input for said in server.received] == [REPLY]
    assert (sent.container, sent.codec) == ("ogg", "opus") and sent.seconds >= 0.5
    assert sent.duration == 1  # the length Telegram shows, in whole seconds
    # The text is stored once; a reaction on the voice note reaches the same turn.
    assert [turn.role for turn in turns] == ["user", "assistant"]
    assert link is not None and link.turn_id == turns[1].id


async def test_voice_off_and_the_default_send_text_only(
    api: FakeTelegramBotApi, tmp_path: Path, voice: tuple[FakeVoiceServer, OpenAIVoice]
) -> None:
    server, backend = voice
    async with running_bot(api, tmp_path, spoken=spoken(backend)) as bot:
        api.private_message(ANN, "Hello")
        await replies_done(api, ANN, 1)
        api.private_message(ANN, "/voice on")
        api.private_message(ANN, "/voice off")
        await told(api, 3)
        api.private_message(ANN, "Hello again")
        await replies_done(api, ANN, 2)
        assert not await bot.store.turns.speaks_replies(PERSON)
    assert api.texts(ANN) == [REPLY, VOICE_ON, VOICE_OFF, REPLY]
    assert server.received == [] and api.voices == []


@pytest.mark.parametrize("failure", ["500", "stall", "garbage", "cut"])
async def test_a_failing_voice_never_loses_the_text_which_arrives_once_then_one_short_line(
    api: FakeTelegramBotApi, tmp_path: Path, voice: tuple[FakeVoiceServer, OpenAIVoice], failure: str
) -> None:
    server, backend = voice
    server.fail_next(failure)  # type: ignore[arg-type]
    async with running_bot(api, tmp_path, spoken=spoken(backend)) as bot:
        await bot.store.turns.set_spoken_replies(PERSON, True)
        api.private_message(ANN, "How are you?")
        await replies_done(api, ANN, 1)
        texts = await told(api, 2)
        turns = await bot.store.turns.recent_turns(PERSON, PERSON, 10)
    assert texts[0] == REPLY and len(texts) == 2 and "couldn't say that aloud" in texts[1]
    assert api.voices == [] and len(server.received) == 1
    assert [turn.text for turn in turns] == ["How are you?", REPLY]


async def test_voice_on_without_a_voice_says_how_an_admin_turns_it_on_and_keeps_nothing(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path, spoken=spoken(None)) as bot:
        api.private_message(ANN, "/voice on")
        api.private_message(ANN, "/voice")
        assert await told(api, 2) == [NO_BACKEND, NO_BACKEND]
        assert not await bot.store.turns.speaks_replies(PERSON)
    assert "KINDRED_TTS_BACKEND" in NO_BACKEND


@pytest.mark.parametrize("empty", ["**  **", "```\n```"])
async def test_a_reply_with_nothing_to_say_is_not_spoken_and_a_long_one_is_cut_at_a_sentence(
    api: FakeTelegramBotApi, tmp_path: Path, voice: tuple[FakeVoiceServer, OpenAIVoice], empty: str
) -> None:
    server, backend = voice
    sentence = "This sentence is one of many."
    scripted = ScriptedInference(empty)
    async with running_bot(api, tmp_path, spoken=spoken(backend, max_chars=100), inference=scripted) as bot:
        await bot.store.turns.set_spoken_replies(PERSON, True)
        api.private_message(ANN, "Say nothing")
        await replies_done(api, ANN, 1)
        scripted.reply = " ".join([sentence] * 20)
        # Updates of one chat are handled in order: the first reply's voice was tried before this.
        api.private_message(ANN, "Say a lot")
        await api.wait_until(lambda: len(api.voices) == 1, what="one voice note")
    assert [said.input for said in server.received] == [" ".join([sentence] * 3)]
    assert api.texts(ANN)[-1] == " ".join([sentence] * 20), "the text reply keeps every word"
    assert len(api.texts(ANN)) == 2, "no line about a voice note that was never due"


async def test_forget_all_forgets_the_choice(
    api: FakeTelegramBotApi, tmp_path: Path, voice: tuple[FakeVoiceServer, OpenAIVoice]
) -> None:
    _, backend = voice
    async with running_bot(api, tmp_path, spoken=spoken(backend)) as bot:
        api.private_message(ANN, "/voice on")
        await told(api, 1)
        assert await bot.store.turns.speaks_replies(PERSON)
        await bot.store.memories.forget_all(PERSON)
        assert not await bot.store.turns.speaks_replies(PERSON)
