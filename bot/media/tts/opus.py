"""Any audio a voice produced, as OGG/Opus: what Telegram plays as a voice note and Discord as an
audio attachment. Read with PyAV (FFmpeg inside its wheel); a server's answer that does not
decode is never passed on."""

from __future__ import annotations

import io
from fractions import Fraction

from bot.core.errors import MediaError, MediaUnsupported
from bot.core.media.models import Speech
from bot.media.audio import MEDIA_EXTRA

# Opus codes 48 kHz in 20 ms frames; a voice needs no more than one channel.
OPUS_RATE = 48_000
OPUS_FRAME = 960
NOT_AUDIO = "The voice service sent something that isn't audio, so I couldn't say that aloud."


def ogg_opus(data: bytes, max_seconds: float) -> Speech:
    """`data` (WAV, OGG/Opus, MP3, …) decoded whole and encoded as OGG/Opus at 48 kHz mono.
    Raises MediaError for what is not audio, has no sound, or runs past `max_seconds`."""
    try:
        import av
    except ImportError:
        raise MediaUnsupported(
            f"I can't make voice notes here: the media extra is missing; {MEDIA_EXTRA}."
        ) from None
    if not data:
        raise MediaError(NOT_AUDIO)
    out = io.BytesIO()
    seconds = 0.0
    try:
        with av.open(io.BytesIO(data), mode="r") as source:
            if not source.streams.audio:
                raise MediaError(NOT_AUDIO)
            stream = source.streams.audio[0]
            resampler = av.AudioResampler(format="s16", layout="mono", rate=OPUS_RATE, frame_size=OPUS_FRAME)
            with av.open(out, mode="w", format="ogg") as muxer:
                opus = muxer.add_stream("libopus", rate=OPUS_RATE, layout="mono")
                pts = 0
                for frame in [*source.decode(stream), None]:
                    if frame is not None:
                        seconds += frame.samples / frame.sample_rate
                        if seconds > max_seconds:
                            raise MediaError("That reply is too long to say aloud.")
                    for chunk in resampler.resample(frame):
                        chunk.pts, chunk.time_base = pts, Fraction(1, OPUS_RATE)
                        pts += chunk.samples
                        for packet in opus.encode(chunk):
                            muxer.mux(packet)
                for packet in opus.encode(None):
                    muxer.mux(packet)
    except (av.FFmpegError, ValueError, OSError):
        raise MediaError(NOT_AUDIO) from None
    if seconds <= 0:
        raise MediaError(NOT_AUDIO)
    return Speech(out.getvalue(), seconds)
