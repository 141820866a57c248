"""`kindred memory add-file`: a document kept as if the person had sent it, through the real CLI
(`main`), the real embedder and each store; `kindred memory search --json` finds it afterwards
with its file and page. A refused file stores nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.core.media.models import DocumentLimits
from bot.wiring.settings import DocumentSettings
from tests.media.document_files import docx_bytes, encrypted_pdf, pdf_bytes

pytestmark = pytest.mark.usefixtures("kindred_env")

PAGES = [
    "Allotment plan for spring. Plot 14 is ours from March; the key is with Mrs Okafor at number 9.",
    "Sowing: broad beans in February, tomatoes indoors in March, courgettes outside after the frosts.",
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_pdf_is_stored_printed_and_then_found_by_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "allotment.pdf"
    path.write_bytes(pdf_bytes(PAGES))
    code, out, err = run(capsys, "memory", "add-file", "--user", "ann", "--json", str(path))
    assert code == 0, err
    stored = json.loads(out)
    assert (stored["user"], stored["file"], stored["passages"], stored["pages"]) == (
        "ann",
        "allotment.pdf",
        2,
        [1, 2],
    )
    assert stored["already_stored"] is False
    assert [(m["kind"], m["meta"]["page"], m["text"]) for m in stored["memories"]] == [
        ("document", 1, PAGES[0]),
        ("document", 2, PAGES[1]),
    ]

    code, out, _ = run(
        capsys, "memory", "search", "--user", "ann", "--k", "1", "--json", "when do I sow tomatoes?"
    )
    [found] = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and found["id"] == stored["memories"][1]["id"] and found["text"] == PAGES[1]
    assert {key: found["meta"][key] for key in ("source", "file", "page")} == {
        "source": "document",
        "file": "allotment.pdf",
        "page": 2,
    }

    # The same file again stores nothing more.
    code, out, _ = run(capsys, "memory", "add-file", "--user", "ann", str(path))
    assert code == 0 and out.startswith("allotment.pdf is already kept for ann (2 passages)")
    code, out, _ = run(capsys, "memory", "list", "--user", "ann", "--json")
    assert len(out.splitlines()) == 2


def test_the_plain_output_says_what_was_stored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notes.pdf"  # a Word file, whatever its name says
    path.write_bytes(docx_bytes([("Heading 1", "Boiler"), ("Normal", "The boiler code is 4471.")]))
    code, out, _ = run(capsys, "memory", "add-file", "--user", "bob", str(path))
    lines = out.splitlines()
    assert code == 0 and lines[0] == "stored notes.pdf for bob: 1 passage, 32 characters"
    assert lines[1].endswith(": Boiler: The boiler code is 4471.") and lines[1].startswith("  #")
    code, out, _ = run(capsys, "memory", "list", "--user", "bob")
    assert code == 0 and out.rstrip().endswith(" from the file notes.pdf: Boiler: The boiler code is 4471.")


@pytest.mark.parametrize(
    ("content", "name", "says"),
    [
        # Audio and images go to their backends (test_memory_add_media_cli.py): here none is set.
        (b"OggS\x00\x02" + bytes(100), "voice.ogg", "audio files are heard through a speech backend"),
        (b"\x89PNG\r\n\x1a\n" + bytes(100), "plan.pdf", "images are seen through a vision model"),
        (encrypted_pdf(PAGES, "pw"), "locked.pdf", "locked.pdf is protected by a password"),
        (b"", "empty.txt", "empty.txt is empty"),
    ],
)
def test_what_cannot_be_kept_is_one_line_and_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, name: str, says: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = run(capsys, "memory", "add-file", "--user", "ann", "--json", str(path))
    assert code == 1 and out == "" and err.startswith(f"kindred: {says}") and err.count("\n") == 1
    assert run(capsys, "memory", "list", "--user", "ann", "--json")[1] == ""


def test_a_file_over_the_limit_is_refused_before_it_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KINDRED_DOCUMENT_MAX_BYTES", "1000")
    path = tmp_path / "big.txt"
    path.write_bytes(b"a few words. " * 100)
    code, _, err = run(capsys, "memory", "add-file", "--user", "ann", str(path))
    assert code == 1 and "big.txt is 0.0 MB; I read files of up to 0 MB" in err
    code, _, err = run(capsys, "memory", "add-file", "--user", "ann", str(tmp_path / "missing.pdf"))
    assert code == 1 and "cannot read" in err


def test_a_long_file_is_kept_by_a_job_and_waited_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over KINDRED_DOCUMENT_JOB_PAGES the job keeps it (on threads here: no REDIS_URL); the
    command still returns only once it is searchable, and the spooled copy is gone."""
    monkeypatch.setenv("KINDRED_DOCUMENT_JOB_PAGES", "1")
    path = tmp_path / "allotment.pdf"
    path.write_bytes(pdf_bytes(PAGES))
    code, out, err = run(capsys, "memory", "add-file", "--user", "ann", "--json", str(path))
    assert code == 0 and "allotment.pdf is long: a job keeps it" in err, err
    stored = json.loads(out)
    assert stored["passages"] == 2 and [m["meta"]["page"] for m in stored["memories"]] == [1, 2]
    code, out, _ = run(capsys, "memory", "search", "--user", "ann", "--k", "1", "--json", "who has the key?")
    assert json.loads(out)["text"] == PAGES[0]
    spool = tmp_path / "data" / "media" / "spool"
    assert spool.is_dir() and list(spool.iterdir()) == []


def test_the_settings_limits_are_the_cores_by_default() -> None:
    assert DocumentSettings().limits() == DocumentLimits()
