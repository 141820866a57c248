"""Smoke test of bench/media.py: one note of each kind, a two-page PDF and .docx, the JSON it
promises. Shape and arithmetic, not speed (the numbers: docs/benchmarks.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.media import NOTES
from tests.bench.test_bench import run_bench
from tests.conftest import share_onnx_export


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, onnx_export: Path) -> Path:
    data = tmp_path_factory.mktemp("bench-media")
    share_onnx_export(onnx_export, data)
    return data


def test_media_bench_times_each_note_kind_and_each_document_page(data_dir: Path) -> None:
    report = run_bench("bench.media", "--notes", "1", "--pages", "2", "--data-dir", str(data_dir))
    notes = report["voice_notes"]
    assert list(notes) == [label for label, _, _ in NOTES]
    for label, note in notes.items():
        assert note["whole"]["n"] == note["prepare"]["n"] == 1, label
        assert note["whole"]["p50_ms"] > 0 and note["bytes_sent"] > 0, label
    # A voice note goes as it is; MP3 and M4A are transcoded to 16 kHz WAV first.
    assert notes["voice_ogg_opus_10s"]["bytes_sent"] == notes["voice_ogg_opus_10s"]["bytes_in"]
    assert notes["audio_mp3_60s"]["sent_as"].endswith(".wav")
    for kind in ("pdf", "docx"):
        document = report["documents"][kind]
        assert document["pages"] == 2 and document["passages"] == document["kept"] > 0, kind
        assert 0 < document["read_ms_per_page"] < document["keep_ms_per_page"], kind
