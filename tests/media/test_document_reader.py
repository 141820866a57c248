"""Documents read into passages: each format by its content (never its name), every passage with
its file and page, cut at paragraphs, sentences and headings within the passage size."""

from __future__ import annotations

import codecs

import pytest

from bot.core.media.models import DocumentLimits, MediaFile, Passage
from bot.media.documents import DocumentFileReader
from bot.media.documents.sniff import sniff
from tests.media.document_files import docx_bytes, pdf_bytes

PLAN_PAGES = [
    "Ridgeway walk, May. We start at Overton Hill on the 3rd and walk west to east.",
    "Packing list: boots, a tent, the gas stove (two canisters) and the OS maps 157 and 170.",
    "Budget: 40 pounds a night for campsites; the pub in Ogbourne St George takes cards.",
]


def read(data: bytes, name: str, limits: DocumentLimits | None = None) -> list[Passage]:
    return DocumentFileReader(limits).read_now(MediaFile("document", data, name))


def test_a_pdf_is_read_page_by_page_and_each_passage_keeps_its_page() -> None:
    found = read(pdf_bytes(PLAN_PAGES), "plan.pdf")
    assert [(p.page, p.source) for p in found] == [(1, "plan.pdf"), (2, "plan.pdf"), (3, "plan.pdf")]
    assert [p.text for p in found] == PLAN_PAGES


def test_a_long_page_is_cut_at_sentences_and_no_passage_spans_two_pages() -> None:
    sentence = "The second day climbs past the white horse at Uffington and down to the river."
    pages = [" ".join([sentence] * 12), "Short last page with the return train times."]
    found = read(pdf_bytes(pages), "walk.pdf", DocumentLimits(passage_chars=200))
    on_first = [p for p in found if p.page == 1]
    assert len(on_first) >= 5 and all(len(p.text) <= 200 for p in found)
    # Whole sentences only, and nothing of page 1 lost or repeated.
    assert all(p.text.startswith("The second day") and p.text.endswith("river.") for p in on_first)
    assert " ".join(p.text for p in on_first) == pages[0]
    assert [p.page for p in found if "train times" in p.text] == [2]


async def test_read_runs_off_the_event_loop_and_returns_the_same() -> None:
    reader = DocumentFileReader()
    document = MediaFile("document", pdf_bytes(PLAN_PAGES), "plan.pdf")
    assert await reader.read(document) == reader.read_now(document)


def test_a_word_file_keeps_its_headings_as_lead_ins_and_its_tables() -> None:
    data = docx_bytes([
        ("Title", "Lisbon in June"),
        ("Heading 1", "Getting there"),
        ("Normal", "We fly from Bristol on the 3rd and land at 9."),
        ("Heading 1", "Where we eat"),
        ("table", "day | place\nMonday | Taberna da Rua\nTuesday | Cervejaria Ramiro"),
    ])  # fmt: skip
    found = read(data, "lisbon.docx")
    assert [p.text for p in found] == [
        "Lisbon in June: Getting there: We fly from Bristol on the 3rd and land at 9.",
        "Where we eat: day | place Monday | Taberna da Rua Tuesday | Cervejaria Ramiro",
    ]
    assert {(p.source, p.page) for p in found} == {("lisbon.docx", None)}


def test_markdown_starts_a_passage_at_each_heading() -> None:
    text = (
        "# Garden\n\n## Spring\n- sow tomatoes indoors\n- [seed list](https://example.org)\n\n"
        "## Autumn\nPlant the garlic."
    )
    found = read(text.encode(), "garden.md")
    assert [p.text for p in found] == [
        "Garden: Spring: - sow tomatoes indoors - [seed list](https://example.org)",
        "Autumn: Plant the garlic.",
    ]


@pytest.mark.parametrize(
    "encoded",
    [
        "Crème brûlée for Zoë's birthday, naïve café.".encode(),
        codecs.BOM_UTF8 + "Crème brûlée for Zoë's birthday, naïve café.".encode(),
        codecs.BOM_UTF16_LE + "Crème brûlée for Zoë's birthday, naïve café.".encode("utf-16-le"),
        "Crème brûlée for Zoë's birthday, naïve café.".encode("cp1252"),
    ],
    ids=["utf-8", "utf-8 with BOM", "utf-16", "windows-1252"],
)
def test_plain_text_is_read_in_the_encodings_people_save_it_in(encoded: bytes) -> None:
    assert [p.text for p in read(encoded, "notes.txt")] == ["Crème brûlée for Zoë's birthday, naïve café."]


def test_the_content_decides_the_format_never_the_name() -> None:
    pdf, docx = pdf_bytes(PLAN_PAGES), docx_bytes([("Normal", "The boiler code is 4471.")])
    assert sniff(pdf, "notes.txt") == "pdf" and sniff(docx, "plan.pdf") == "docx"
    assert sniff(b"# Title\n\n- one\n- two\n", "report.pdf") == "markdown"
    assert sniff(b"Just a line of text.", "photo.jpg") == "text"
    assert [(p.text, p.page) for p in read(pdf, "notes.txt")][:1] == [(PLAN_PAGES[0], 1)]
    assert [p.text for p in read(docx, "plan.pdf")] == ["The boiler code is 4471."]


def test_words_that_look_like_file_marks_stay_text() -> None:
    """A bitmap starts "BM" and an MP3's tag "ID3": a text may start so too."""
    assert sniff(b"BMW service manual, chapter 3: brakes.", "bmw.txt") == "text"
    assert sniff(b"ID3 tags explained: title, artist, album.", "id3.txt") == "text"


def test_a_page_number_alone_is_not_a_passage() -> None:
    found = read(pdf_bytes(["The tent is in the loft.", "2", "  —  "]), "where.pdf")
    assert [(p.text, p.page) for p in found] == [("The tent is in the loft.", 1)]
