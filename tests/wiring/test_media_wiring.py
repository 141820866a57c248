"""Voice notes through the composition root: the settings pick the speech backend (or none; the
local one is tested in tests/media/test_local_speech.py), and `kindred chat`'s `/file` runs end to
end with everything remote and real over HTTP: replies and embeddings from the loopback
OpenAI-compatible server, transcripts from the loopback speech server, on a SQLite store."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.adapters.console import ConsoleIO
from bot.media.speech.openai import OpenAISpeech
from bot.wiring.kindred import Kindred, build
from bot.wiring.media.backends import load_speech
from bot.wiring.platforms import console_chat
from bot.wiring.settings import Settings, SpeechSettings, load_settings
from tests.inference.openai_server import FakeOpenAI
from tests.media import sounds
from tests.media.speech_server import FakeSpeech

SPEECH_API_KEY = "sk-speech-wiring-secret-31"
SAID = "My sister moved to Lisbon last spring"


def test_no_backend_is_the_default() -> None:
    assert load_speech(SpeechSettings()) is None


async def test_the_openai_backend_takes_its_settings() -> None:
    media = SpeechSettings(
        speech_backend="openai", speech_url="http://127.0.0.1:1/v1", speech_model="whisper-1",
        audio_max_mb=5, audio_max_seconds=30, speech_format="json", speech_timeout_s=7,
    )  # fmt: skip
    speech = load_speech(media)
    assert isinstance(speech, OpenAISpeech)
    try:
        assert (speech.base_url, speech.model_name, speech.response_format, speech.timeout_s) == (
            "http://127.0.0.1:1/v1", "whisper-1", "json", 7.0,
        )  # fmt: skip
        assert (speech.limits.max_bytes, speech.limits.max_duration_s) == (5 * 1024 * 1024, 30.0)
    finally:
        await speech.close()


@pytest.fixture
async def servers() -> AsyncIterator[tuple[FakeOpenAI, FakeSpeech]]:
    chat = await FakeOpenAI(chunks=["How", " lovely", " for", " her."], base_model="served-chat").start()
    speech = await FakeSpeech(model="served-whisper", phrases={440: SAID}, api_key=SPEECH_API_KEY).start()
    yield chat, speech
    await speech.close()
    await chat.close()


@pytest.fixture
def settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: tuple[FakeOpenAI, FakeSpeech]
) -> Settings:
    chat, speech = servers
    env = {
        "KINDRED_DATA_DIR": str(tmp_path / "data"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'kindred.db'}",
        "KINDRED_INFERENCE_BACKEND": "openai",
        "KINDRED_OPENAI_BASE_URL": f"{chat.base_url}/v1",
        "KINDRED_OPENAI_MODEL": "served-chat",
        "KINDRED_EMBEDDING_BACKEND": "openai",
        "KINDRED_EMBEDDING_URL": f"{chat.base_url}/v1",
        "KINDRED_EMBEDDING_MODEL": "served-embed",
        "KINDRED_SPEECH_BACKEND": "openai",
        "KINDRED_SPEECH_URL": speech.base_url,
        "KINDRED_SPEECH_MODEL": "served-whisper",
        "KINDRED_SPEECH_API_KEY": SPEECH_API_KEY,
        "KINDRED_SPEECH_ECHO": "on",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return load_settings(env_file=None)


async def test_file_in_kindred_chat_is_heard_answered_and_remembered(
    settings: Settings, servers: tuple[FakeOpenAI, FakeSpeech], tmp_path: Path
) -> None:
    chat, speech = servers
    recording = tmp_path / "sister.ogg"
    recording.write_bytes(sounds.sound(sounds.OGG_OPUS, 2.0))
    lines = [f"/file {recording}\n", "/memories\n"]
    out = io.StringIO()
    pipe = ConsoleIO(lambda: lines.pop(0) if lines else "", out, io.StringIO(), interactive=False)
    kindred = await build(settings)

    async def ready() -> Kindred:
        return kindred

    try:
        await console_chat(ready(), "ann", pipe).run()
        turns = await kindred.store.turns.recent_turns("ann", "console", 10)
    finally:
        await kindred.close()
    printed = out.getvalue()
    assert printed.startswith(f"(I heard: “{SAID}”)\n\nHow lovely for her.\n")
    assert SAID in printed.split("How lovely for her.\n", 1)[1]  # /memories lists the spoken words
    assert [(turn.role, turn.text) for turn in turns] == [
        ("user", SAID),
        ("assistant", "How lovely for her."),
    ]
    assert [received.model for received in speech.received] == ["served-whisper"]
    assert chat.requests[-1]["messages"][-1] == {"role": "user", "content": SAID}
    assert any(SAID in text for body in chat.embedding_requests for text in body["input"])
