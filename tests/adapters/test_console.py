"""The terminal chat over a pipe, with the real conversation and store: a reply the token budget cut
is printed up to its last whole sentence, and only that; one that ended by itself, whole; and
/proactive and /reminders answered in the terminal."""

from __future__ import annotations

import io

from bot.adapters.console import ConsoleChat, ConsoleIO
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.proactive.commands import ProactiveCommands
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import HashEmbedder, ScriptedInference

PLANNED = "Sure, happy to help. Let's start with the mornings."


async def chat(store: SqliteStore, reply: str, budget: int, *lines: str) -> str:
    """What a pipe reads back after sending `lines`."""
    policy = ConversationPolicy(persona="p", max_new_tokens=budget, reactions=DEFAULT_REACTIONS)
    conversation = Conversation(store, HashEmbedder(), ScriptedInference(reply), policy)
    waiting = [f"{line}\n" for line in lines]
    out, err = io.StringIO(), io.StringIO()
    pipe = ConsoleIO(lambda: waiting.pop(0) if waiting else "", out, err, interactive=False)
    await ConsoleChat(conversation, "ann", pipe).run()
    return out.getvalue()


async def test_a_pipe_reads_only_the_whole_sentences_of_a_cut_reply(store: SqliteStore) -> None:
    reply = f"{PLANNED} If you're interested, I could even design a"
    printed = await chat(store, reply, len(reply.split(" ")), "help me plan my week", "/react 👍")
    assert printed == f"{PLANNED}\nThanks for the 👍.\n"
    turns = await store.turns.recent_turns("ann", "console", 10)
    assert turns[-1].text == PLANNED


async def test_a_pipe_reads_an_ellipsis_when_nothing_whole_was_written(store: SqliteStore) -> None:
    printed = await chat(store, "If you're interested I could even design a", 8, "hi")
    assert printed == "If you're interested I could even design…\n"


async def test_a_reply_that_ended_by_itself_is_printed_whole(store: SqliteStore) -> None:
    assert await chat(store, "ok see you then and good luck", 96, "bye") == "ok see you then and good luck\n"


async def test_proactive_and_reminders_answer_in_the_terminal(store: SqliteStore) -> None:
    policy = ConversationPolicy(persona="p", reactions=DEFAULT_REACTIONS)
    conversation = Conversation(store, HashEmbedder(), ScriptedInference("ok"), policy)
    commands = ProactiveCommands(store.proactive)
    waiting = ["/proactive\n", "/proactive timezone Europe/Paris\n", "/reminders\n", "/reminders cancel 9\n"]
    out = io.StringIO()
    pipe = ConsoleIO(lambda: waiting.pop(0) if waiting else "", out, io.StringIO(), interactive=False)
    await ConsoleChat(conversation, "ann", pipe, proactive=commands).run()
    printed = out.getvalue()
    assert "Check-ins: off (the default)." in printed and "Done: your time zone is Europe/Paris" in printed
    assert "You have no reminders." in printed and "You have no scheduled reminder #9." in printed
    assert (await store.proactive.proactive_settings("ann")).timezone == "Europe/Paris"
