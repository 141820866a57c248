"""The terminal's settings lines: /voice [on|off], /persona [NAME], /model [NAME], /usage and
/settings, each
answered in words."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING

from bot.adapters.console_settings import settings_answer
from bot.core.chat_models import ONE_MODEL

if TYPE_CHECKING:  # console.py imports this module
    from bot.adapters.console import ChatParts

# The terminal is one private chat: the person owns its persona choice.
CHAT_ID = "console"


def setting_answer(parts: ChatParts, command: str, user_id: str, argument: str) -> Awaitable[str] | None:
    """The answer to `/voice`, `/persona`, `/model`, `/usage` or `/settings`; None: no voice is configured."""
    if command == "/settings":
        return settings_answer(parts, user_id, CHAT_ID, argument)
    if command == "/voice":
        return parts.spoken.command(user_id, argument) if parts.spoken else None
    if command == "/usage":
        return parts.conversation.usage_report.command(user_id)
    if command == "/model":
        return model_answer(parts, user_id, argument)
    return persona_answer(parts, user_id, argument)


async def persona_answer(parts: ChatParts, user_id: str, name: str) -> str:
    personas = parts.conversation.personas
    if personas is None:
        return f"This is who I am:\n\n{parts.conversation.policy.persona}"
    if name:
        return await personas.pick(CHAT_ID, name, owner=user_id)
    return (await personas.menu(CHAT_ID)).text


async def model_answer(parts: ChatParts, user_id: str, name: str) -> str:
    models = parts.conversation.models
    if models is None:
        return ONE_MODEL
    if name:
        return await models.pick(CHAT_ID, user_id, name, owner=user_id)
    return (await models.menu(CHAT_ID, user_id)).text
