"""A shared document kept as the person's document memories (core/media/documents.py), on SQLite
and on PostgreSQL + pgvector, read by the real reader (bot/media/documents) from files built in
the test: searchable at once with its file and page, kept once, refused whole, listed, exported
and forgotten like any memory."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from bot.core.errors import MediaError
from bot.core.media.documents import file_label, keep_document
from bot.core.media.models import DocumentLimits, KeptDocument, MediaFile
from bot.core.memory.controls import Controls
from bot.core.memory.jsonl_format import parse_lines
from bot.core.memory.operations import import_items
from bot.core.memory.recall import hybrid_search, memory_line
from bot.core.models import DOCUMENT
from bot.core.store import Store
from bot.inference.embedders.sentence import SentenceTransformerEmbedder
from bot.media.documents import DocumentFileReader
from tests.media.document_files import docx_bomb, encrypted_pdf, pdf_bytes

ANN = "telegram:1"
NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
PLAN = [
    "Ridgeway walk in May. We start at Overton Hill on the 3rd and walk west to east.",
    "Packing list: walking boots, a two-person tent, the gas stove with two canisters.",
    "Budget: forty pounds a night for campsites; the pub in Ogbourne takes cards.",
]


async def keep(
    store: Store, embedder: SentenceTransformerEmbedder, data: bytes, name: str, **limits: int
) -> KeptDocument:
    document_limits = DocumentLimits(**limits)
    return await keep_document(
        store.memories, embedder, DocumentFileReader(document_limits), ANN,
        MediaFile("document", data, name), limits=document_limits, now=NOW,
    )  # fmt: skip


async def test_a_pdf_is_searchable_at_once_with_its_file_and_page(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    kept = await keep(any_store, minilm, pdf_bytes(PLAN), "plan.pdf")
    assert (kept.passages, kept.pages, len(kept.memory_ids), kept.already) == (3, (1, 2, 3), 3, False)
    assert kept.summary().startswith("I keep plan.pdf: 3 passages from pages 1–3, 237 characters.")

    question = "which stove am I bringing on the walk?"
    [vector] = await minilm.embed([question])
    found = await hybrid_search(any_store, ANN, question, vector, 3, now=NOW)
    best = found[0].memory
    assert best.text == PLAN[1] and best.kind == DOCUMENT and best.speaker is None
    assert {key: best.meta[key] for key in ("source", "file", "page", "passage", "passages")} == {
        "source": "document", "file": "plan.pdf", "page": 2, "passage": 2, "passages": 3,
    }  # fmt: skip
    assert memory_line(best).startswith('- 2026-09-01, from their file "plan.pdf", page 2: "Packing list')


async def test_the_same_file_sent_again_is_kept_once(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    first = await keep(any_store, minilm, pdf_bytes(PLAN), "plan.pdf")
    again = await keep(any_store, minilm, pdf_bytes(PLAN), "copy of plan.pdf")
    assert again.already and again.memory_ids == () and "already keep" in again.summary()
    assert await any_store.memories.memory_count(ANN) == len(first.memory_ids) == 3


HOSTILE = {
    "empty": (b"", "empty.txt"),
    "garbage": (bytes(range(256)) * 64, "report.pdf"),
    "an image named as a PDF": (b"\x89PNG\r\n\x1a\n" + bytes(200), "plan.pdf"),
    "encrypted": (encrypted_pdf(PLAN, "s3cret"), "locked.pdf"),
    "malformed": (pdf_bytes(PLAN)[:300], "broken.pdf"),
    "2,000 pages": (pdf_bytes([f"Minutes, page {n}." for n in range(2000)]), "minutes.pdf"),
    "a docx bomb": (docx_bomb(140), "letter.docx"),
    "no text": (pdf_bytes(["", ""]), "scan.pdf"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
async def test_a_refused_file_stores_nothing(
    any_store: Store, minilm: SentenceTransformerEmbedder, case: str
) -> None:
    data, name = HOSTILE[case]
    with pytest.raises(MediaError) as refused:
        await keep(any_store, minilm, data, name)
    assert name in str(refused.value) and "\n" not in str(refused.value)
    assert await any_store.memories.memory_count(ANN) == 0


async def test_past_the_passages_a_person_keeps_the_whole_file_is_refused(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    await keep(any_store, minilm, pdf_bytes(PLAN), "plan.pdf", max_passages_per_person=4)
    with pytest.raises(
        MediaError, match=r"past the 4 passages I keep from files for one person \(3 kept now\)"
    ):
        await keep(
            any_store, minilm, pdf_bytes(["Day one.", "Day two."]), "days.pdf", max_passages_per_person=4
        )
    assert await any_store.memories.memory_count(ANN) == 3


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("C:\\Users\\ann\\Desktop\\plan.pdf", "plan.pdf"),
        ("../../etc/passwd", "passwd"),
        ("evil\u202efdp.exe", "evilfdp.exe"),
        ("line\nbreak\t.txt", "line break .txt"),
        ("a" * 300 + ".pdf", "a" * 115 + "….pdf"),  # MAX_NAME_CHARS, the extension kept
    ],
)
def test_a_files_name_is_shown_without_its_folders_or_hidden_characters(sent: str, shown: str) -> None:
    assert file_label(sent) == shown


async def test_a_files_passages_are_listed_exported_and_forgotten_by_its_name(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    kept = await keep(any_store, minilm, pdf_bytes(PLAN), "plan.pdf")
    controls = Controls(any_store, "You are Kindred.", clock=lambda: NOW)
    listed = (await controls.memories_page(ANN, 1)).render()
    assert f"#{kept.memory_ids[2]} · document · just now · from your file plan.pdf, page 3: Budget" in listed
    exported = [json.loads(line) for line in (await controls.export_jsonl(ANN)).splitlines()]
    assert [(e["kind"], e["meta"]["file"], e["meta"]["page"]) for e in exported] == [
        (DOCUMENT, "plan.pdf", 1), (DOCUMENT, "plan.pdf", 2), (DOCUMENT, "plan.pdf", 3),
    ]  # fmt: skip

    # An export imports back as documents, for someone else, with their source.
    parsed = parse_lines((await controls.export_jsonl(ANN)).splitlines())
    await import_items(any_store.memories, minilm, "bob", parsed.items)
    imported = await any_store.memories.list_memories("bob", 10)
    assert [(m.kind, m.meta["file"], m.meta["page"]) for m in imported] == [
        (e["kind"], e["meta"]["file"], e["meta"]["page"]) for e in exported
    ]

    assert "I keep no file called notes.pdf" in await controls.forget_one(ANN, "file notes.pdf")
    answer = await controls.forget_one(ANN, "file PLAN.pdf")
    assert answer == "Forgotten: PLAN.pdf, all 3 passages of it. None will come up again."
    assert await any_store.memories.memory_count(ANN) == 0
