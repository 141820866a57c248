"""Spoken replies in the terminal chat: `/voice on`, then each reply printed as always and its
voice note written to a file (a terminal cannot play one), said on stderr so that a pipe reads
only the reply. The real conversation and store, the real voice against the loopback server."""

from __future__ import annotations

import io
from pathlib import Path

import av

from bot.adapters.console import ChatParts, ConsoleChat, ConsoleIO
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.documents import ChatDocuments
from bot.core.chat.spoken import NO_BACKEND, VOICE_ON, SpokenReplies
from bot.core.jobs import JobRegistry
from bot.core.media.ports import SpeechSynthesis
from bot.core.personas import PersonaBook, PersonaPicker, parse_personas
from bot.jobs.inprocess import InProcessJobs
from bot.store.sqlite.store import SqliteStore
from bot.wiring.media.documents import ChatKeeper
from bot.wiring.settings import DocumentSettings
from tests.media.tts_server import speaking
from tests.support.fakes import HashEmbedder, ScriptedInference

REPLY = "Good to see you."


# The default persona has no voice of its own (KINDRED_TTS_VOICE's speaks); the bard has one.
BOOK = parse_personas(
    '[[persona]]\nname = "kindred"\nprompt = "You are Kindred."\n'
    '[[persona]]\nname = "bard"\nprompt = "You are a bard."\nvoice = "nova"\n'
)


class Fixed:
    def __init__(self, book: PersonaBook) -> None:
        self._book = book

    def book(self) -> PersonaBook:
        return self._book


async def chat(
    store: SqliteStore, voice: SpeechSynthesis | None, spoken_file: Path, *lines: str, personas: bool = False
) -> tuple[str, str]:
    """What a pipe reads back on stdout and stderr after sending `lines`."""
    picker = PersonaPicker(Fixed(BOOK), store.personas) if personas else None
    conversation = Conversation(
        store, HashEmbedder(), ScriptedInference(REPLY), ConversationPolicy(persona="p"), personas=picker
    )

    section = DocumentSettings(max_bytes=64 * 1024)
    keeper = ChatKeeper(
        store.memories, HashEmbedder(), section, InProcessJobs(JobRegistry()), spoken_file.parent
    )
    documents = ChatDocuments(conversation, keeper, store.turns, max_bytes=section.max_bytes)

    async def parts() -> ChatParts:
        spoken = SpokenReplies(store.turns, voice)
        return ChatParts(conversation, spoken=spoken, spoken_file=spoken_file, documents=documents)

    waiting = [f"{line}\n" for line in lines]
    out, err = io.StringIO(), io.StringIO()
    pipe = ConsoleIO(lambda: waiting.pop(0) if waiting else "", out, err, interactive=False)
    await ConsoleChat(parts(), "ann", pipe).run()
    return out.getvalue(), err.getvalue()


async def test_voice_on_writes_each_spoken_reply_to_its_file_and_says_where(
    store: SqliteStore, tmp_path: Path
) -> None:
    target = tmp_path / "spoken" / "ann.ogg"
    async with speaking() as (server, voice):
        out, err = await chat(store, voice, target, "/voice on", "hello")
    assert out == f"{VOICE_ON}\n{REPLY}\n"
    assert f"in {target})" in err and [said.input for said in server.received] == [REPLY]
    with av.open(io.BytesIO(target.read_bytes()), mode="r") as container:
        assert (container.format.name, container.streams.audio[0].codec_context.name) == ("ogg", "opus")


async def test_a_failing_voice_prints_the_reply_once_and_one_line_on_stderr(
    store: SqliteStore, tmp_path: Path
) -> None:
    target = tmp_path / "ann.ogg"
    async with speaking() as (server, voice):
        server.fail_next("garbage")
        out, err = await chat(store, voice, target, "/voice on", "hello")
    assert out == f"{VOICE_ON}\n{REPLY}\n" and "couldn't say that aloud" in err
    assert not target.exists()


async def test_voice_on_without_a_voice_says_how_to_turn_it_on(store: SqliteStore, tmp_path: Path) -> None:
    out, _ = await chat(store, None, tmp_path / "ann.ogg", "/voice on", "hello")
    assert out == f"{NO_BACKEND}\n{REPLY}\n"
    assert not await store.turns.speaks_replies("ann")


async def test_each_reply_is_said_in_the_voice_of_the_persona_that_wrote_it(
    store: SqliteStore, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("The allotment opens at seven on Saturdays.\n", encoding="utf-8")
    async with speaking(voices=("alloy", "nova")) as (server, voice):
        out, _ = await chat(
            store, voice, tmp_path / "ann.ogg", "/voice on", "hello", "/persona bard", "hello again",
            f"/file {notes}", "/persona kindred", "and again", personas=True,
        )  # fmt: skip
    assert server.refused == [] and out.count(REPLY) == 3 and "I keep notes.txt" in out
    # The file's summary is not the model's words, and is said in the bard's voice all the same.
    assert [said.voice for said in server.received] == ["alloy", "nova", "nova", "alloy"]
    assert server.received[2].input.startswith("I keep notes.txt")
