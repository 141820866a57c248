"""/persona, the picker: alone it shows the chat's persona with a button for each one; with a
name, or a button pressed, it switches. In a group only its admins switch, as Telegram says
(getChatMember)."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.adapters.telegram.commands.feature import Handler, words
from bot.adapters.telegram.commands.picking import Picking, picker_keyboard
from bot.adapters.telegram.ids import chat_key

PICK_PREFIX = "persona:"


class Personas(Picking):
    prefix = PICK_PREFIX

    def handlers(self) -> list[Handler]:
        return [self.command("persona", self.persona), self.button_handler()]

    def wired(self) -> bool:
        return self.services.personas is not None

    async def persona(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        picker = self.services.personas
        if picker is None:
            await message.reply_text(self.controls.persona_text())
            return
        name = words(context)
        if not name:
            menu = await picker.menu(chat_key(message.chat.id))
            await message.reply_text(menu.text, reply_markup=picker_keyboard(menu, PICK_PREFIX))
            return
        await message.reply_text(await self.pick(message.chat, person.id, name, context))

    async def choose(self, chat: str, person: str, name: str, *, owner: str | None, may_change: bool) -> str:
        assert self.services.personas is not None
        return await self.services.personas.pick(chat, name, owner=owner, may_change=may_change)
