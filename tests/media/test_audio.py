"""bot/media/audio.py on files PyAV writes in the test: what a server gets for each type (the
original, or 16 kHz mono WAV), the real duration, silence, and every hostile file as one clear
line: empty, not audio, no sound, cut short, damaged, too large, too long."""

from __future__ import annotations

import io
import time

import av
import pytest

from bot.core.errors import MediaError
from bot.media.audio import DAMAGED, EMPTY, NO_SOUND, NOT_AUDIO, AudioLimits, prepare
from tests.media import sounds

LIMITS = AudioLimits()


def decoded(data: bytes) -> tuple[str, int, int, float]:
    """(container, sample rate, channels, seconds) of a file, read back with PyAV."""
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        samples = sum(frame.samples for frame in container.decode(stream))
        return container.format.name, stream.sample_rate, stream.channels, samples / stream.sample_rate


@pytest.mark.parametrize(
    ("kind", "name"),
    [(sounds.OGG_OPUS, "audio.ogg"), (sounds.WAV, "audio.wav"), (sounds.FLAC, "audio.flac")],
    ids=["ogg-opus", "wav", "flac"],
)
def test_what_every_server_takes_goes_as_it_came(kind: tuple[str, str, int], name: str) -> None:
    data = sounds.sound(kind, 1.5)
    prepared = prepare(data, LIMITS)
    assert prepared.data == data and prepared.filename == name and not prepared.transcoded
    assert prepared.duration_s == pytest.approx(1.5, abs=0.02)
    assert not prepared.silent


@pytest.mark.parametrize(
    "kind", [sounds.MP3, sounds.WEBM_OPUS, sounds.M4A], ids=["mp3", "webm-opus", "m4a-aac"]
)
def test_anything_else_becomes_16_khz_mono_wav(kind: tuple[str, str, int]) -> None:
    prepared = prepare(sounds.sound(kind, 1.5), LIMITS)
    assert prepared.transcoded and (prepared.filename, prepared.mime) == ("audio.wav", "audio/wav")
    container, rate, channels, seconds = decoded(prepared.data)
    assert (container, rate, channels) == ("wav", 16_000, 1)
    assert seconds == pytest.approx(1.5, abs=0.06)  # an encoder's padding at most
    assert prepared.samples().shape == (len(prepared.pcm),) and float(abs(prepared.samples()).max()) > 0.2


def test_a_video_note_is_heard_by_its_sound_track() -> None:
    prepared = prepare(sounds.video_note(1.0), LIMITS)
    assert prepared.transcoded and decoded(prepared.data)[:3] == ("wav", 16_000, 1)
    assert prepared.duration_s == pytest.approx(1.0, abs=0.05) and not prepared.silent


def test_silence_is_known_as_silence() -> None:
    assert prepare(sounds.sound(sounds.OGG_OPUS, 2.0, freq=None), LIMITS).silent
    # A quiet voice is still a voice: -40 dBFS is well above the silence line.
    assert not prepare(sounds.sound(sounds.OGG_OPUS, 2.0, amplitude=0.01), LIMITS).silent


def test_the_content_decides_never_the_name() -> None:
    """prepare sees only bytes: an MP3 sent as "note.ogg" is an MP3, transcoded; text named .ogg
    is not audio."""
    assert prepare(sounds.sound(sounds.MP3, 1.0), LIMITS).transcoded
    with pytest.raises(MediaError, match=NOT_AUDIO):
        prepare(b"this is a text file pretending to be voice.ogg\n" * 20, LIMITS)


def cut(data: bytes, share: float) -> bytes:
    return data[: int(len(data) * share)]


def flipped(data: bytes) -> bytes:
    """100 bytes in the middle scrambled, as a bad disk or a broken proxy would."""
    damaged = bytearray(data)
    middle = len(damaged) // 2
    damaged[middle : middle + 100] = bytes(b ^ 0x5A for b in damaged[middle : middle + 100])
    return bytes(damaged)


OGG = sounds.sound(sounds.OGG_OPUS, 3.0)
HOSTILE = {
    "empty": (b"", EMPTY),
    "ogg header only": (cut(OGG, 0.05), DAMAGED),
    "ogg cut in half": (cut(OGG, 0.5), DAMAGED),
    "ogg missing its last bytes": (cut(OGG, 0.99), DAMAGED),
    "ogg scrambled in the middle": (flipped(OGG), DAMAGED),
    "wav cut in half": (cut(sounds.sound(sounds.WAV, 3.0), 0.5), DAMAGED),
    "flac cut in half": (cut(sounds.sound(sounds.FLAC, 3.0), 0.5), DAMAGED),
    "random bytes": (bytes(range(256)) * 64, NOT_AUDIO),
    "a video without sound": (sounds.video_note(1.0, with_sound=False), NO_SOUND),
}


@pytest.mark.parametrize(("data", "line"), HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_file_is_one_clear_line(data: bytes, line: str) -> None:
    with pytest.raises(MediaError) as raised:
        prepare(data, LIMITS)
    assert str(raised.value) == line


def test_a_file_over_the_size_limit_is_refused_unread() -> None:
    data = sounds.sound(sounds.WAV, 3.0)  # 96 KB
    with pytest.raises(MediaError, match=r"^That file is 94 KB; I take files up to 50 KB\.$"):
        prepare(data, AudioLimits(max_bytes=50 * 1024))


def test_three_hours_of_audio_are_refused_at_once_by_their_length() -> None:
    three_hours = sounds.hours_of_quiet(3.0)
    assert len(three_hours) < LIMITS.max_bytes  # the size limit does not catch it
    started = time.monotonic()
    with pytest.raises(MediaError, match=r"^That recording is 3 h 0 min long; I take up to 10 min\.$"):
        prepare(three_hours, LIMITS)
    assert time.monotonic() - started < 1.0  # read from the header, not decoded


def test_a_header_that_understates_the_length_is_stopped_while_decoding() -> None:
    """Two OGG recordings chained in one file: FFmpeg's header says 3 s (the last chain), five
    decode. The decoding counts samples and stops past the limit."""
    chained = sounds.sound(sounds.OGG_OPUS, 2.0) + sounds.sound(sounds.OGG_OPUS, 3.0, freq=300.0)
    with pytest.raises(MediaError, match=r"^That recording is longer than 4 s, the most I take\.$"):
        prepare(chained, AudioLimits(max_duration_s=4.0))
    assert prepare(chained, LIMITS).duration_s == pytest.approx(5.0, abs=0.05)
