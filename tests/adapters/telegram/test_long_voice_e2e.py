"""A long voice note on Telegram, end to end: the real python-telegram-bot against the loopback
Bot API, the real speech backend against the loopback speech server, and over
KINDRED_AUDIO_INLINE_SECONDS the real job (`kindred.media.hear_voice` on the in-process runner,
the same code path as a Celery worker) that hears it and stores the person's turn, its steps shown
in one status message, then the reply through the conversation."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.core.chat.conversation import Conversation
from bot.core.chat.voice import SILENCE, VoiceNotes
from bot.core.jobs import JobRegistry
from bot.core.loading import LoadOnce
from bot.core.media.ports import SpeechToText
from bot.core.memory.ports import Embedder
from bot.jobs.inprocess import InProcessJobs
from bot.media.speech.openai import OpenAISpeech
from bot.store.sqlite.store import SqliteStore
from bot.wiring.job_store import per_job
from bot.wiring.media.document_jobs import SPOOL
from bot.wiring.media.voice_jobs import JobHearing, add_voice_jobs
from bot.wiring.settings import SpeechSettings
from tests.adapters.telegram.conftest import ANN, replies_done, running_bot
from tests.media import sounds
from tests.media.speech_server import FakeSpeech, listening
from tests.support.fakes import HashEmbedder
from tests.support.telegram_api import FakeTelegramBotApi

SAID = "I walked the whole coast path today and my feet are done"
PERSON = f"telegram:{ANN}"
# Two seconds make a note long here, so that a short test recording goes through the job.
SECTION = SpeechSettings(
    speech_backend="openai", speech_url="http://127.0.0.1:9/v1", speech_model="w", audio_inline_seconds=2
)


@pytest.fixture
async def speech() -> AsyncIterator[tuple[FakeSpeech, OpenAISpeech]]:
    async with listening({440: SAID}) as both:
        yield both


@pytest.fixture
async def jobs(tmp_path: Path, speech: tuple[FakeSpeech, OpenAISpeech]) -> AsyncIterator[InProcessJobs]:
    registry = JobRegistry()
    opener = per_job(lambda: SqliteStore.open(tmp_path / "kindred.db"))
    embedder: LoadOnce[Embedder] = LoadOnce(HashEmbedder, what="embedder")
    server, _ = speech

    def backend() -> SpeechToText:
        return OpenAISpeech(server.base_url, model=server.model, timeout_s=5.0)

    add_voice_jobs(registry, opener, embedder, backend, tmp_path, section=SECTION, max_message_chars=100_000)
    runner = InProcessJobs(registry)
    yield runner
    await runner.close()


def hearing(
    jobs: InProcessJobs, backend: OpenAISpeech, tmp_path: Path
) -> Callable[[Conversation], VoiceNotes]:
    def wire(conversation: Conversation) -> VoiceNotes:
        long_notes = JobHearing(conversation.store.curation, jobs, SECTION, tmp_path, poll_s=0.01)
        return VoiceNotes(conversation, backend, long_notes=long_notes)

    return wire


async def test_a_long_note_is_heard_by_the_job_with_its_steps_shown_then_answered(
    api: FakeTelegramBotApi, tmp_path: Path, jobs: InProcessJobs, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    server, backend = speech
    async with running_bot(api, tmp_path, voice=hearing(jobs, backend, tmp_path)) as bot:
        api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 4.0), duration=4)
        await api.wait_until(lambda: "Lovely to hear from you." in api.texts(ANN), what="the reply")
        turns = await bot.turns(PERSON, PERSON)
        [person, _] = await bot.store.turns.recent_turns(PERSON, PERSON, 10)
        [memory] = await bot.store.curation.get_memories(PERSON, [person.memory_id])
    assert turns == [("user", SAID), ("assistant", "Lovely to hear from you.")]
    # One status message, edited through the job's steps, then the reply.
    status = api.bot_messages(ANN)[0]
    assert status.text is not None and status.text.startswith("Listening to your recording")
    assert memory.meta["source"] == "voice" and memory.meta["duration_s"] == pytest.approx(4.0, abs=0.05)
    assert len(server.received) == 1 and server.received[0].seconds == pytest.approx(4.0, abs=0.05)
    assert list((tmp_path / SPOOL).iterdir()) == [], "nothing of the recording stays in the spool"


async def test_a_long_silence_is_answered_and_stores_nothing(
    api: FakeTelegramBotApi, tmp_path: Path, jobs: InProcessJobs, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    server, backend = speech
    async with running_bot(api, tmp_path, voice=hearing(jobs, backend, tmp_path)) as bot:
        api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 4.0, freq=None), duration=4)
        await api.wait_until(lambda: SILENCE in api.texts(ANN), what="the answer")
        assert await bot.turns(PERSON, PERSON) == []
    assert server.received == [] and list((tmp_path / SPOOL).iterdir()) == []


async def test_a_short_note_is_still_heard_inline(
    api: FakeTelegramBotApi, tmp_path: Path, jobs: InProcessJobs, speech: tuple[FakeSpeech, OpenAISpeech]
) -> None:
    _, backend = speech
    async with running_bot(api, tmp_path, voice=hearing(jobs, backend, tmp_path)) as bot:
        api.voice_message(ANN, ANN, sounds.sound(sounds.OGG_OPUS, 1.0), duration=1)
        assert await replies_done(api, ANN, 1) == ["Lovely to hear from you."]
        assert await bot.turns(PERSON, PERSON) == [("user", SAID), ("assistant", "Lovely to hear from you.")]
    assert not (tmp_path / SPOOL).exists(), "a short note never touches the spool"
