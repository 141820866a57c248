"""A PDF's text, page by page, through pypdf. Its page count is read before any page is, so a
file of thousands of pages is refused at once; a password, a damaged file or one that takes too
long is a MediaError whose line says which. pypdf bounds each stream it inflates itself
(75 MB), and the whole file is bounded by `DocumentLimits.max_bytes` before it gets here."""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Iterator
from typing import Any

from bot.core.errors import MediaError, MediaUnsupported
from bot.core.media.models import DocumentLimits

log = logging.getLogger(__name__)
INSTALL = "reading PDF files needs Kindred's media extra: pip install 'kindred[media]'"


def pdf_pages(data: bytes, name: str, limits: DocumentLimits, deadline: float) -> Iterator[tuple[int, str]]:
    """Each page's number (from 1) and text, in order. Raises MediaError before the first page for
    an encrypted, damaged or too long file, and between pages once `deadline` (monotonic) passed."""
    reader = _opened(data, name)
    count = _page_count(reader, name, limits)
    for index in range(count):
        if time.monotonic() > deadline:
            raise MediaError(
                f"{name} took too long to read (past page {index} of {count}); "
                "try sending the pages you need as a smaller file."
            )
        yield index + 1, _page_text(reader, index, name)


def declared_pages(data: bytes) -> int | None:
    """The page count a PDF declares (its page tree's /Count), read without reading any page;
    None when it declares none or cannot be opened (reading it will say why)."""
    try:
        from pypdf import PdfReader

        reader: Any = PdfReader(io.BytesIO(data), strict=False)
        declared = _declared_count(reader)
    except Exception:  # any broken file: reading it later refuses it with the reason
        return None
    return declared if isinstance(declared, int) and declared >= 0 else None


def _opened(data: bytes, name: str) -> Any:
    try:
        from pypdf import PdfReader
    except ImportError:
        raise MediaUnsupported(INSTALL) from None
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        locked = reader.is_encrypted
    # pypdf's parser raises nearly any error on a broken file (IndexError, KeyError, struct's,
    # its own PdfReadError): every one of them means the same to the person who sent it.
    except Exception as exc:
        raise _damaged(name, exc) from None
    if locked and not _opens_without_password(reader):
        raise MediaError(f"{name} is protected by a password. Send a copy without one and I'll read it.")
    return reader


def _opens_without_password(reader: Any) -> bool:
    """Many PDFs are encrypted with an empty password, only to restrict printing: those open."""
    try:
        return bool(reader.decrypt(""))
    except Exception as exc:  # AES needs the cryptography package; a broken encryption dictionary
        log.info("an encrypted PDF did not open without a password: %s", type(exc).__name__)
        return False


def _page_count(reader: Any, name: str, limits: DocumentLimits) -> int:
    # /Count is what the file declares: read first, so an honest long file costs nothing to refuse.
    # The page tree is then walked for the real count, which a lying /Count cannot hide.
    try:
        declared = _declared_count(reader)
        if isinstance(declared, int) and declared > limits.max_pages:
            raise _too_long(name, declared, limits)
        count = len(reader.pages)
    except MediaError:
        raise
    except Exception as exc:
        raise _damaged(name, exc) from None
    if count > limits.max_pages:
        raise _too_long(name, count, limits)
    if count == 0:
        raise MediaError(f"{name} has no pages.")
    return count


def _declared_count(reader: Any) -> object:
    return reader.trailer["/Root"]["/Pages"].get("/Count")


def _page_text(reader: Any, index: int, name: str) -> str:
    try:
        return str(reader.pages[index].extract_text() or "")
    except Exception as exc:
        raise _damaged(name, exc, page=index + 1) from None


def _too_long(name: str, pages: int, limits: DocumentLimits) -> MediaError:
    return MediaError(
        f"{name} has {pages:,} pages; I read files of up to {limits.max_pages:,}. "
        "Send the part you want me to keep as a smaller file."
    )


def _damaged(name: str, exc: Exception, page: int | None = None) -> MediaError:
    log.info("unreadable PDF (%s): %s", type(exc).__name__, str(exc)[:200])
    where = f" (page {page})" if page is not None else ""
    return MediaError(f"{name} is a damaged PDF{where}; I couldn't read it.")
