"""The OpenAI-compatible speech backend against a loopback server over real HTTP, which checks what
it receives (a whole multipart body with its Content-Length, the model, audio that decodes): what
is sent for each kind of file, what is read from the answer, and every way a server fails as one
line for the person that never carries the key, after which the backend keeps working."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from bot.core.errors import MediaError
from bot.core.media.models import MediaFile
from bot.media.audio import DAMAGED, AudioLimits
from bot.media.speech.answers import GARBLED
from bot.media.speech.openai import REFUSED_KEY, TOO_SLOW, OpenAISpeech
from tests.media import sounds
from tests.media.speech_server import Failure, FakeSpeech

API_KEY = "sk-speech-very-secret-456"
HELLO = "I adopted a cat called Miso today."


@pytest.fixture
async def server() -> AsyncIterator[FakeSpeech]:
    fake = await FakeSpeech(model="whisper-large-v3", phrases={440: HELLO}, api_key=API_KEY).start()
    yield fake
    await fake.close()


@pytest.fixture
async def speech(server: FakeSpeech) -> AsyncIterator[OpenAISpeech]:
    backend = OpenAISpeech(server.base_url + "/", model="whisper-large-v3", api_key=API_KEY, timeout_s=5.0)
    yield backend
    await backend.close()


def voice(data: bytes, name: str = "voice.ogg", mime: str = "audio/ogg") -> MediaFile:
    return MediaFile("voice", data, name, mime)


async def test_a_voice_note_goes_as_it_came_and_its_words_come_back(
    server: FakeSpeech, speech: OpenAISpeech
) -> None:
    note = sounds.sound(sounds.OGG_OPUS, 2.0)
    heard = await speech.transcribe(voice(note))
    assert heard.text == HELLO and heard.language == "en"
    assert heard.duration_s == pytest.approx(2.0, abs=0.02)
    assert heard.confidence == pytest.approx(0.8187, abs=1e-3)  # exp(-0.2)
    [got] = server.received
    assert (got.model, got.response_format, got.filename, got.content_type) == (
        "whisper-large-v3", "verbose_json", "audio.ogg", "audio/ogg",
    )  # fmt: skip
    assert (got.container, got.size, got.pitch_hz) == ("ogg", len(note), 440)
    assert int(got.headers["Content-Length"]) > len(note) and "Transfer-Encoding" not in got.headers
    assert got.headers["Authorization"] == f"Bearer {API_KEY}"


async def test_a_file_whose_name_lies_is_sent_as_what_it_is(server: FakeSpeech, speech: OpenAISpeech) -> None:
    """An MP3 named voice.ogg: the content decides, so it goes as 16 kHz mono WAV."""
    heard = await speech.transcribe(voice(sounds.sound(sounds.MP3, 1.5), "voice.ogg", "audio/ogg"))
    assert heard.text == HELLO
    [got] = server.received
    assert (got.filename, got.content_type, got.container, got.sample_rate) == (
        "audio.wav", "audio/wav", "wav", 16_000,
    )  # fmt: skip
    assert got.seconds == pytest.approx(1.5, abs=0.06)


async def test_a_video_note_sends_its_sound(server: FakeSpeech, speech: OpenAISpeech) -> None:
    heard = await speech.transcribe(MediaFile("voice", sounds.video_note(1.0), "note.mp4", "video/mp4"))
    assert heard.text == HELLO and server.received[0].container == "wav"


async def test_silence_never_leaves_the_machine(server: FakeSpeech, speech: OpenAISpeech) -> None:
    heard = await speech.transcribe(voice(sounds.sound(sounds.OGG_OPUS, 3.0, freq=None)))
    assert heard.text == "" and heard.duration_s == pytest.approx(3.0, abs=0.02)
    assert server.received == []


async def test_music_marked_as_no_speech_stores_no_invented_words(
    server: FakeSpeech, speech: OpenAISpeech
) -> None:
    heard = await speech.transcribe(voice(sounds.sound(sounds.OGG_OPUS, 2.0, freq=1000.0)))
    assert server.received[0].pitch_hz == 1000  # it went, and the server invented words for it
    assert heard.text == "" and heard.confidence is None


async def test_a_plain_json_answer_gives_the_text_alone(server: FakeSpeech) -> None:
    plain = OpenAISpeech(server.base_url, model="whisper-large-v3", api_key=API_KEY, response_format="json")
    try:
        heard = await plain.transcribe(voice(sounds.sound(sounds.FLAC, 1.0)))
    finally:
        await plain.close()
    assert (heard.text, heard.language, heard.confidence) == (HELLO, None, None)
    assert server.received[0].response_format == "json" and server.received[0].filename == "audio.flac"


async def test_a_file_that_cannot_be_heard_is_refused_before_any_request(
    server: FakeSpeech, speech: OpenAISpeech
) -> None:
    note = sounds.sound(sounds.OGG_OPUS, 2.0)
    with pytest.raises(MediaError, match=DAMAGED):
        await speech.transcribe(voice(note[: len(note) // 2]))
    limited = OpenAISpeech(server.base_url, model="whisper-large-v3", limits=AudioLimits(max_duration_s=1.0))
    try:
        with pytest.raises(MediaError, match=r"^That recording is 2 s long; I take up to 1 s\.$"):
            await limited.transcribe(voice(note))
    finally:
        await limited.close()
    assert server.received == [] and server.refused == []


HOSTILE: list[tuple[Failure, str]] = [
    ("500", r"^The speech service failed \(HTTP 500\), so I couldn't listen to that\.$"),
    ("401", "^" + REFUSED_KEY.replace("(", r"\(").replace(")", r"\)") + "$"),
    ("garbage", "^" + GARBLED + "$"),
    ("no_text", "^" + GARBLED + "$"),
]


@pytest.mark.parametrize(("failure", "line"), HOSTILE, ids=[failure for failure, _ in HOSTILE])
async def test_a_failing_server_is_one_clear_line_without_the_key(
    server: FakeSpeech, speech: OpenAISpeech, failure: Failure, line: str, caplog: pytest.LogCaptureFixture
) -> None:
    server.fail_next(failure)
    caplog.set_level(logging.WARNING)
    with pytest.raises(MediaError, match=line) as raised:
        await speech.transcribe(voice(sounds.sound(sounds.OGG_OPUS, 1.0)))
    assert raised.value.__cause__ is None and API_KEY not in str(raised.value)
    assert API_KEY not in caplog.text
    assert (await speech.transcribe(voice(sounds.sound(sounds.OGG_OPUS, 1.0)))).text == HELLO


async def test_a_key_the_server_echoes_back_is_not_logged(
    server: FakeSpeech, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "sk-speech-wrong-key-789"
    backend = OpenAISpeech(server.base_url, model="whisper-large-v3", api_key=wrong)
    caplog.set_level(logging.WARNING)
    try:
        with pytest.raises(MediaError, match="refused my key"):
            await backend.transcribe(voice(sounds.sound(sounds.OGG_OPUS, 1.0)))
    finally:
        await backend.close()
    assert "Invalid API key: Bearer ***" in caplog.text and wrong not in caplog.text


async def test_a_server_that_does_not_answer_in_time_is_a_clear_line(server: FakeSpeech) -> None:
    slow = OpenAISpeech(server.base_url, model="whisper-large-v3", api_key=API_KEY, timeout_s=0.5)
    server.fail_next("stall")
    try:
        with pytest.raises(MediaError, match="^" + TOO_SLOW + "$"):
            await slow.transcribe(voice(sounds.sound(sounds.OGG_OPUS, 1.0)))
    finally:
        await slow.close()


async def test_a_server_that_is_not_there_is_a_clear_line() -> None:
    gone = OpenAISpeech("http://127.0.0.1:9/v1", model="m")
    try:
        with pytest.raises(MediaError, match="can't reach the speech service"):
            await gone.transcribe(voice(sounds.sound(sounds.OGG_OPUS, 1.0)))
    finally:
        await gone.close()


async def test_a_wrong_model_name_is_refused_by_the_server(server: FakeSpeech) -> None:
    wrong = OpenAISpeech(server.base_url, model="tiny", api_key=API_KEY)
    try:
        with pytest.raises(MediaError, match=r"HTTP 400"):
            await wrong.transcribe(voice(sounds.sound(sounds.OGG_OPUS, 1.0)))
    finally:
        await wrong.close()
    assert server.refused == ["model 'tiny' is not served here"]
