"""Kindred's document reader (bot/core/media/ports.py: DocumentReader): PDF, .docx, plain text and
Markdown, told apart by their bytes (sniff.py), read within `DocumentLimits`, and cut into
passages that keep their file and page."""

from __future__ import annotations

import asyncio
import time

from bot.core.errors import MediaError
from bot.core.media.models import DocumentLimits, MediaFile, Passage
from bot.media.documents.passages import passages
from bot.media.documents.pdf import declared_pages, pdf_pages
from bot.media.documents.sniff import PDF_HEADER_WITHIN, Format, decode_text, sniff
from bot.media.documents.word import docx_text

UNNAMED = "your file"


class DocumentFileReader:
    """Reads a document off the event loop (parsing is CPU work), within `limits`."""

    def __init__(self, limits: DocumentLimits | None = None) -> None:
        self.limits = limits or DocumentLimits()

    def is_long(self, document: MediaFile) -> bool:
        """Whether `document` is over `limits.job_bytes`, or a PDF of more than `limits.job_pages`
        pages (as it declares them): a file to keep in a job. Reads no page."""
        if document.size > self.limits.job_bytes:
            return True
        if b"%PDF-" not in document.data[: PDF_HEADER_WITHIN + 5]:
            return False
        pages = declared_pages(document.data)
        return pages is not None and pages > self.limits.job_pages

    async def read(self, document: MediaFile) -> list[Passage]:
        return await asyncio.to_thread(self.read_now, document)

    def read_now(self, document: MediaFile) -> list[Passage]:
        """What `read` returns, in this thread."""
        name = document.name or UNNAMED
        limits = self.limits
        if document.size > limits.max_bytes:
            raise MediaError(
                f"{name} is {document.size / 2**20:,.1f} MB; I read files of up to "
                f"{limits.max_bytes / 2**20:,.0f} MB."
            )
        found = self._passages(document.data, name, sniff(document.data, name))
        if not found:
            raise MediaError(
                f"I found no text in {name}. A scanned PDF holds pictures of its pages, which I "
                "can't read yet."
            )
        return found

    def _passages(self, data: bytes, name: str, kind: Format) -> list[Passage]:
        limits = self.limits
        found: list[Passage] = []
        if kind == "pdf":
            deadline = time.monotonic() + limits.max_seconds
            for page, text in pdf_pages(data, name, limits, deadline):
                found += [Passage(one, name, page) for one in passages(text, limits.passage_chars)]
                self._check_count(found, name)
            return found
        text = docx_text(data, name) if kind == "docx" else decode_text(data) or ""
        headings = kind in ("docx", "markdown")
        found = [Passage(one, name) for one in passages(text, limits.passage_chars, headings=headings)]
        self._check_count(found, name)
        return found

    def _check_count(self, found: list[Passage], name: str) -> None:
        if len(found) > self.limits.max_passages_per_person:
            raise MediaError(
                f"{name} holds more text than I keep from files for one person "
                f"({self.limits.max_passages_per_person:,} passages); send the part you need."
            )
