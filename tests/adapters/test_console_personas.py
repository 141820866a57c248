"""/persona in the terminal chat: alone it shows who speaks and the others; `/persona NAME`
switches, the next reply is written in it, and an unknown name answers with the list. The real
conversation and SQLite store."""

from __future__ import annotations

import io

from bot.adapters.console import ChatParts, ConsoleChat, ConsoleIO
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.personas import PersonaBook, PersonaPicker, parse_personas
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import HashEmbedder, ScriptedInference

BOOK = parse_personas(
    '[[persona]]\nname = "kindred"\nprompt = "You are Kindred."\n'
    '[[persona]]\nname = "tutor"\nprompt = "You are a tutor."\ngreeting = "Let us learn."\n'
)


class Fixed:
    def book(self) -> PersonaBook:
        return BOOK


async def test_persona_name_switches_the_terminal_chat(store: SqliteStore) -> None:
    model = ScriptedInference("Sure.")
    conversation = Conversation(
        store, HashEmbedder(), model, ConversationPolicy(persona="p"),
        personas=PersonaPicker(Fixed(), store.personas),
    )  # fmt: skip

    async def parts() -> ChatParts:
        return ChatParts(conversation)

    waiting = ["/persona\n", "/persona pirate\n", "/persona tutor\n", "hello\n"]
    out = io.StringIO()
    pipe = ConsoleIO(lambda: waiting.pop(0) if waiting else "", out, io.StringIO(), interactive=False)
    await ConsoleChat(parts(), "ann", pipe).run()
    said = out.getvalue()
    assert "I'm kindred in this chat." in said and "Personas: kindred (now), tutor." in said
    assert "I have no persona called 'pirate'." in said
    assert "Done: I'm tutor in this chat now. What I know about you stays the same.\n\nLet us learn." in said
    assert model.prompts[-1][0].content.startswith("You are a tutor.")
    assert await store.personas.chosen_by("ann") == [("console", "tutor")]
