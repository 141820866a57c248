"""The media room's boundaries: a speech-to-text backend, a vision model, and a reader of
documents. Each raises `MediaError` (bot/core/errors.py) with a line a person may read, never a
server's raw answer."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from bot.core.media.models import MediaFile, Passage, Seen, Transcript


class SpeechToText(Protocol):
    """Turns a voice note or an audio file into text (an OpenAI-compatible server, or a local model)."""

    model_name: str

    async def transcribe(self, audio: MediaFile) -> Transcript:
        """What was said. Raises MediaError for audio that cannot be decoded or a backend that
        failed; an empty `text` for silence."""
        ...


class SpeechModel(Protocol):
    """A speech model in this process (Whisper): 16 kHz mono samples in, text out. Blocking, and
    CPU- or GPU-bound: the caller runs it on a thread."""

    model_name: str

    def recognize(self, samples: npt.NDArray[np.float32]) -> Transcript:
        """What was said in `samples` (floats in [-1, 1)). Raises InferenceError when the model
        cannot be loaded or fails."""
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
