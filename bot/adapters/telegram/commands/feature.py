"""What every Telegram command shares: the feature each belongs to, the allowlist guard in front of
it, and its words."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine
from typing import Any

from telegram import Message, Update
from telegram.constants import ChatType
from telegram.ext import BaseHandler, CommandHandler, ContextTypes

from bot.adapters.base import Services
from bot.adapters.telegram.ids import place_key, user_key
from bot.core.chat.access import NOT_ALLOWED

Callback = Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]
Handler = BaseHandler[Update, ContextTypes.DEFAULT_TYPE, None]
PRIVATE_ONLY = "For your privacy I only show that in our private chat. Write to me directly."


def words(context: ContextTypes.DEFAULT_TYPE) -> str:
    """What follows the command's name, as one string."""
    return " ".join(context.args or [])


async def told_unless_private(message: Message) -> bool:
    """Whether `message` was sent somewhere others may read the answer; if so the person is told
    to write privately."""
    if message.chat.type == ChatType.PRIVATE:
        return False
    await message.reply_text(PRIVATE_ONLY)
    return True


class Feature(ABC):
    """One feature's commands and buttons: `handlers` is all it registers with the Application."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.controls = services.controls

    @abstractmethod
    def handlers(self) -> list[Handler]: ...

    def command(self, name: str, callback: Callback) -> Handler:
        return CommandHandler(name, self.guarded(callback))

    def guarded(self, callback: Callback) -> Callback:
        """`callback` for those the allowlist lets talk; everyone else is told so."""

        async def guarded(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
            message, person = update.effective_message, update.effective_user
            if message is None or person is None:
                return
            if not self.services.access.may_talk(user_key(person.id), place_key(message.chat.id)):
                await message.reply_text(NOT_ALLOWED)
                return
            await callback(update, context)

        return guarded
