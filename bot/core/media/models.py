"""What a person sends that is not text, and what is read from it. Frozen, defined once; adapters
build a `MediaFile` from a platform's attachment, the media ports turn it into a `Transcript`, an
image description or `Passage`s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bot.core.models import JSONObject

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


# How JPEG, PNG, GIF, WebP, BMP and TIFF files begin (the formats bot/media/images.py reads).
_IMAGE_MAGIC = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"BM", b"II*\x00", b"MM\x00*")


def looks_like_image(head: bytes) -> bool:
    """Whether a file's first bytes are those of an image format that is read (its content, never
    its name). Only a first guess, to pick how a file is handled: the reader checks it whole."""
    return head.startswith(_IMAGE_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


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
class Seen:
    """What the vision model saw in an image: a short description in its own words (never the
    person's), and the size the image was sent at."""

    description: str
    width: int
    height: int

    def meta(self) -> dict[str, Any]:
        """What is kept with the person's turn (its caption): it came with a photo."""
        return {"source": "image", "image_size": [self.width, self.height]}


@dataclass(frozen=True, slots=True)
class Speech:
    """A reply said aloud: OGG/Opus (what Telegram plays as a voice note, and Discord as audio),
    and how long it lasts."""

    data: bytes
    duration_s: float
    mime: str = "audio/ogg"
    filename: str = "reply.ogg"


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


@dataclass(frozen=True, slots=True)
class SeeingPolicy:
    """The largest image file (bytes) looked at, as the platform reports it before anything is
    downloaded; the backend checks the content again (bytes and pixels)."""

    max_bytes: int = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class DocumentLimits:
    """What one document may be, and how much of them one person keeps (KINDRED_DOCUMENT_*).
    Past a limit a file is refused whole, with a line that says which: nothing of it is kept."""

    # Telegram's cloud Bot API hands a bot files up to 20 MB.
    max_bytes: int = 20 * 2**20
    # A PDF's pages are counted before any is read, so a longer one costs nothing to refuse.
    max_pages: int = 500
    # A passage fits one line of the prompt's memory block (recall.MAX_MEMORY_CHARS), so what is
    # recalled is shown whole; MiniLM reads about 1,000 characters, so it is embedded whole too.
    passage_chars: int = 400
    # Every document passage a person keeps, all files together.
    max_passages_per_person: int = 5000
    # Reading one file, all pages together; checked between pages.
    max_seconds: float = 120.0
    # A file over either is kept by a job (a Celery worker with REDIS_URL), with its progress,
    # rather than in the process that received it.
    job_bytes: int = 2 * 2**20
    job_pages: int = 50


@dataclass(frozen=True, slots=True)
class KeptDocument:
    """What `keep_document` stored: its memories' ids in passage order, and which pages had text.
    `already`: the same file was kept before, and nothing was stored again."""

    name: str
    digest: str
    passages: int
    pages: tuple[int, ...]
    characters: int
    memory_ids: tuple[int, ...] = ()
    already: bool = False

    def as_payload(self) -> JSONObject:
        """As a job's result (JSON); `from_payload` reads it back."""
        return {
            "name": self.name, "digest": self.digest, "passages": self.passages, "pages": list(self.pages),
            "characters": self.characters, "memory_ids": list(self.memory_ids), "already": self.already,
        }  # fmt: skip

    @classmethod
    def from_payload(cls, payload: JSONObject) -> KeptDocument:
        return cls(
            name=str(payload["name"]), digest=str(payload["digest"]), passages=int(payload["passages"]),
            pages=tuple(int(page) for page in payload["pages"]), characters=int(payload["characters"]),
            memory_ids=tuple(int(one) for one in payload["memory_ids"]), already=bool(payload["already"]),
        )  # fmt: skip

    @property
    def contents(self) -> str:
        """What was kept, as in "12 passages from pages 1–3, 4,210 characters"."""
        pages = ""
        if self.pages:
            first, last = self.pages[0], self.pages[-1]
            pages = f" from page {first}" if first == last else f" from pages {first}–{last}"
        passages = "1 passage" if self.passages == 1 else f"{self.passages:,} passages"
        return f"{passages}{pages}, {self.characters:,} characters"

    def summary(self) -> str:
        """One line for the person: what was kept of their file."""
        name = self.name or "your file"
        if self.already:
            return f"I already keep {name} ({self.passages:,} passages); I didn't store it twice."
        return (
            f"I keep {name}: {self.contents}. Ask me about it any time; /memories lists its "
            f"passages and /forget file {name} forgets them."
        )
