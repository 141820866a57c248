"""Audio as its content says it is, never as its name or type claims: read once with PyAV
(FFmpeg inside its wheel).

`prepare` decodes a file a person sent and returns what a speech backend needs: the bytes a
server gets (the original when it is WAV/PCM, OGG/Opus or FLAC, which every OpenAI-compatible
server takes; else the audio transcoded to 16 kHz mono WAV), the samples at 16 kHz mono for a
local model, the real duration (samples decoded, not the header's claim), and whether anything in
it is louder than silence. Every way a file can be wrong is a MediaError whose one line a person
may read: empty, over the size or duration limit, not audio, no sound, damaged or cut short.
"""

from __future__ import annotations

import io
import struct
import wave
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from bot.core.errors import MediaError, MediaUnsupported

if TYPE_CHECKING:
    from av.audio.stream import AudioStream
    from av.container import InputContainer

SAMPLE_RATE = 16_000
# A file whose loudest sample stays under this (about -60 dBFS, 16-bit) holds no voice: nothing
# goes to a server, which would otherwise answer silence with words it made up.
SILENT_PEAK = 33
# A header that promises this much more than decodes (seconds, or a share of the whole) means
# pages or frames were lost: FFmpeg skips a damaged OGG page and carries on.
LOST_S = 0.25
LOST_SHARE = 0.02
# How OGG, WAV, FLAC and tagged MP3 files begin: one of these that FFmpeg cannot open was cut short
# or damaged, not something else sent as audio.
AUDIO_MAGIC = (b"OggS", b"RIFF", b"fLaC", b"ID3")
MEDIA_EXTRA = "an admin can install it with: pip install 'kindred[media]'"

EMPTY = "That file is empty, so there was nothing to listen to."
NOT_AUDIO = "That file isn't audio I can read."
NO_SOUND = "That file has no sound in it."
DAMAGED = "That recording is damaged or cut short, so I couldn't listen to it whole."


@dataclass(frozen=True, slots=True)
class AudioLimits:
    """The largest file (bytes) and the longest recording (seconds) that is listened to."""

    max_bytes: int = 20 * 1024 * 1024
    max_duration_s: float = 600.0


@dataclass(frozen=True, slots=True)
class PreparedAudio:
    """One file, decoded and checked, ready for a speech backend."""

    # What a server gets, named for its real type (never the sender's name).
    data: bytes
    filename: str
    mime: str
    duration_s: float
    silent: bool
    transcoded: bool
    # 16 kHz mono, 16-bit: what a local model hears.
    pcm: npt.NDArray[np.int16] = field(repr=False)

    def samples(self) -> npt.NDArray[np.float32]:
        """The recording as floats in [-1, 1), 16 kHz mono."""
        return self.pcm.astype(np.float32) / np.float32(32768.0)


@dataclass(frozen=True, slots=True)
class _Decoded:
    container: str
    codec: str
    claimed_s: float | None
    duration_s: float
    pcm: npt.NDArray[np.int16]


def prepare(data: bytes, limits: AudioLimits) -> PreparedAudio:
    """Decode `data` and check it whole; raises MediaError with a line for the person."""
    if not data:
        raise MediaError(EMPTY)
    if len(data) > limits.max_bytes:
        raise MediaError(
            f"That file is {_megabytes(len(data))}; I take files up to {_megabytes(limits.max_bytes)}."
        )
    decoded = _decode(data, limits.max_duration_s)
    if not _whole(data, decoded):
        raise MediaError(DAMAGED)
    as_is = _sent_as_is(decoded.container, decoded.codec)
    silent = decoded.pcm.size == 0 or int(np.abs(decoded.pcm.astype(np.int32)).max()) < SILENT_PEAK
    if as_is is not None:
        name, mime = as_is
        return PreparedAudio(data, name, mime, decoded.duration_s, silent, False, decoded.pcm)
    return PreparedAudio(
        wav_bytes(decoded.pcm), "audio.wav", "audio/wav", decoded.duration_s, silent, True, decoded.pcm
    )


def claimed_duration_s(data: bytes) -> float | None:
    """How long the header says a recording is, read without decoding it (cheap enough for the
    chat to decide whether a job hears it); None when it says nothing, or the file cannot be
    opened (or PyAV is missing): `prepare` then answers what is wrong with it."""
    try:
        import av
    except ImportError:
        return None
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.audio:
                return None
            return _claimed_s(container, container.streams.audio[0])
    except (av.FFmpegError, ValueError, OSError):
        return None


def wav_bytes(pcm: npt.NDArray[np.int16], rate: int = SAMPLE_RATE) -> bytes:
    """16-bit mono PCM as a WAV file."""
    out = io.BytesIO()
    with wave.open(out, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(pcm.astype("<i2").tobytes())
    return out.getvalue()


def _sent_as_is(container: str, codec: str) -> tuple[str, str] | None:
    """(file name, MIME type) for what every OpenAI-compatible server takes as it is; None: transcode."""
    if container == "ogg" and codec == "opus":
        return "audio.ogg", "audio/ogg"
    if container == "wav" and codec.startswith("pcm_"):
        return "audio.wav", "audio/wav"
    if container == "flac" and codec == "flac":
        return "audio.flac", "audio/flac"
    return None


def _decode(data: bytes, max_duration_s: float) -> _Decoded:
    try:
        import av
    except ImportError:
        raise MediaUnsupported(
            f"I can't listen to audio here: the media extra is missing; {MEDIA_EXTRA}."
        ) from None
    try:
        container = av.open(io.BytesIO(data), mode="r")
    except (av.FFmpegError, ValueError, OSError):
        raise MediaError(DAMAGED if data.startswith(AUDIO_MAGIC) else NOT_AUDIO) from None
    with container:
        if not container.streams.audio:
            raise MediaError(NO_SOUND)
        stream = container.streams.audio[0]
        claimed = _claimed_s(container, stream)
        if claimed is not None and claimed > max_duration_s:
            raise MediaError(
                f"That recording is {_duration(claimed)} long; I take up to {_duration(max_duration_s)}."
            )
        try:
            pcm, seconds = _resampled(container, stream, max_duration_s)
        except (av.FFmpegError, ValueError):
            raise MediaError(DAMAGED) from None
    return _Decoded(container.format.name, stream.codec_context.name, claimed, seconds, pcm)


def _claimed_s(container: InputContainer, stream: AudioStream) -> float | None:
    """The duration the header gives, if any."""
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000
    return None


def _resampled(
    container: InputContainer, stream: AudioStream, max_duration_s: float
) -> tuple[npt.NDArray[np.int16], float]:
    """Every frame decoded, at 16 kHz mono; stops as soon as the recording runs past the limit,
    whatever its header said."""
    import av

    resampler = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    parts: list[npt.NDArray[np.generic]] = []  # s16 frames, as the resampler was asked
    seconds = 0.0
    for frame in container.decode(stream):
        seconds += frame.samples / frame.sample_rate
        if seconds > max_duration_s:
            raise MediaError(f"That recording is longer than {_duration(max_duration_s)}, the most I take.")
        parts += [out.to_ndarray().reshape(-1) for out in resampler.resample(frame)]
    parts += [out.to_ndarray().reshape(-1) for out in resampler.resample(None)]
    pcm = np.concatenate(parts).astype(np.int16) if parts else np.zeros(0, dtype=np.int16)
    return pcm, seconds


def _whole(data: bytes, decoded: _Decoded) -> bool:
    """Nothing lost: a container that records its length (OGG's last page, WAV's RIFF size,
    FLAC's sample count) decodes to that length, and is not cut short."""
    if decoded.container not in ("ogg", "wav", "flac"):
        return decoded.duration_s > 0
    if decoded.container == "ogg" and not _ogg_complete(data):
        return False
    if decoded.container == "wav" and not _riff_complete(data):
        return False
    claimed = decoded.claimed_s
    if claimed is None:
        return decoded.duration_s > 0
    return decoded.duration_s >= claimed - max(LOST_S, LOST_SHARE * claimed) and decoded.duration_s > 0


def _ogg_complete(data: bytes) -> bool:
    """Every OGG page whole and in sequence from the start, the last one ending its stream (EOS).
    A cut file ends mid-page or without EOS, and FFmpeg would read it as a shorter recording."""
    at, ended = 0, False
    while at < len(data):
        if data[at : at + 4] != b"OggS" or at + 27 > len(data):
            return False
        flags, segments = data[at + 5], data[at + 26]
        table_end = at + 27 + segments
        if table_end > len(data):
            return False
        at = table_end + sum(data[at + 27 : table_end])
        ended = bool(flags & 0x04)
    return at == len(data) and ended


def _riff_complete(data: bytes) -> bool:
    """A WAV file holds as many bytes as its RIFF header says (FFmpeg reads a cut one as shorter)."""
    if len(data) < 12 or data[:4] != b"RIFF":
        return False
    (size,) = struct.unpack_from("<I", data, 4)
    # 0 and 0xFFFFFFFF: written by a recorder that streamed it and never knew the size.
    return size in (0, 0xFFFFFFFF) or len(data) >= size + 8


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KB"


def _duration(seconds: float) -> str:
    """3 h 0 min, 10 min, 45 s."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min" + (f" {secs} s" if secs else "")
    return f"{secs} s"
