"""/privacy: what is kept and why, and the switch for whether replies to a person train."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.adapters.telegram.commands.feature import Feature, Handler, words
from bot.adapters.telegram.ids import user_key


class Privacy(Feature):
    def handlers(self) -> list[Handler]:
        return [self.command("privacy", self.privacy)]

    async def privacy(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """What is kept and why; `/privacy training on|off` sets whether replies to you train."""
        message, person = update.effective_message, update.effective_user
        assert message and person
        await message.reply_text(await self.controls.privacy(user_key(person.id), words(context)))
