"""The files people send a bot, as the loopback Bot API holds them: each has a file_id, a
file_unique_id and a path under `/file/bot<token>/`, as `getFile` names it. The attachment JSON
of a voice note, an audio file and a video note follows https://core.telegram.org/bots/api."""

from __future__ import annotations

import io
import itertools
from dataclasses import dataclass, field
from typing import Any, Literal

JSON = dict[str, Any]

# What getFile hands a bot on Telegram's cloud Bot API; a larger file is "too big".
MAX_DOWNLOAD = 20 * 1024 * 1024
NoteKind = Literal["voice", "audio", "video_note", "document"]
# Where Telegram keeps each kind, and the suffix its path has (a voice note's is .oga).
FOLDERS: dict[NoteKind, tuple[str, str]] = {
    "voice": ("voice", ".oga"),
    "audio": ("music", ".mp3"),
    "video_note": ("video_notes", ".mp4"),
    "document": ("documents", ""),
}


@dataclass
class StoredFile:
    file_id: str
    file_unique_id: str
    path: str
    data: bytes


@dataclass
class FileStore:
    files: dict[str, StoredFile] = field(default_factory=dict)
    # The path of every download, in order: a test sees how often a file was fetched.
    downloads: list[str] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def add(self, data: bytes, kind: NoteKind) -> StoredFile:
        n = next(self._ids)
        folder, suffix = FOLDERS[kind]
        stored = StoredFile(f"AwACAgIAAxkBAAI{n:08d}", f"AgAD{n:06d}", f"{folder}/file_{n}{suffix}", data)
        self.files[stored.file_id] = stored
        return stored

    def add_document(self, data: bytes, name: str) -> StoredFile:
        """A document keeps the suffix of its name in its path, as Telegram's do."""
        n = next(self._ids)
        suffix = name.rpartition(".")[2] if "." in name else ""
        path = f"documents/file_{n}" + (f".{suffix}" if suffix else "")
        stored = StoredFile(f"BQACAgIAAxkBAAI{n:08d}", f"AgAD{n:06d}", path, data)
        self.files[stored.file_id] = stored
        return stored

    def by_path(self, path: str) -> StoredFile | None:
        return next((stored for stored in self.files.values() if stored.path == path), None)


def attachment_json(
    stored: StoredFile,
    kind: NoteKind,
    *,
    duration: int,
    size: int | None,
    file_name: str = "song.mp3",
    mime_type: str | None = None,
) -> JSON:
    """The `voice`, `audio` or `video_note` object of a Message. `size` None: Telegram left
    file_size out (it may)."""
    found: JSON = {"file_id": stored.file_id, "file_unique_id": stored.file_unique_id, "duration": duration}
    if size is not None:
        found["file_size"] = size
    if kind == "voice":
        found["mime_type"] = mime_type or "audio/ogg"
    elif kind == "audio":
        found |= {"file_name": file_name, "mime_type": mime_type or "audio/mpeg", "title": "A song"}
    else:
        found["length"] = 240
    return found


@dataclass(frozen=True)
class SentVoice:
    """A voice note the bot sent (sendVoice), as the fake decoded it."""

    chat_id: int
    data: bytes
    container: str
    codec: str
    seconds: float
    duration: object  # what the bot said of it


def heard_voice(chat_id: int, data: bytes, duration: object) -> SentVoice | None:
    """`data` decoded whole with PyAV; None unless it is OGG/Opus with sound in it."""
    import av

    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            stream = container.streams.audio[0]
            samples = sum(frame.samples for frame in container.decode(stream))
            name, codec, rate = container.format.name, stream.codec_context.name, stream.sample_rate
    except (av.FFmpegError, IndexError, ValueError):
        return None
    if name != "ogg" or codec != "opus" or samples == 0:
        return None
    return SentVoice(chat_id, data, name, codec, samples / rate, duration)
