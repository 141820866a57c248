"""Spoken replies in the terminal chat: `/voice on`, then each reply printed as always and its
voice note written to a file (a terminal cannot play one), said on stderr so that a pipe reads
only the reply. The real conversation and store, the real voice against the loopback server."""

from __future__ import annotations

import io
from pathlib import Path

import av

from bot.adapters.console import ChatParts, ConsoleChat, ConsoleIO
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.spoken import NO_BACKEND, VOICE_ON, SpokenReplies
from bot.core.media.ports import SpeechSynthesis
from bot.core.personas import PersonaBook, PersonaPicker, parse_personas
from bot.store.sqlite.store import SqliteStore
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

    async def parts() -> ChatParts:
        return ChatParts(conversation, spoken=SpokenReplies(store.turns, voice), spoken_file=spoken_file)

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
    async with speaking(voices=("alloy", "nova")) as (server, voice):
        out, _ = await chat(
            store, voice, tmp_path / "ann.ogg", "/voice on", "hello", "/persona bard", "hello again",
            "/persona kindred", "and again", personas=True,
        )  # fmt: skip
    assert server.refused == [] and out.count(REPLY) == 3
    assert [said.voice for said in server.received] == ["alloy", "nova", "alloy"]
