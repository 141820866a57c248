"""`/file PATH` in the terminal chat, with the real conversation and store and the real speech
backend over HTTP to a loopback speech server: a recording on disk is heard and answered like a
voice note; a missing, too large or unheard file gets one line and stores nothing."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.adapters.console import NO_FILES, ConsoleChat, ConsoleIO
from bot.adapters.console_files import USAGE
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.documents import ChatDocuments
from bot.core.chat.voice import NO_BACKEND, NOTHING_KEPT, VoiceNotes
from bot.core.jobs import JobRegistry
from bot.core.media.models import ListeningPolicy
from bot.jobs.inprocess import InProcessJobs
from bot.media.speech.openai import OpenAISpeech
from bot.store.sqlite.store import SqliteStore
from bot.wiring.media.documents import ChatKeeper
from bot.wiring.settings import DocumentSettings
from tests.media import sounds
from tests.media.document_files import docx_bytes, pdf_bytes
from tests.media.speech_server import FakeSpeech
from tests.support.fakes import HashEmbedder, ScriptedInference

SAID = "Remind me that the plumber comes on Thursday"


@pytest.fixture
async def speech() -> AsyncIterator[OpenAISpeech]:
    server = await FakeSpeech(model="whisper-1", phrases={440: SAID}).start()
    backend = OpenAISpeech(server.base_url, model="whisper-1")
    yield backend
    await backend.close()
    await server.close()


async def chat(
    store: SqliteStore, voice: VoiceNotes | None, *lines: str, model: ScriptedInference | None = None
) -> str:
    """What a pipe reads back after sending `lines`."""
    policy = ConversationPolicy(persona="p")
    conversation = (
        voice.conversation if voice else Conversation(store, HashEmbedder(), ScriptedInference(), policy)
    )
    waiting = [f"{line}\n" for line in lines]
    out = io.StringIO()
    pipe = ConsoleIO(lambda: waiting.pop(0) if waiting else "", out, io.StringIO(), interactive=False)
    await ConsoleChat(conversation, "ann", pipe, voice=voice).run()
    return out.getvalue()


def voice_notes(store: SqliteStore, speech: OpenAISpeech | None, **limits: int) -> VoiceNotes:
    conversation = Conversation(
        store, HashEmbedder(), ScriptedInference("Thursday it is."), ConversationPolicy(persona="p")
    )
    return VoiceNotes(conversation, speech, ListeningPolicy(**limits))  # type: ignore[arg-type]


async def test_a_recording_on_disk_is_heard_and_answered(
    store: SqliteStore, speech: OpenAISpeech, tmp_path: Path
) -> None:
    recording = tmp_path / "note.m4a"
    recording.write_bytes(sounds.sound(sounds.M4A, 1.5))
    assert await chat(store, voice_notes(store, speech), f"/file {recording}") == "Thursday it is.\n"
    user, _ = await store.turns.recent_turns("ann", "console", 10)
    [memory] = await store.curation.get_memories("ann", [user.memory_id])
    assert user.text == SAID and memory.meta["source"] == "voice"


async def test_a_file_that_is_not_there_or_too_large_is_one_line(
    store: SqliteStore, speech: OpenAISpeech, tmp_path: Path
) -> None:
    big = tmp_path / "long.wav"
    big.write_bytes(sounds.sound(sounds.WAV, 3.0))  # 96 KB
    printed = await chat(
        store,
        voice_notes(store, speech, max_bytes=50 * 1024),
        f"/file {tmp_path / 'gone.ogg'}",
        f"/file {big}",
        "/file",
    )
    assert printed.splitlines() == [
        f"I can't read {tmp_path / 'gone.ogg'}: No such file or directory.",
        f"That recording is too large for me (94 KB; I take up to 50 KB). {NOTHING_KEPT}",
        USAGE,
    ]
    assert await store.turns.recent_turns("ann", "console", 10) == []


async def test_text_named_like_audio_is_not_heard(
    store: SqliteStore, speech: OpenAISpeech, tmp_path: Path
) -> None:
    fake = tmp_path / "voice.ogg"
    fake.write_text("not a recording at all\n" * 10)
    printed = await chat(store, voice_notes(store, speech), f"/file {fake}")
    assert (
        printed == "That file isn't audio I can read. Nothing was kept; you can send it again or type it.\n"
    )
    assert await store.turns.recent_turns("ann", "console", 10) == []


async def test_without_a_backend_or_voice_the_answer_says_so(store: SqliteStore, tmp_path: Path) -> None:
    recording = tmp_path / "note.ogg"
    recording.write_bytes(sounds.sound(sounds.OGG_OPUS, 1.0))
    assert await chat(store, voice_notes(store, None), f"/file {recording}") == NO_BACKEND + "\n"
    assert await chat(store, None, f"/file {recording}") == NO_FILES + "\n"
    assert await store.turns.recent_turns("ann", "console", 10) == []


def reading(voice: VoiceNotes, store: SqliteStore, tmp_path: Path) -> ChatDocuments:
    section = DocumentSettings(max_bytes=64 * 1024)
    keeper = ChatKeeper(store.memories, HashEmbedder(), section, InProcessJobs(JobRegistry()), tmp_path)
    return ChatDocuments(voice.conversation, keeper, store.turns, max_bytes=section.max_bytes)


async def test_a_document_on_disk_is_kept_and_audio_still_heard(
    store: SqliteStore, speech: OpenAISpeech, tmp_path: Path
) -> None:
    plan, letter, note = tmp_path / "plan.pdf", tmp_path / "letter.docx", tmp_path / "note.wav"
    plan.write_bytes(pdf_bytes(["The allotment opens at seven."]))
    letter.write_bytes(docx_bytes([("Normal", "The plumber comes on Tuesday.")]))
    note.write_bytes(sounds.sound(sounds.WAV, 1.0))
    voice = voice_notes(store, speech)
    waiting = [f"/file {plan}\n", f"/file {letter}\n", f"/file {note}\n", f"/file {tmp_path / 'empty.txt'}\n"]
    (tmp_path / "empty.txt").write_bytes(b"")
    out = io.StringIO()
    pipe = ConsoleIO(lambda: waiting.pop(0) if waiting else "", out, io.StringIO(), interactive=False)
    documents = reading(voice, store, tmp_path)
    await ConsoleChat(voice.conversation, "ann", pipe, voice=voice, documents=documents).run()
    said = out.getvalue()
    listed = await store.memories.list_memories("ann", 100, 0)
    assert "I keep plan.pdf: 1 passage from page 1" in said and "I keep letter.docx" in said
    assert "Thursday it is." in said, "audio is still heard"
    assert "empty.txt is empty" in said
    assert sorted((m.text, m.meta.get("file")) for m in listed if m.kind == "document") == [
        ("The allotment opens at seven.", "plan.pdf"),
        ("The plumber comes on Tuesday.", "letter.docx"),
    ]
