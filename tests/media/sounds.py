"""Audio files made in the test with PyAV itself: a sine tone or silence, in any container and
codec FFmpeg writes, and a video note (MP4: video and AAC sound). Nothing is downloaded."""

from __future__ import annotations

import io
from fractions import Fraction

import av
import numpy as np

# (container, codec, sample rate) as a platform sends them.
OGG_OPUS = ("ogg", "libopus", 48_000)  # a Telegram voice note
MP3 = ("mp3", "libmp3lame", 44_100)  # an audio file
WAV = ("wav", "pcm_s16le", 16_000)
FLAC = ("flac", "flac", 16_000)
WEBM_OPUS = ("webm", "libopus", 48_000)  # Opus, but not in OGG: transcoded
M4A = ("ipod", "aac", 44_100)
# Opus takes 20 ms frames; others take whatever they are given.
FRAME = {"libopus": 960, "aac": 1024, "libmp3lame": 1152}


def sound(
    kind: tuple[str, str, int] = OGG_OPUS,
    seconds: float = 1.0,
    *,
    freq: float | None = 440.0,
    amplitude: float = 0.3,
    block: int | None = None,
) -> bytes:
    """`seconds` of a sine tone at `freq` (None: digital silence), mono, encoded as `kind`."""
    container, codec, rate = kind
    out = io.BytesIO()
    with av.open(out, "w", format=container) as muxer:
        stream = muxer.add_stream(codec, rate=rate, layout="mono")
        _encode(muxer, stream, _pcm(seconds, rate, freq, amplitude), rate, block or FRAME.get(codec, 4096))
    return out.getvalue()


def _pcm(seconds: float, rate: int, freq: float | None, amplitude: float) -> np.ndarray:
    n = int(seconds * rate)
    if freq is None:
        return np.zeros(n, dtype=np.int16)
    t = np.arange(n) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t) * 32767).astype(np.int16)


def _encode(
    muxer: av.container.OutputContainer, stream: av.AudioStream, pcm: np.ndarray, rate: int, block: int
) -> None:
    for start in range(0, len(pcm), block):
        chunk = pcm[start : start + block]
        if len(chunk) < block and stream.codec_context.name in ("libopus", "aac", "libmp3lame"):
            chunk = np.pad(chunk, (0, block - len(chunk)))
        frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = rate
        frame.pts = start
        frame.time_base = Fraction(1, rate)
        for packet in stream.encode(frame):
            muxer.mux(packet)
    for packet in stream.encode(None):
        muxer.mux(packet)


def hours_of_quiet(hours: float = 3.0) -> bytes:
    """A FLAC recording of `hours` of silence at 8 kHz: hours long, a few hundred KB."""
    out = io.BytesIO()
    rate, block = 8_000, 65_535 // 4
    zero = np.zeros((1, block), dtype=np.int16)
    with av.open(out, "w", format="flac") as muxer:
        stream = muxer.add_stream("flac", rate=rate, layout="mono")
        for start in range(0, int(hours * 3600 * rate), block):
            frame = av.AudioFrame.from_ndarray(zero, format="s16", layout="mono")
            frame.sample_rate, frame.pts, frame.time_base = rate, start, Fraction(1, rate)
            for packet in stream.encode(frame):
                muxer.mux(packet)
        for packet in stream.encode(None):
            muxer.mux(packet)
    return out.getvalue()


def video_note(seconds: float = 1.0, *, with_sound: bool = True) -> bytes:
    """A round Telegram video note: MP4 with a small MPEG-4 video and, by default, AAC sound."""
    out = io.BytesIO()
    with av.open(out, "w", format="mp4") as muxer:
        video = muxer.add_stream("mpeg4", rate=10)
        video.width = video.height = 64
        video.pix_fmt = "yuv420p"
        audio = muxer.add_stream("aac", rate=44_100, layout="mono") if with_sound else None
        for index in range(int(seconds * 10)):
            picture = av.VideoFrame.from_ndarray(
                np.full((64, 64, 3), index * 20 % 255, np.uint8), format="rgb24"
            )
            picture.pts = index
            for packet in video.encode(picture):
                muxer.mux(packet)
        for packet in video.encode(None):
            muxer.mux(packet)
        if audio is not None:
            _encode(muxer, audio, _pcm(seconds, 44_100, 440.0, 0.3), 44_100, 1024)
    return out.getvalue()
