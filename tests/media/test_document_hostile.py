"""Files built to hurt, or merely broken: each is refused with one line that says why, quickly,
and reads nothing it was not meant to (storing nothing is tested with the store, in
tests/core/test_documents.py)."""

from __future__ import annotations

import random
import time

import pytest

from bot.core.errors import MediaError, MediaUnsupported
from bot.core.media.models import DocumentLimits, MediaFile
from bot.media.documents import DocumentFileReader
from bot.media.documents.word import MAX_UNZIPPED_BYTES
from tests.media.document_files import docx_bomb, docx_bytes, encrypted_pdf, pdf_bytes, with_lying_sizes


def refusal(data: bytes, name: str, limits: DocumentLimits | None = None) -> MediaError:
    with pytest.raises(MediaError) as refused:
        DocumentFileReader(limits).read_now(MediaFile("document", data, name))
    message = str(refused.value)
    assert "\n" not in message and name in message, message
    return refused.value


def test_an_empty_file() -> None:
    assert "empty" in str(refusal(b"", "notes.txt"))


def test_binary_garbage_named_as_a_document() -> None:
    garbage = random.Random(33).randbytes(64 * 1024)
    for name in ("report.pdf", "notes.txt", "letter.docx"):
        assert "binary" in str(refusal(garbage, name))


def test_an_image_or_audio_named_as_a_document_is_named_for_what_it_is() -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(64)
    ogg = b"OggS\x00\x02" + bytes(64)
    image, audio = refusal(png, "plan.pdf"), refusal(ogg, "notes.txt")
    assert isinstance(image, MediaUnsupported) and "is an image" in str(image)
    assert isinstance(audio, MediaUnsupported) and "is audio" in str(audio) and "yet" in str(audio)


def test_a_zip_that_is_no_word_file() -> None:
    xlsx_like = docx_bytes([("Normal", "x")]).replace(b"word/document.xml", b"xl/workbook.xml\x00\x00")
    assert "spreadsheet" in str(refusal(xlsx_like, "budget.docx"))


def test_a_pdf_locked_with_a_password() -> None:
    assert "password" in str(refusal(encrypted_pdf(["The safe code is 1234."], "s3cret"), "safe.pdf"))


@pytest.mark.parametrize(
    "broken",
    [
        b"%PDF-1.7\n" + random.Random(1).randbytes(4096),
        pdf_bytes(["page one"])[:200],
        pdf_bytes(["page one"]).replace(b"/Root 1 0 R", b"/Root 9 0 R"),
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF",
        pdf_bytes(["page one", "page two"])[:-300],
    ],
    ids=["garbage after the header", "cut short", "a root that is not there", "no page tree", "no xref"],
)
def test_a_damaged_pdf(broken: bytes) -> None:
    assert "is a damaged PDF" in str(refusal(broken, "broken.pdf"))


@pytest.mark.parametrize("declared", [None, 3], ids=["honest page count", "a page count that lies"])
def test_a_pdf_of_2000_pages_is_refused_in_well_under_a_second(declared: int | None) -> None:
    data = pdf_bytes([f"Page {n} of the minutes." for n in range(2000)], declared_count=declared)
    started = time.monotonic()
    assert "2,000 pages" in str(refusal(data, "minutes.pdf"))
    assert time.monotonic() - started < 2.0  # parsing every page takes far longer than this


def test_reading_stops_at_the_time_limit_between_pages() -> None:
    data = pdf_bytes([f"Page {n}: the minutes of the meeting." for n in range(300)])
    refused = refusal(data, "minutes.pdf", DocumentLimits(max_seconds=0.0))
    assert "took too long" in str(refused)


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed() -> None:
    data = pdf_bytes(["a page"] * 10)
    assert "I read files of up to" in str(refusal(data, "big.pdf", DocumentLimits(max_bytes=len(data) - 1)))


def test_more_passages_than_a_person_keeps() -> None:
    text = "\n\n".join(f"Paragraph {n} of a long diary." for n in range(50)).encode()
    limits = DocumentLimits(passage_chars=40, max_passages_per_person=20)
    assert "more text than I keep" in str(refusal(text, "diary.txt", limits))


def test_a_docx_decompression_bomb_is_refused_before_anything_is_inflated() -> None:
    bomb = docx_bomb(MAX_UNZIPPED_BYTES // 2**20 + 20)
    assert len(bomb) < 2**20  # small on the wire
    started = time.monotonic()
    assert "unpacks to" in str(refusal(bomb, "letter.docx"))
    assert time.monotonic() - started < 0.5


def test_a_docx_whose_sizes_lie_is_read_no_further_than_declared() -> None:
    """The zip says document.xml is 100 bytes; its stream inflates to 5 MB. zipfile stops at the
    declared size and the checksum fails: a damaged file, and 100 bytes read."""
    assert "damaged Word file" in str(refusal(with_lying_sizes(docx_bomb(5)), "letter.docx"))


def test_a_pdf_with_no_text_says_so() -> None:
    assert "no text" in str(refusal(pdf_bytes(["", ""]), "scan.pdf"))
