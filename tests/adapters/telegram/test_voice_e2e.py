"""Voice notes, audio files and video notes on Telegram, end to end: the real python-telegram-bot
against the loopback Bot API (getFile, then the file server), the real speech backend against the
loopback speech server that checks what it receives, the real conversation and SQLite store.
What Telegram says of a note may refuse it before any download; everything refused stores nothing."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.adapters.telegram.adapter import SECRET_HEADER
from bot.adapters.telegram.voice import NOT_FETCHED, TOO_BIG_TO_FETCH
from bot.core.chat.conversation import Conversation
from bot.core.chat.voice import NO_BACKEND, NOTHING_KEPT, SILENCE, VoiceNotes
from bot.core.media.models import ListeningPolicy
from bot.media.audio import DAMAGED
from bot.media.speech.openai import OpenAISpeech
from bot.shared_state.connection import connect
from bot.shared_state.redis_intake import RedisIntake
from tests.adapters.telegram.conftest import ANN, GROUP, replies_done, running_bot
from tests.jobs.workerproc import redis_url
from tests.media import sounds
from tests.media.speech_server import FakeSpeech, listening
from tests.support.telegram_api import FakeTelegramBotApi

SAID = "I finally finished the marathon"
PERSON = f"telegram:{ANN}"


@pytest.fixture
async def speech() -> AsyncIterator[tuple[FakeSpeech, OpenAISpeech]]:
    async with listening({440: SAID}) as both:
        yield both


def hearing(
    backend: OpenAISpeech | None, policy: ListeningPolicy | None = None
) -> Callable[[Conversation], VoiceNotes]:
    return lambda conversation: VoiceNotes(conversation, backend, policy)


async def answered(api: FakeTelegramBotApi, chat_id: int, count: int = 1) -> list[str]:
    """The bot's texts once it has sent `count` (a refusal has no buttons to wait for)."""
    await api.wait_until(lambda: len(api.texts(chat_id)) >= count, what=f"{count} answers in {chat_id}")
    return api.texts(chat_id)


async def test_a_voice_note_is_fetched_heard_answered_and_stored_as_the_persons_words(
    api: FakeTelegramBotApi, tmp_path: Path, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    server, backend = speech
    async with running_bot(api, tmp_path, voice=hearing(backend)) as bot:
        api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 2.0), duration=2)
        texts = await replies_done(api, ANN, 1)
        turns = await bot.store.turns.recent_turns(PERSON, PERSON, 10)
        [memory] = await bot.store.curation.get_memories(PERSON, [turns[0].memory_id])
        [used] = await bot.store.usage.days(turns[0].created_at.date(), turns[0].created_at.date(), PERSON)
    assert texts == ["Lovely to hear from you."]
    assert (round(used.voice_seconds, 2), used.replies) == (2.0, 1), "seconds counted beside the reply"
    assert [(turn.role, turn.text) for turn in turns] == [
        ("user", SAID),
        ("assistant", "Lovely to hear from you."),
    ]
    assert memory.meta["source"] == "voice" and memory.meta["duration_s"] == 2.0
    assert len(api.calls_of("getFile")) == 1 and api.files.downloads == ["voice/file_1.oga"]
    assert [(got.container, got.filename) for got in server.received] == [("ogg", "audio.ogg")]


@pytest.mark.parametrize("kind", ["audio", "video_note"])
async def test_an_audio_file_and_a_video_note_are_heard_the_same_way(
    api: FakeTelegramBotApi, tmp_path: Path, speech: tuple[FakeSpeech, OpenAISpeech], kind: str
) -> None:
    server, backend = speech
    data = sounds.sound(sounds.MP3, 1.5) if kind == "audio" else sounds.video_note(1.0)
    async with running_bot(api, tmp_path, voice=hearing(backend)) as bot:
        api.voice_message(ANN, ANN, data, kind=kind, duration=1)  # type: ignore[arg-type]
        await replies_done(api, ANN, 1)
        turns = await bot.turns(PERSON, PERSON)
    assert turns[0] == ("user", SAID)
    assert [(got.container, got.sample_rate) for got in server.received] == [("wav", 16_000)]


async def test_in_a_group_only_a_note_for_the_bot_is_heard(
    api: FakeTelegramBotApi, tmp_path: Path, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    server, backend = speech
    note = sounds.sound(sounds.OGG_OPUS, 1.0)
    async with running_bot(api, tmp_path, voice=hearing(backend)) as bot:
        api.voice_message(GROUP, ANN, note)  # people talking among themselves
        api.voice_message(GROUP, ANN, note, caption="listen to this", mention=True)
        await replies_done(api, GROUP, 1)
        turns = await bot.turns(PERSON, f"telegram:{GROUP}")
    assert len(server.received) == 1 and len(api.calls_of("getFile")) == 1
    assert turns[0] == ("user", f"listen to this\n\n{SAID}")  # the caption, without the mention


async def test_without_a_backend_the_answer_says_how_to_turn_it_on_and_nothing_is_fetched(
    api: FakeTelegramBotApi, tmp_path: Path
) -> None:
    async with running_bot(api, tmp_path, voice=hearing(None)) as bot:
        api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 1.0))
        assert await answered(api, ANN) == [NO_BACKEND]
        assert await bot.turns(PERSON, PERSON) == []
    assert api.calls_of("getFile") == []


async def test_what_telegram_says_of_a_note_can_refuse_it_before_the_download(
    api: FakeTelegramBotApi, tmp_path: Path, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    _, backend = speech
    async with running_bot(api, tmp_path, voice=hearing(backend)) as bot:
        api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 1.0), size=25 * 1024 * 1024)
        api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 1.0), duration=3 * 3600)
        texts = await answered(api, ANN, 2)
        assert await bot.turns(PERSON, PERSON) == []
    assert texts == [
        f"That recording is too large for me (25 MB; I take up to 20 MB). {NOTHING_KEPT}",
        f"That recording is too long for me (180 min; I take up to 10 min). {NOTHING_KEPT}",
    ]
    assert api.calls_of("getFile") == []


async def test_a_file_telegram_will_not_hand_over_gets_one_line(
    api: FakeTelegramBotApi, tmp_path: Path, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    """An admin raised the limit for a local Bot API server, but this is the cloud one (20 MB)."""
    _, backend = speech
    roomy = hearing(backend, ListeningPolicy(max_bytes=64 * 1024 * 1024))
    async with running_bot(api, tmp_path, voice=roomy) as bot:
        api.voice_message(ANN, ANN, b"\0" * (21 * 1024 * 1024))
        gone = api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 1.0))
        del api.files.files[gone["message"]["voice"]["file_id"]]  # gone before the bot asks
        assert await answered(api, ANN, 2) == [TOO_BIG_TO_FETCH, NOT_FETCHED]
        assert await bot.turns(PERSON, PERSON) == []


HOSTILE = {
    "silence": (sounds.sound(sounds.OGG_OPUS, 2.0, freq=None), SILENCE),
    "a truncated ogg": (sounds.sound(sounds.OGG_OPUS, 2.0)[:3000], f"{DAMAGED} {NOTHING_KEPT}"),
    "an empty file": (b"", f"That file is empty, so there was nothing to listen to. {NOTHING_KEPT}"),
}


@pytest.mark.parametrize(("data", "line"), HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_note_that_cannot_be_heard_gets_one_line_and_stores_nothing(
    api: FakeTelegramBotApi, tmp_path: Path, speech: tuple[FakeSpeech, OpenAISpeech], data: bytes, line: str
) -> None:
    server, backend = speech
    async with running_bot(api, tmp_path, voice=hearing(backend)) as bot:
        api.voice_message(ANN, ANN, data)
        assert await answered(api, ANN) == [line]
        assert await bot.turns(PERSON, PERSON) == []
        api.private_message(ANN, "still there?")  # the chat goes on
        await replies_done(api, ANN, 1)
    assert server.received == []


async def test_a_failing_speech_server_gets_a_clear_answer(
    api: FakeTelegramBotApi, tmp_path: Path, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    server, backend = speech
    server.fail_next("500")
    async with running_bot(api, tmp_path, voice=hearing(backend)) as bot:
        api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 1.0))
        [line] = await answered(api, ANN)
        assert line == f"The speech service failed (HTTP 500), so I couldn't listen to that. {NOTHING_KEPT}"
        assert await bot.turns(PERSON, PERSON) == []


async def test_without_voice_wired_a_note_is_left_alone(api: FakeTelegramBotApi, tmp_path: Path) -> None:
    async with running_bot(api, tmp_path) as bot:
        api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 1.0))
        api.private_message(ANN, "hello")
        assert await replies_done(api, ANN, 1) == ["Lovely to hear from you."]
        assert await bot.turns(PERSON, PERSON) == [
            ("user", "hello"),
            ("assistant", "Lovely to hear from you."),
        ]
    assert api.calls_of("getFile") == []


async def test_two_replicas_given_the_same_voice_update_hear_and_store_it_once(
    api: FakeTelegramBotApi, tmp_path: Path, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    """Two Applications in webhook mode sharing their intake in a real Redis and one store, as
    replicas do; Telegram posts one voice update to both at once (a retry that reached the other
    replica), then once more. The note is downloaded, transcribed and stored once."""
    server, backend = speech
    namespace = uuid.uuid4().hex
    client = connect(redis_url())
    intake = RedisIntake(client, namespace=namespace)
    url, place = "https://bot.example.org/telegram/webhook", str(tmp_path / "kindred.db")
    replica = {"webhook_url": url, "intake": intake, "place": place, "voice": hearing(backend)}
    try:
        async with running_bot(api, tmp_path, **replica) as one, running_bot(api, tmp_path, **replica) as two:  # type: ignore[arg-type]
            update = api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 1.5))
            body = json.dumps(update).encode()
            headers = {SECRET_HEADER: one.adapter.config.secret}
            first = await asyncio.gather(*(bot.adapter.handle_webhook(headers, body) for bot in (one, two)))
            await replies_done(api, ANN, 1)
            again = await two.adapter.handle_webhook(headers, body)
            turns = await one.turns(PERSON, PERSON)
    finally:
        await intake.close()
        await client.aclose()
    # One replica handled it; the other was told it is in hand (429) or already done (200).
    assert sorted(status for status, _ in first) in ([200, 200], [200, 429]) and again == (200, "ok")
    assert turns == [("user", SAID), ("assistant", "Lovely to hear from you.")]
    assert len(server.received) == 1 and len(api.calls_of("getFile")) == 1 and len(api.texts(ANN)) == 1


async def test_a_note_whose_fields_are_not_what_the_bot_api_promises_is_read_safely(
    api: FakeTelegramBotApi, tmp_path: Path, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    """A webhook post (or a proxy between) may put anything in a note's fields: a size that is
    not a number leaves the note alone; a duration that is not one is measured from the audio."""
    server, backend = speech
    async with running_bot(api, tmp_path, voice=hearing(backend)) as bot:
        odd_size = api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 1.0))
        odd_size["message"]["voice"]["file_size"] = "big"
        odd_duration = api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 1.0))
        odd_duration["message"]["voice"]["duration"] = "long"
        await replies_done(api, ANN, 1)
        turns = await bot.turns(PERSON, PERSON)
    assert turns == [("user", SAID), ("assistant", "Lovely to hear from you.")]
    assert len(api.calls_of("getFile")) == 1 and len(server.received) == 1
