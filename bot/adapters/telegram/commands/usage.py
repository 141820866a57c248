"""/usage: what the person used today and this month (the numbers `kindred usage` prints)."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.adapters.telegram.commands.feature import Feature, Handler
from bot.adapters.telegram.ids import user_key


class Usage(Feature):
    def handlers(self) -> list[Handler]:
        return [self.command("usage", self.usage)]

    async def usage(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        await message.reply_text(await self.services.conversation.usage_report.command(user_key(person.id)))
