"""/model in the terminal chat: alone it shows the model answering and those the person may use;
`/model NAME` switches and the next reply comes from it; an unknown name answers with the list; a
model the person may not use is refused. The real conversation and SQLite store."""

from __future__ import annotations

import io

from bot.adapters.console import ChatParts, ConsoleChat, ConsoleIO
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.store.sqlite.store import SqliteStore
from tests.support.chat_models import model_picker
from tests.support.fakes import HashEmbedder, ScriptedInference


async def test_model_name_switches_the_terminal_chat(store: SqliteStore) -> None:
    configured = ScriptedInference("small here.")
    picker = model_picker(store, configured)
    conversation = Conversation(
        store, HashEmbedder(), configured, ConversationPolicy(persona="p"), models=picker
    )

    async def parts() -> ChatParts:
        return ChatParts(conversation)

    waiting = ["/model\n", "/model pirate\n", "/model secret\n", "hello\n", "/model big\n", "hello again\n"]
    out = io.StringIO()
    pipe = ConsoleIO(lambda: waiting.pop(0) if waiting else "", out, io.StringIO(), interactive=False)
    await ConsoleChat(parts(), "ann", pipe).run()
    said = out.getvalue()
    assert (
        "I answer with small in this chat.\n\nModels you may use: small (now), big. /model NAME picks one."
        in said
    )
    assert "I have no model called 'pirate'. Models you may use: small (now), big." in said
    assert "You may not use secret; ask my admin." in said
    assert "Done: I answer with big in this chat now." in said
    assert said.index("small here.") < said.index("Done: I answer with big") < said.index("big here.")
    assert await store.models.chosen_by("ann") == [("console", "big")]


async def test_without_a_models_list_the_configured_model_is_the_only_one(store: SqliteStore) -> None:
    conversation = Conversation(store, HashEmbedder(), ScriptedInference(), ConversationPolicy(persona="p"))

    async def parts() -> ChatParts:
        return ChatParts(conversation)

    out = io.StringIO()
    waiting = ["/model big\n"]
    pipe = ConsoleIO(lambda: waiting.pop(0) if waiting else "", out, io.StringIO(), interactive=False)
    await ConsoleChat(parts(), "ann", pipe).run()
    assert "One model answers here, the one my admin configured" in out.getvalue()
