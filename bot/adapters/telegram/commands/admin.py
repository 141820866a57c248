"""/stats, for admins only."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.adapters.telegram.commands.feature import Feature, Handler
from bot.adapters.telegram.ids import user_key
from bot.core.learning.commands import ADMINS_ONLY


class Admin(Feature):
    def handlers(self) -> list[Handler]:
        return [self.command("stats", self.stats)]

    async def stats(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        if not self.services.access.is_admin(user_key(person.id)):
            await message.reply_text(ADMINS_ONLY)
            return
        await message.reply_text(await self.controls.stats_text())
