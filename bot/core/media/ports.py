"""The media room's boundaries: a speech-to-text backend, a voice that says replies aloud, a
vision model, and a reader of documents. Each raises `MediaError` (bot/core/errors.py) with a line
a person may read, never a server's raw answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

import numpy as np
import numpy.typing as npt

from bot.core.events import UserMessage, VoiceNote
from bot.core.media.models import KeptDocument, MediaFile, Passage, Seen, Speech, Transcript

# Shows a step of slow work in the chat ("Reading plan.pdf: 120 of 400 passages"), as mini-app
# builds do; it never raises (progress is a courtesy).
Show = Callable[[str], Awaitable[None]]


class SpeechToText(Protocol):
    """Turns a voice note or an audio file into text (an OpenAI-compatible server, or a local model)."""

    model_name: str

    async def transcribe(self, audio: MediaFile) -> Transcript:
        """What was said. Raises MediaError for audio that cannot be decoded or a backend that
        failed; an empty `text` for silence."""
        ...


class SpeechSynthesis(Protocol):
    """Says a reply aloud (an OpenAI-compatible `/v1/audio/speech` server, or espeak-ng here)."""

    model_name: str

    async def synthesize(self, text: str, voice: str | None = None) -> Speech:
        """`text` spoken, as OGG/Opus, in `voice` (the backend's name for one; None: the
        configured voice). Raises MediaError, with a line a person may read, for a backend that
        failed, was too slow, or answered with something that is not audio."""
        ...


class SpeechModel(Protocol):
    """A speech model in this process (Whisper): 16 kHz mono samples in, text out. Blocking, and
    CPU- or GPU-bound: the caller runs it on a thread."""

    model_name: str

    def recognize(self, samples: npt.NDArray[np.float32]) -> Transcript:
        """What was said in `samples` (floats in [-1, 1)). Raises InferenceError when the model
        cannot be loaded or fails."""
        ...


class LongNotes(Protocol):
    """Hears recordings too long to hear while the chat waits, by a job that keeps what was heard
    as the person's turn, showing its steps."""

    def is_long(self, audio: MediaFile) -> bool:
        """Whether `audio` goes to the job (its length as the platform or its header says)."""
        ...

    async def keep(self, note: VoiceNote, key: str, show: Show) -> UserMessage | None:
        """The person's message as the job stored it under `key` (its text: the caption, then
        what was heard); None for silence, with nothing stored. Raises MediaError (nothing
        stored) for a recording that cannot be heard, and JobError, JobTimeout or
        QueueUnavailable when the job could not hear it."""
        ...


class ImageDescriber(Protocol):
    """Looks at a photo or an image (a vision-capable model behind an OpenAI-compatible server)."""

    model_name: str

    async def describe(self, image: MediaFile, caption: str) -> Seen:
        """A short description of what the image shows; `caption` is what the person wrote with
        it (may be empty). Raises MediaError for a file that is not an image it can read (corrupt,
        empty, a lying type, over the limits) or a model that cannot see or failed;
        MediaUnsupported when the extra that reads images is missing."""
        ...


class DocumentReader(Protocol):
    """Reads a document's text into passages (PDF, plain text, Markdown, .docx)."""

    async def read(self, document: MediaFile) -> list[Passage]:
        """The document's passages, in order. Raises MediaError for a file it cannot read (an
        unknown or lying type, encrypted, malformed, or over the limits)."""
        ...


class DocumentKeeper(Protocol):
    """Keeps a document a person sent as their document memories: in this process, or for a
    long one by a job, showing its steps."""

    async def keep(
        self, user_id: str, document: MediaFile, *, chat_id: str | None, show: Show
    ) -> KeptDocument:
        """Searchable when this returns. Raises MediaError (nothing stored) for a file that is
        refused, and JobError, JobTimeout or QueueUnavailable when the job could not keep it."""
        ...


class FileShelf(Protocol):
    """The original files of people who asked that they be kept (/privacy files keep), until
    they forget them."""

    async def put(self, user_id: str, kept: KeptDocument, data: bytes) -> None:
        """Keep `data`, the file `kept` was read from, under the person's own folder."""
        ...

    async def remove(self, user_id: str, name: str) -> int:
        """Delete the person's kept files called `name` (any case); how many went."""
        ...

    async def remove_all(self, user_id: str) -> int:
        """Delete every file kept for the person; how many went."""
        ...
