"""The local speech path end to end with a tiny Whisper built in the test (nothing downloaded):
a voice note decoded by bot/media/audio.py, heard by the model on a thread, answered through the
real conversation and stored on SQLite as the person's words, with the language the model wrote.
Silence never reaches the model; a model that cannot load is one line for the person."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.voice import NOTHING_KEPT, SILENCE, VoiceNotes
from bot.core.events import Refusal, ReplyDone, VoiceNote
from bot.core.media.models import MediaFile, Transcript
from bot.inference.whisper import WhisperModel
from bot.media.audio import AudioLimits, prepare
from bot.media.speech.local import MODEL_FAILED, LocalSpeech
from bot.store.sqlite.store import SqliteStore
from bot.wiring.media.backends import load_speech
from bot.wiring.settings import SpeechSettings
from tests.media import sounds
from tests.support.fakes import HashEmbedder, ScriptedInference
from tests.support.tiny_whisper import shared_tiny_whisper

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


class CountingWhisper(WhisperModel):
    """The real tiny Whisper, counting what it is asked to hear."""

    heard: int = 0

    def recognize(self, samples: npt.NDArray[np.float32]) -> Transcript:
        self.heard += 1
        return super().recognize(samples)


@pytest.fixture(scope="module")
def whisper_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_tiny_whisper(tmp_path_factory.mktemp("whisper"))


def voice_notes(store: SqliteStore, speech: LocalSpeech) -> VoiceNotes:
    policy = ConversationPolicy(persona="p")
    return VoiceNotes(Conversation(store, HashEmbedder(), ScriptedInference("Tell me more."), policy), speech)


def note(data: bytes) -> VoiceNote:
    return VoiceNote("ann", "c1", MediaFile("voice", data, "voice.ogg", "audio/ogg"), T0, "telegram:1:1")


async def test_a_voice_note_is_heard_by_the_local_model_and_stored(
    store: SqliteStore, whisper_dir: Path
) -> None:
    data = sounds.sound(sounds.OGG_OPUS, 2.0)
    model = CountingWhisper(str(whisper_dir), device="cpu")
    events = [event async for event in voice_notes(store, LocalSpeech(model)).handle(note(data))]
    assert isinstance(events[-1], ReplyDone) and events[-1].turn_id is not None
    expected = model.recognize(prepare(data, AudioLimits()).samples())  # the same samples, heard again
    user, _ = await store.turns.recent_turns("ann", "c1", 10)
    [memory] = await store.curation.get_memories("ann", [user.memory_id])
    assert user.text == expected.text and user.text  # nonsense, but words
    assert memory.meta == {"chat_id": "c1", "source": "voice", "duration_s": 2.0, "language": "en"}


async def test_silence_never_reaches_the_model(store: SqliteStore, whisper_dir: Path) -> None:
    model = CountingWhisper(str(whisper_dir), device="cpu")
    events = [
        event
        async for event in voice_notes(store, LocalSpeech(model)).handle(
            note(sounds.sound(sounds.OGG_OPUS, 2.0, freq=None))
        )
    ]
    assert events == [Refusal(SILENCE)] and model.heard == 0


async def test_a_model_that_cannot_load_is_one_line_and_nothing_stored(
    store: SqliteStore, tmp_path: Path
) -> None:
    speech = LocalSpeech(WhisperModel(str(tmp_path / "missing"), device="cpu"))
    events = [
        event async for event in voice_notes(store, speech).handle(note(sounds.sound(sounds.OGG_OPUS, 1.0)))
    ]
    assert events == [Refusal(f"{MODEL_FAILED} {NOTHING_KEPT}")]
    assert await store.turns.recent_turns("ann", "c1", 10) == []


def test_the_settings_pick_the_local_backend(whisper_dir: Path) -> None:
    media = SpeechSettings(speech_backend="local", speech_model=str(whisper_dir), audio_max_seconds=30)
    speech = load_speech(media, device="cpu")
    assert isinstance(speech, LocalSpeech) and isinstance(speech.model, WhisperModel)
    assert (speech.model_name, speech.model.device, speech.limits.max_duration_s) == (
        str(whisper_dir),
        "cpu",
        30.0,
    )
