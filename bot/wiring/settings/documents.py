"""The documents section: what one shared file may be, and how much of them a person keeps."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings

from bot.core.media.models import DocumentLimits
from bot.core.memory.recall import MAX_MEMORY_CHARS
from bot.wiring.settings.common import section_config

_LIMITS = DocumentLimits()


class DocumentSettings(BaseSettings):
    """PDF, Word (.docx), plain text and Markdown files (KINDRED_DOCUMENT_*): past a limit a file
    is refused whole, with one line that says which limit."""

    model_config = section_config("KINDRED_DOCUMENT_")

    max_bytes: int = Field(default=_LIMITS.max_bytes, ge=1)
    max_pages: int = Field(default=_LIMITS.max_pages, ge=1)
    # A passage is one memory; one line of the prompt's memory block shows at most MAX_MEMORY_CHARS.
    passage_chars: int = Field(default=_LIMITS.passage_chars, ge=100, le=MAX_MEMORY_CHARS)
    max_passages_per_person: int = Field(default=_LIMITS.max_passages_per_person, ge=1)
    max_seconds: float = Field(default=_LIMITS.max_seconds, gt=0)
    # Files over either are kept by a job (Celery workers with REDIS_URL, else threads here).
    job_bytes: int = Field(default=_LIMITS.job_bytes, ge=0)
    job_pages: int = Field(default=_LIMITS.job_pages, ge=0)

    def limits(self) -> DocumentLimits:
        # The fields are DocumentLimits' own, by name: the core owns the defaults.
        return DocumentLimits(**self.model_dump())
