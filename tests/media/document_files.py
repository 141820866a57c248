"""Documents built in the tests, nothing downloaded: PDFs written byte by byte (text pages, as a
PDF writer lays them out) and encrypted by pypdf, Word files written by python-docx, and the
hostile ones (a decompression bomb, a zip whose sizes lie)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence

from docx import Document
from pypdf import PdfReader, PdfWriter

LINE_CHARS = 90


def _escaped(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _lines(text: str) -> list[str]:
    """Lines of at most LINE_CHARS, broken at spaces, as a page shows them."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        current = ""
        for word in paragraph.split():
            if current and len(current) + 1 + len(word) > LINE_CHARS:
                lines.append(current)
                current = word
            else:
                current = f"{current} {word}".strip()
        lines.append(current)
    return lines


def pdf_bytes(pages: Sequence[str], *, declared_count: int | None = None) -> bytes:
    """A PDF with one page per text (Helvetica, Windows-1252 text). `declared_count`: the page tree's
    /Count, when it should lie."""
    count = len(pages) if declared_count is None else declared_count
    kids = " ".join(f"{4 + 2 * index} 0 R" for index in range(len(pages)))
    bodies = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for index, text in enumerate(pages):
        shown = " ".join(f"({_escaped(line)}) Tj T*" for line in _lines(text))
        stream = f"BT /F1 11 Tf 14 TL 72 760 Td {shown} ET".encode("cp1252")
        bodies.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (5 + 2 * index)
        )
        bodies.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(bodies, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(bodies) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(bodies) + 1, xref)
    return bytes(out)


def encrypted_pdf(pages: Sequence[str], password: str) -> bytes:
    """The same PDF, locked with `password` (RC4: pypdf writes it without extra packages)."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(pages))))
    writer.encrypt(user_password=password, owner_password="owner-" + password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(blocks: Sequence[tuple[str, str]]) -> bytes:
    """A Word file of (style, text) blocks: "Title", "Heading 1", "Normal", or "table" (rows apart
    by newlines, cells by `|`)."""
    document = Document()
    for style, text in blocks:
        if style == "table":
            rows = [row.split("|") for row in text.split("\n")]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for cells, row in zip(table.rows, rows, strict=True):
                for cell, value in zip(cells.cells, row, strict=True):
                    cell.text = value.strip()
        elif style.startswith("Heading"):
            document.add_heading(text, level=int(style.split()[-1]))
        else:
            document.add_paragraph(text, style=None if style == "Normal" else style)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def docx_bomb(inflated_mib: int) -> bytes:
    """A real .docx whose document.xml is padded with whitespace to `inflated_mib` MiB: a few
    hundred kilobytes on the wire."""
    with zipfile.ZipFile(io.BytesIO(docx_bytes([("Normal", "a small letter")]))) as source:
        parts = {info.filename: source.read(info) for info in source.infolist()}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bomb:
        for name, content in parts.items():
            if name != "word/document.xml":
                bomb.writestr(name, content)
        with bomb.open("word/document.xml", "w") as xml:
            xml.write(content := parts["word/document.xml"])
            chunk = b" " * 2**20
            for _ in range(inflated_mib):
                xml.write(chunk)
    return out.getvalue()


def with_lying_sizes(docx: bytes) -> bytes:
    """`docx` with its document.xml's declared inflated size made 100 bytes, in both the local
    header and the central directory: more comes out of the stream than the zip admits."""
    data = bytearray(docx)
    with zipfile.ZipFile(io.BytesIO(docx)) as archive:
        info = archive.getinfo("word/document.xml")
    header = info.header_offset
    data[header + 22 : header + 26] = (100).to_bytes(4, "little")
    name = b"word/document.xml"
    central = data.rfind(b"PK\x01\x02", 0, data.rfind(name))
    data[central + 24 : central + 28] = (100).to_bytes(4, "little")
    return bytes(data)
