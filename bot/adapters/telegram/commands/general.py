"""/start and /help, and the answer to a /command Kindred does not have."""

from __future__ import annotations

import re

from telegram import Message, Update
from telegram.constants import ChatType, MessageEntityType
from telegram.ext import ContextTypes, MessageHandler, filters

from bot.adapters.telegram.commands.feature import Feature, Handler
from bot.core.memory.controls import help_text

# What Telegram allows in a command's name; anything else is not echoed back.
COMMAND_NAME = re.compile(r"[A-Za-z0-9_]{1,32}")


def unknown_command_text(name: str | None) -> str:
    shown = f"/{name}" if name is not None and COMMAND_NAME.fullmatch(name) else "that command"
    return f"I don't know {shown}; try /help."


def addressed_command(message: Message) -> tuple[str, str | None] | None:
    """(name, the bot it names after @, or None) of the command that starts `message`, if any;
    a name that cannot be cut out as the entity says is "" (shown as "that command")."""
    entity = next(iter(message.entities), None)
    if message.text is None or entity is None or entity.type != MessageEntityType.BOT_COMMAND:
        return None
    if entity.offset != 0:
        return None
    try:
        command = message.parse_entity(entity)  # offsets count UTF-16 units
    except UnicodeDecodeError:  # an entity that ends inside a surrogate pair
        return "", None
    name, _, bot = command.removeprefix("/").partition("@")
    return name, bot or None


class General(Feature):
    def handlers(self) -> list[Handler]:
        return [
            self.command("start", self.start),
            self.command("help", self.help),
        ]

    def fallback(self) -> Handler:
        """Registered after every known command, in the same group: only a command none of them
        took gets here."""
        return MessageHandler(filters.COMMAND, self.guarded(self.unknown))

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message and update.effective_user
        name = update.effective_user.first_name
        await update.effective_message.reply_text(f"Hi {name}! " + help_text())

    async def help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message
        await update.effective_message.reply_text(help_text())

    async def unknown(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A /command Kindred does not have: answered in a private chat, and in a group only when
        it names this bot (`/x@kindred_bot`); a bare one there may be another bot's."""
        message = update.effective_message
        assert message
        command = addressed_command(message)
        if command is None:
            return
        name, bot = command
        ours = context.bot.username
        if bot is not None and bot.lower() != (ours or "").lower():
            return  # another bot's command
        if bot is None and message.chat.type != ChatType.PRIVATE:
            return
        await message.reply_text(unknown_command_text(name))
