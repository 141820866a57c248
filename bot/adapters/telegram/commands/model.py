"""/model, the picker: alone it shows the model answering in the chat with a button for each one
the person may use; with a name, or a button pressed, it switches. In a group only its admins
switch, as Telegram says (getChatMember), as /persona."""

from __future__ import annotations

from telegram import Chat, Message, Update
from telegram.constants import ChatType
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.telegram.commands.feature import Feature, Handler, words
from bot.adapters.telegram.commands.persona import is_chat_admin, picker_keyboard
from bot.adapters.telegram.ids import chat_key, user_key
from bot.core.chat_models import ONE_MODEL

PICK_PREFIX = "model:"


class Models(Feature):
    def handlers(self) -> list[Handler]:
        return [
            self.command("model", self.model),
            CallbackQueryHandler(self.guarded(self.picked), pattern=f"^{PICK_PREFIX}"),
        ]

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
        await message.reply_text(await self._pick(message.chat, person.id, name, context))

    async def picked(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None and query.data is not None
        shown = query.message
        if self.services.models is None or not isinstance(shown, Message):
            await query.answer()
            return
        answer = await self._pick(
            shown.chat, query.from_user.id, query.data.removeprefix(PICK_PREFIX), context
        )
        await query.answer()
        await shown.reply_text(answer)

    async def _pick(self, chat: Chat, person: int, name: str, context: ContextTypes.DEFAULT_TYPE) -> str:
        assert self.services.models is not None
        private = chat.type == ChatType.PRIVATE
        may_change = private or await is_chat_admin(context, chat.id, person)
        owner = user_key(person) if private else None
        return await self.services.models.pick(
            chat_key(chat.id), user_key(person), name, owner=owner, may_change=may_change
        )
