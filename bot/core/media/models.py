"""What a person sends that is not text, and what is read from it. Frozen, defined once; adapters
build a `MediaFile` from a platform's attachment, the media ports turn it into a `Transcript`, an
image description or `Passage`s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# What the person meant to send, as the platform says it: a voice note or an audio file, a photo,
# or a document. The content decides how it is read (a "document" may be an image or audio).
MediaKind = Literal["voice", "audio", "image", "document"]


@dataclass(frozen=True, slots=True)
class MediaFile:
    """One file a person sent: its bytes and what the platform said about them. `name` and `mime`
    are the sender's claims, never trusted for the type: the content is checked."""

    kind: MediaKind
    data: bytes
    name: str = ""
    mime: str = ""
    # Seconds, where the platform reports it (a voice note's duration); checked again on decoding.
    duration_s: float | None = None

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass(frozen=True, slots=True)
class Transcript:
    """What was heard. `text` is empty when nothing was said (silence, music): nothing is stored
    then. `confidence` in [0, 1] where the server gives one."""

    text: str
    duration_s: float
    language: str | None = None
    confidence: float | None = None

    def meta(self) -> dict[str, Any]:
        """What is kept with the person's turn: it was spoken, how long, in which language, and how
        sure the transcription was (each where known)."""
        meta: dict[str, Any] = {"source": "voice", "duration_s": round(self.duration_s, 2)}
        if self.language:
            meta["language"] = self.language
        if self.confidence is not None:
            meta["confidence"] = round(self.confidence, 3)
        return meta


@dataclass(frozen=True, slots=True)
class Passage:
    """A piece of a document's text that keeps its place: the file's name and, for a PDF, the page
    (1-based)."""

    text: str
    source: str
    page: int | None = None


@dataclass(frozen=True, slots=True)
class ListeningPolicy:
    """What the chat listens to: the largest file (bytes) and the longest recording (seconds), as
    the platform reports them before anything is downloaded (the backend checks the content
    again), and whether a reply begins with what was heard."""

    max_bytes: int = 20 * 1024 * 1024
    max_duration_s: float = 600.0
    echo: bool = False
