"""/voice: whether a person's replies also come as voice notes (on, off, or which it is)."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.adapters.telegram.commands.feature import Feature, Handler, words
from bot.adapters.telegram.ids import user_key
from bot.core.chat.spoken import NO_BACKEND


class Voice(Feature):
    def handlers(self) -> list[Handler]:
        return [self.command("voice", self.voice)]

    async def voice(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """`/voice on|off` sets whether replies to you come as voice notes too; `/voice` says which."""
        message, person = update.effective_message, update.effective_user
        assert message and person
        spoken = self.services.spoken
        answer = await spoken.command(user_key(person.id), words(context)) if spoken else NO_BACKEND
        await message.reply_text(answer)
