"""What a file is, from its bytes alone. A name or a MIME type is what the sender claims: a file
called plan.pdf may be a photo, and notes.txt a PDF. Only PDF, .docx, plain text and Markdown are
read; anything else is named, so that the answer says what was sent."""

from __future__ import annotations

import codecs
import io
import itertools
import re
import zipfile
from typing import Literal

from bot.core.errors import MediaError, MediaUnsupported

Format = Literal["pdf", "docx", "text", "markdown"]

READABLE = "PDF, Word (.docx), plain text or Markdown"
# Read by the speech and vision parts of the media room, not by this reader.
NOT_YET = {"audio": "audio files", "an image": "images"}
# PDF readers accept the header anywhere in the first kilobyte (some writers put junk before it).
PDF_HEADER_WITHIN = 1024
# A text file may hold a few stray control characters (a form feed, an escape); past this share
# it is binary, whatever it decodes as.
MAX_CONTROL_SHARE = 0.005
# How much of a text is looked at for Markdown's marks.
MARKDOWN_SAMPLE_CHARS = 20_000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_MARKDOWN = re.compile(
    r"^(?:#{1,6}\s+\S|```|~~~|\s{0,3}[-*+]\s+\S|\s{0,3}\d+\.\s+\S|>\s)|\[[^\]\n]+\]\([^)\s]+\)",
    re.MULTILINE,
)
_IMAGES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"II*\x00", b"MM\x00*")
_AUDIO = (b"OggS", b"fLaC", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2", b"#!AMR", b"\x1aE\xdf\xa3")
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Word 97–2003 .doc, old Excel and PowerPoint
_ZIP = (b"PK\x03\x04", b"PK\x05\x06")


def sniff(data: bytes, name: str) -> Format:
    """The document format of `data`. Raises MediaUnsupported for audio and images (read by other
    parts, not here), MediaError for anything else that is no document."""
    if not data:
        raise MediaError(f"{name} is empty: there is nothing in it to read.")
    if b"%PDF-" in data[: PDF_HEADER_WITHIN + 5]:
        return "pdf"
    if data.startswith(_ZIP):
        return _zipped(data, name)
    other = _other_kind(data)
    if other in NOT_YET:
        raise MediaUnsupported(
            f"{name} is {other}: I can't take {NOT_YET[other]} here yet, only documents ({READABLE})."
        )
    if other is not None:
        raise MediaError(f"{name} is {other}, not a document. I can read {READABLE} files.")
    text = decode_text(data)
    if text is None:
        raise MediaError(f"{name} is not a document I can read (it is binary data). I can read {READABLE}.")
    return "markdown" if _looks_like_markdown(text) else "text"


def _zipped(data: bytes, name: str) -> Format:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, ValueError, OSError):
        raise MediaError(f"{name} is a damaged zip file; I couldn't open it.") from None
    if "word/document.xml" in names:
        return "docx"
    what = "a zip archive"
    if any(part.startswith("xl/") for part in names):
        what = "a spreadsheet"
    elif any(part.startswith("ppt/") for part in names):
        what = "a presentation"
    elif "mimetype" in names or "content.xml" in names:
        what = "an OpenDocument file"
    raise MediaError(f"{name} is {what}, not a document I can read. I can read {READABLE}.")


def _other_kind(data: bytes) -> str | None:
    head = data[:16]
    # A bitmap's and an ID3 tag's marks are short: the bytes after them must fit too, or a text
    # that starts "BMW …" or "ID3 tags …" would be taken for one.
    bitmap = head[:2] == b"BM" and head[6:10] == b"\x00\x00\x00\x00"
    if head.startswith(_IMAGES) or bitmap or (head[:4] == b"RIFF" and head[8:12] == b"WEBP"):
        return "an image"
    id3 = head[:3] == b"ID3" and head[3:4] in (b"\x02", b"\x03", b"\x04")
    if head.startswith(_AUDIO) or id3 or (head[:4] == b"RIFF" and head[8:12] == b"WAVE"):
        return "audio"
    if head[4:8] == b"ftyp":  # MP4, M4A, MOV, HEIC
        return "audio" if head[8:11] == b"M4A" else "a video or an image"
    if head.startswith(_OLE):
        return "an old Office file (.doc, .xls or .ppt); save it as .docx or PDF"
    return None


def decode_text(data: bytes) -> str | None:
    """`data` as text (UTF-8, UTF-16 with its byte-order mark, or Windows-1252), or None when it
    is binary: it does not decode, or holds a NUL or too many control characters."""
    for bom, encoding in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                          (codecs.BOM_UTF16_BE, "utf-16-be")):  # fmt: skip
        if data.startswith(bom):
            return _plain(data[len(bom) :], encoding)
    if b"\x00" in data:
        return None
    return _plain(data, "utf-8") or _plain(data, "cp1252")


def _plain(data: bytes, encoding: str) -> str | None:
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        return None
    if "\x00" in text or len(_CONTROL.findall(text)) > MAX_CONTROL_SHARE * max(len(text), 1):
        return None
    return text


def _looks_like_markdown(text: str) -> bool:
    """Two or more of Markdown's marks (a heading, a list, a fence, a link, a quote)."""
    marks = _MARKDOWN.finditer(text[:MARKDOWN_SAMPLE_CHARS])
    return len(list(itertools.islice(marks, 2))) == 2
