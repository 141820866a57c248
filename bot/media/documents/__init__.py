"""Documents people share (PDF, .docx, plain text, Markdown), read into passages."""

from bot.media.documents.reader import DocumentFileReader

__all__ = ["DocumentFileReader"]
