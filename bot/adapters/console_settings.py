"""The terminal's /settings: every setting on a line with the command that changes it, and
`/settings KEY VALUE` to change one the same way the buttons do elsewhere."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.adapters.base import setting_parts
from bot.core.settings import SettingsScreen, Who, standard_rows

if TYPE_CHECKING:  # console.py imports this module
    from bot.adapters.console import ChatParts

HOW = "/settings KEY VALUE changes one (for example /settings training off); /settings alone shows them."


async def settings_answer(parts: ChatParts, user_id: str, chat_id: str, argument: str) -> str:
    conversation = parts.conversation
    wired = setting_parts(conversation, parts.controls, parts.spoken, parts.proactive, conversation.personas)
    screen = SettingsScreen(standard_rows(wired))
    who = Who(user_id, chat_id, private_chat=True, only_they_see=True)
    key, _, value = argument.partition(" ")
    answer = await screen.choose(who, key, value.strip()) if key else ""
    return f"{await screen.text(who, answer)}\n{HOW}"
