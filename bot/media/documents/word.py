"""A Word (.docx) file's text through python-docx, in reading order: paragraphs and tables, a
heading as a Markdown heading, so that passages start at headings.

A .docx is a zip. Its parts are read whole into memory, so their sizes are checked first, as the
zip's directory declares them: a small file whose document.xml inflates to gigabytes (a
decompression bomb) is refused before a byte is inflated. A part that inflates past its declared
size cannot get through either: Python's zipfile stops at the declared size, and the checksum
then fails, which reads as a damaged file."""

from __future__ import annotations

import io
import logging
import zipfile
from typing import Any

from bot.core.errors import MediaError, MediaUnsupported

log = logging.getLogger(__name__)
INSTALL = "reading Word files needs Kindred's media extra: pip install 'kindred[media]'"
# Every part of the file together, inflated. A 500-page report's document.xml is about 10 MB;
# its images are parts too, so this is kept well above what text alone needs.
MAX_UNZIPPED_BYTES = 128 * 2**20
# A real .docx has tens of parts; a zip of thousands is built to make reading slow.
MAX_PARTS = 2000


def docx_text(data: bytes, name: str) -> str:
    """The text, paragraphs apart by blank lines, headings as `# …`. Raises MediaError for a
    damaged file or one whose parts inflate past the limits (nothing is inflated then)."""
    try:
        import docx
    except ImportError:
        raise MediaUnsupported(INSTALL) from None
    _check_sizes(data, name)
    try:
        document = docx.Document(io.BytesIO(data))
        blocks = [_block(item) for item in document.iter_inner_content()]
    # python-docx and lxml raise their own errors and plain KeyErrors on a broken package.
    except Exception as exc:
        log.info("unreadable .docx (%s): %s", type(exc).__name__, str(exc)[:200])
        raise MediaError(f"{name} is a damaged Word file; I couldn't read it.") from None
    return "\n\n".join(block for block in blocks if block)


def _check_sizes(data: bytes, name: str) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        raise MediaError(f"{name} is a damaged Word file; I couldn't open it.") from None
    inflated = sum(part.file_size for part in parts)
    if len(parts) > MAX_PARTS or inflated > MAX_UNZIPPED_BYTES:
        raise MediaError(
            f"{name} unpacks to {inflated / 2**20:,.0f} MB in {len(parts):,} parts, more than a "
            f"Word file I read ({MAX_UNZIPPED_BYTES // 2**20} MB, {MAX_PARTS:,} parts); I didn't open it."
        )


def _block(item: Any) -> str:
    """One paragraph (a heading as `# …`) or one table, a row a paragraph, its cells apart by `|`."""
    if hasattr(item, "rows"):
        rows = [" | ".join(cell.text.strip() for cell in row.cells) for row in item.rows]
        return "\n\n".join(row for row in rows if row.strip(" |"))
    text = str(item.text).strip()
    style = getattr(getattr(item, "style", None), "name", "") or ""
    if text and (style.startswith("Heading") or style == "Title"):
        return f"# {text}"
    return text
