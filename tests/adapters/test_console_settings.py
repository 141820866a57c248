"""/settings in the terminal chat: every setting on a line with the command that changes it;
`/settings KEY VALUE` changes one through that command (what /privacy then says agrees), and an
unknown setting or value answers with what exists. The real conversation and SQLite store."""

from __future__ import annotations

import io

from bot.adapters.console import ChatParts, ConsoleChat, ConsoleIO
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.memory.controls import Controls
from bot.core.personas import PersonaPicker
from bot.core.proactive.commands import ProactiveCommands
from bot.store.sqlite.store import SqliteStore
from tests.adapters.test_console_personas import Fixed
from tests.support.fakes import HashEmbedder, ScriptedInference


async def test_settings_lists_each_row_with_its_command_and_changes_one(store: SqliteStore) -> None:
    conversation = Conversation(
        store, HashEmbedder(), ScriptedInference("Sure."), ConversationPolicy(persona="p"),
        personas=PersonaPicker(Fixed(), store.personas),
    )  # fmt: skip

    async def parts() -> ChatParts:
        return ChatParts(conversation, Controls(store, "p"), proactive=ProactiveCommands(store.proactive))

    lines = ["/settings\n", "/settings training off\n", "/settings persona pirate\n", "/settings volume 11\n"]
    lines.append("/settings persona tutor\n")
    out = io.StringIO()
    pipe = ConsoleIO(lambda: lines.pop(0) if lines else "", out, io.StringIO(), interactive=False)
    await ConsoleChat(parts(), "ann", pipe).run()
    said = out.getvalue()
    assert "Your settings\n• Persona: kindred (in this chat) (/persona NAME)\n" in said
    assert "• Check-ins: off: I write only when you do (/proactive on|off)\n" in said
    assert "• Quiet hours: 22:00–08:00 (your time zone is not set: /proactive timezone NAME)" in said
    assert "• Training with your replies: on (the default here) (/privacy training on|off)\n" in said
    assert "• Your use: Today: nothing yet; This month: nothing yet" in said
    assert "/settings KEY VALUE changes one (for example /settings training off)" in said
    assert "Done: training is off for you." in said
    assert "• Training with your replies: off (your choice)" in said
    assert "Persona can't be 'pirate'; it can be: kindred, tutor. /persona NAME" in said
    assert "I have no setting called 'volume'. There are: persona, checkins, quiet, training, usage." in said
    assert "Done: I'm tutor in this chat now." in said
    assert await store.learning.training_consent("ann") is False
    assert await store.personas.chosen_by("ann") == [("console", "tutor")]
