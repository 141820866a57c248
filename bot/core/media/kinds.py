"""Which part reads a file that arrives with no word of its kind (the terminal's `/file PATH`):
the document reader or the speech backend. A platform says which it sent (a Telegram document, a
voice note); a path on disk does not, so its first bytes decide. Each part then checks the whole
content again and names what it cannot read."""

from __future__ import annotations

# PDF readers accept the header anywhere in the first kilobyte.
PDF_WITHIN = 1024
# How much of the start is decoded to tell text from binary.
TEXT_SAMPLE = 4096


def looks_like_document(data: bytes) -> bool:
    """A PDF, a zip (a .docx; the reader names other zips) or UTF-8 text; an empty file too (the
    document path answers that it is empty). Anything else is for the speech backend."""
    if not data or b"%PDF-" in data[: PDF_WITHIN + 5] or data.startswith(b"PK\x03\x04"):
        return True
    sample = data[:TEXT_SAMPLE]
    if b"\x00" in sample:
        return False
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A multi-byte character cut by the sample's end is still text.
        return exc.start >= len(sample) - 3 and len(data) > TEXT_SAMPLE
    return True
