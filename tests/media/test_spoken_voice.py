"""The voices that say replies aloud: the OpenAI-compatible one against a loopback server that
checks what it gets and answers real audio, and espeak-ng run for real. What comes out is decoded
with PyAV: OGG/Opus with sound in it, or a MediaError with a plain line and no secret."""

from __future__ import annotations

import io
import logging
import shutil
from pathlib import Path

import av
import numpy as np
import pytest

from bot.core.chat.spoken import NotSpoken, SpokenReplies
from bot.core.errors import MediaError, MediaUnsupported
from bot.core.media.models import Speech
from bot.media.tts.espeak import FAILED, EspeakVoice
from bot.media.tts.openai import REFUSED_KEY, TOO_SLOW, OpenAIVoice
from bot.media.tts.opus import NOT_AUDIO, ogg_opus
from bot.store.sqlite.store import SqliteStore
from tests.media import sounds
from tests.media.tts_server import FakeVoiceServer, speaking

KEY = "sk-tts-secret-4242"
needs_espeak = pytest.mark.skipif(
    shutil.which("espeak-ng") is None, reason="scripts/test-tools.sh installs it"
)


def decoded(speech: Speech) -> tuple[str, str, float, int]:
    """(container, codec, seconds decoded, loudest sample) of a voice note."""
    with av.open(io.BytesIO(speech.data), mode="r") as container:
        stream = container.streams.audio[0]
        frames = [frame.to_ndarray() for frame in container.decode(stream)]
        samples = sum(frame.shape[-1] for frame in frames)
        peak = max(float(np.abs(frame).max()) for frame in frames)
        return (
            container.format.name,
            stream.codec_context.name,
            samples / stream.sample_rate,
            int(peak * 32767),
        )


@pytest.mark.parametrize("response_format", ["opus", "wav"])
async def test_the_server_is_asked_for_the_text_in_its_model_and_voice_and_opus_comes_back(
    response_format: str,
) -> None:
    async with speaking(response_format, api_key=KEY) as (server, voice):  # type: ignore[arg-type]
        speech = await voice.synthesize("Good morning, how did you sleep?")
    assert server.refused == []
    [said] = server.received
    assert (said.model, said.voice, said.input) == ("tts-1", "alloy", "Good morning, how did you sleep?")
    assert said.response_format == response_format and said.authorization == f"Bearer {KEY}"
    container, codec, seconds, peak = decoded(speech)
    assert (container, codec) == ("ogg", "opus") and speech.mime == "audio/ogg"
    assert seconds == pytest.approx(speech.duration_s, abs=0.05) and seconds >= 0.5
    assert peak > 1000, "the tone is there, not silence"


@pytest.mark.parametrize(
    ("failure", "line"),
    [
        ("500", "The voice service failed (HTTP 500), so I couldn't say that aloud."),
        ("garbage", NOT_AUDIO),
        ("stall", TOO_SLOW),
    ],
)
async def test_a_failing_server_is_one_plain_line_and_the_key_is_never_logged(
    failure: str, line: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with speaking(timeout_s=1.0, api_key=KEY) as (server, voice):
        server.fail_next(failure)  # type: ignore[arg-type]
        with pytest.raises(MediaError) as raised:
            await voice.synthesize("hello")
    assert str(raised.value) == line
    assert KEY not in caplog.text and KEY not in str(raised.value)


async def test_a_refused_key_and_an_unreachable_server_say_so() -> None:
    async with speaking(api_key=KEY) as (server, _):
        wrong = OpenAIVoice(server.base_url, model="tts-1", voice="alloy", api_key="sk-wrong")
        with pytest.raises(MediaError, match="KINDRED_TTS_API_KEY"):
            await wrong.synthesize("hello")
        await wrong.close()
        assert str(REFUSED_KEY).endswith("KINDRED_TTS_API_KEY.")
    gone = OpenAIVoice("http://127.0.0.1:9/v1", model="tts-1", voice="alloy", timeout_s=2.0)
    with pytest.raises(MediaError, match="can't reach the voice service"):
        await gone.synthesize("hello")
    await gone.close()


async def test_a_voice_the_server_does_not_have_is_refused_by_it_and_reported_plainly() -> None:
    server = await FakeVoiceServer().start()
    voice = OpenAIVoice(server.base_url, model="tts-1", voice="nova")
    try:
        with pytest.raises(MediaError, match="HTTP 400"):
            await voice.synthesize("hello")
    finally:
        await voice.close()
        await server.close()
    assert server.refused == ["voice 'nova' is not one of ('alloy',)"]


def test_what_is_not_audio_or_is_cut_short_never_becomes_a_voice_note() -> None:
    for data in (b"", b"<html>oops</html>", b"OggS" + bytes(100), sounds.sound(sounds.OGG_OPUS, 2.0)[:200]):
        with pytest.raises(MediaError, match="isn't audio"):
            ogg_opus(data, 60)
    with pytest.raises(MediaError, match="too long"):
        ogg_opus(sounds.sound(sounds.WAV, 3.0), 2.0)


@needs_espeak
async def test_espeak_ng_says_a_reply_as_real_opus() -> None:
    speech = await EspeakVoice(voice="en").synthesize("Hello Ann. It is good to hear from you again.")
    container, codec, seconds, peak = decoded(speech)
    assert (container, codec) == ("ogg", "opus")
    assert 1.0 < seconds < 10.0 and peak > 1000


@needs_espeak
async def test_espeak_ng_reads_a_reply_that_looks_like_an_option_as_words() -> None:
    # On the command line "--help" would print espeak's usage instead of any sound.
    speech = await EspeakVoice().synthesize("--help -v xx")
    assert decoded(speech)[:2] == ("ogg", "opus")


async def test_espeak_ng_that_fails_or_is_missing_is_one_plain_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "espeak-ng"
    broken.write_text("#!/bin/sh\necho 'espeak-ng: cannot open the phoneme data' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MediaError) as raised:
        await EspeakVoice().synthesize("hello")
    assert str(raised.value) == FAILED
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(MediaUnsupported, match="apt-get install espeak-ng"):
        await EspeakVoice().synthesize("hello")


@needs_espeak
async def test_espeak_ng_given_too_little_time_is_stopped_with_one_plain_line() -> None:
    with pytest.raises(MediaError, match="took too long"):
        await EspeakVoice(timeout_s=0.001).synthesize("a long reply " * 200)


@needs_espeak
async def test_a_personas_voice_reaches_espeak_ng_and_none_keeps_the_configured_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: SqliteStore
) -> None:
    """The real espeak-ng, behind a wrapper that writes down how it was called."""
    real, calls = shutil.which("espeak-ng"), tmp_path / "calls"
    wrapper = tmp_path / "espeak-ng"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    replies = SpokenReplies(store.turns, EspeakVoice(voice="en"))
    german = await replies.speak("Guten Tag, Ann.", "de")
    default = await replies.speak("Good day, Ann.")
    missing = await replies.speak("Hello.", "zz-no-such-voice")
    assert isinstance(german, Speech) and isinstance(default, Speech)
    assert decoded(german)[:2] == ("ogg", "opus") and decoded(german)[3] > 1000
    assert missing == NotSpoken(FAILED)  # a voice espeak-ng lacks: one plain line, never a crash
    voices = [line.split(" -v ")[1].split()[0] for line in calls.read_text().splitlines()]
    assert voices == ["de", "en", "zz-no-such-voice"]
