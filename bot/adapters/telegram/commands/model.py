"""/model, the picker: alone it shows the model answering in the chat with a button for each one
the person may use; with a name, or a button pressed, it switches. In a group only its admins
switch, as Telegram says (getChatMember), as /persona."""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.adapters.telegram.commands.feature import Handler, words
from bot.adapters.telegram.commands.picking import Picking, picker_keyboard
from bot.adapters.telegram.ids import chat_key, user_key
from bot.core.chat_models import ONE_MODEL

PICK_PREFIX = "model:"


class Models(Picking):
    prefix = PICK_PREFIX

    def handlers(self) -> list[Handler]:
        return [self.command("model", self.model), self.button_handler()]

    def wired(self) -> bool:
        return self.services.models is not None

    async def model(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        picker = self.services.models
        if picker is None:
            await message.reply_text(ONE_MODEL)
            return
        name = words(context)
        if not name:
            menu = await picker.menu(chat_key(message.chat.id), user_key(person.id))
            markup = picker_keyboard(menu, PICK_PREFIX) if menu.names else None
            await message.reply_text(menu.text, reply_markup=markup)
            return
        await message.reply_text(await self.pick(message.chat, person.id, name, context))

    async def choose(self, chat: str, person: str, name: str, *, owner: str | None, may_change: bool) -> str:
        assert self.services.models is not None
        return await self.services.models.pick(chat, person, name, owner=owner, may_change=may_change)
