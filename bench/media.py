"""What a voice note and a document page cost Kindred itself, the models aside.

    python -m bench.media [--quick] [--notes N] [--pages N]

Voice notes: each recording is heard through the product's OpenAI-compatible speech backend
(bot/media/speech/openai.py) by a server in its own process that answers at once
(bench/parts/media/instant_speech.py), so the time is decoding, transcoding where the format is
not sent as it is, and the upload over loopback. `prepare` times the decoding alone.

Documents: a PDF and a .docx of --pages pages of about 2,000 characters each are read into
passages (bot/media/documents/), then kept for a person as `kindred memory add-file` keeps them
(core/media/documents.py: every passage embedded with the product's embedder, ONNX MiniLM, and
written to a fresh SQLite store). Reported per page: reading alone, and keeping whole.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.parts.common import exit_cleanly_on_sigterm, log, machine, millis, now_iso, open_store

# (label, (container, codec, rate), seconds): what people send. A Telegram voice note is OGG/Opus
# (sent as it is); an MP3 or M4A audio file is transcoded to 16 kHz WAV first.
NOTES = (
    ("voice_ogg_opus_10s", ("ogg", "libopus", 48_000), 10.0),
    ("voice_ogg_opus_60s", ("ogg", "libopus", 48_000), 60.0),
    ("audio_mp3_60s", ("mp3", "libmp3lame", 44_100), 60.0),
    ("audio_m4a_60s", ("ipod", "aac", 44_100), 60.0),
)
PAGE_CHARS = 2000
SERVER_START_S = 20.0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer notes, a shorter document")
    parser.add_argument("--notes", type=int, help="times each recording is heard (default 20, quick 3)")
    parser.add_argument("--pages", type=int, help="pages per document (default 100, quick 10)")
    parser.add_argument("--data-dir", type=Path, help="where the embedder's ONNX export is kept")
    return parser.parse_args(argv)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def instant_speech() -> Iterator[str]:
    """The answering server's base URL (…/v1), for as long as the block runs."""
    import httpx

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "bench.parts.media.instant_speech", str(port)])
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1.0)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the instant speech server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait(timeout=10)


async def voice_notes(times: int) -> dict[str, Any]:
    from bot.core.media.models import MediaFile
    from bot.media.audio import AudioLimits, prepare
    from bot.media.speech.openai import OpenAISpeech
    from tests.media.sounds import sound

    results: dict[str, Any] = {}
    with instant_speech() as url:
        speech = OpenAISpeech(url, model="instant", response_format="json")
        try:
            for label, kind, seconds in NOTES:
                data = sound(kind, seconds, freq=220.0)
                note = MediaFile("voice", data, f"note.{kind[0]}", "", seconds)
                await speech.transcribe(note)  # the first pays for imports and the connection
                decoded, heard = [], []
                for _ in range(times):
                    started = time.perf_counter()
                    prepared = prepare(data, AudioLimits())
                    decoded.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    await speech.transcribe(note)
                    heard.append(time.perf_counter() - started)
                results[label] = {
                    "seconds": seconds, "bytes_in": len(data), "bytes_sent": len(prepared.data),
                    "sent_as": prepared.filename, "prepare": millis(decoded), "whole": millis(heard),
                }  # fmt: skip
                log(f"{label}: whole p50 {results[label]['whole']['p50_ms']:.1f} ms")
        finally:
            await speech.close()
    return results


def page_texts(pages: int) -> list[str]:
    """Pages of plain prose, each about PAGE_CHARS characters, none the same."""
    import random

    from bench.parts.chatter import chatter_line

    rng = random.Random(11)
    texts = []
    for number in range(pages):
        lines: list[str] = [f"Page {number + 1}."]
        while sum(len(line) + 1 for line in lines) < PAGE_CHARS:
            lines.append(chatter_line(rng))
        # The test PDF writer takes Windows-1252 text: the chatter's emoji are left out.
        texts.append(" ".join(lines).encode("cp1252", "ignore").decode("cp1252"))
    return texts


async def documents(pages: int, data_dir: Path) -> dict[str, Any]:
    from bot.core.media.documents import keep_document
    from bot.core.media.models import DocumentLimits, MediaFile
    from bot.inference.embedders.onnx import OnnxEmbedder
    from bot.media.documents import DocumentFileReader
    from tests.media.document_files import docx_bytes, pdf_bytes

    texts = page_texts(pages)
    files = {
        "pdf": MediaFile("document", pdf_bytes(texts), "report.pdf"),
        "docx": MediaFile("document", docx_bytes([("Normal", text) for text in texts]), "report.docx"),
    }
    limits = DocumentLimits(max_pages=max(pages, 500), max_seconds=3600.0)
    reader = DocumentFileReader(limits)
    embedder = OnnxEmbedder.load(data_dir=data_dir)
    await embedder.embed(["warm up"])
    results: dict[str, Any] = {}
    for label, document in files.items():
        started = time.perf_counter()
        passages = await reader.read(document)
        read_s = time.perf_counter() - started
        async with open_store("sqlite") as opened:
            started = time.perf_counter()
            kept = await keep_document(
                opened.store.memories,
                embedder,
                reader,
                "bench-user",
                document,
                limits=limits,
                now=datetime.now(UTC),
            )
            keep_s = time.perf_counter() - started
        results[label] = {
            "pages": pages, "bytes": document.size, "passages": len(passages), "kept": kept.passages,
            "read_ms_per_page": round(read_s * 1000 / pages, 3),
            "keep_ms_per_page": round(keep_s * 1000 / pages, 3),
            "keep_ms_per_passage": round(keep_s * 1000 / max(1, kept.passages), 3),
        }  # fmt: skip
        log(f"{label}: read {read_s * 1000 / pages:.1f} ms/page, keep {keep_s * 1000 / pages:.1f} ms/page")
    return results


async def run(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    times = args.notes or (3 if args.quick else 20)
    pages = args.pages or (10 if args.quick else 100)
    return {
        "benchmark": "media",
        "date": now_iso(),
        "machine": machine(),
        "settings": {"notes_each": times, "pages": pages, "page_chars": PAGE_CHARS, "quick": args.quick},
        "voice_notes": await voice_notes(times),
        "documents": await documents(pages, data_dir),
    }


def main(argv: Sequence[str] | None = None) -> None:
    exit_cleanly_on_sigterm()
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kindred-bench-media-") as tmp:
        result = asyncio.run(run(args, args.data_dir or Path(tmp)))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
