"""/persona, the picker: alone it shows the chat's persona with a button for each one; with a
name, or a button pressed, it switches. In a group only its admins switch, as Telegram says
(getChatMember)."""

from __future__ import annotations

from telegram import Chat, InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.telegram.commands.feature import Feature, Handler, words
from bot.adapters.telegram.ids import chat_key, user_key
from bot.core.chat_models import ModelMenu
from bot.core.personas import PersonaMenu

PICK_PREFIX = "persona:"
ADMINS = (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


def picker_keyboard(menu: PersonaMenu | ModelMenu, prefix: str = PICK_PREFIX) -> InlineKeyboardMarkup:
    """One button per name (a persona, a model), two a row; the current one marked."""
    buttons = [
        InlineKeyboardButton(f"✓ {name}" if name == menu.current else name, callback_data=prefix + name)
        for name in menu.names
    ]
    return InlineKeyboardMarkup([buttons[i : i + 2] for i in range(0, len(buttons), 2)])


class Personas(Feature):
    def handlers(self) -> list[Handler]:
        return [
            self.command("persona", self.persona),
            CallbackQueryHandler(self.guarded(self.picked), pattern=f"^{PICK_PREFIX}"),
        ]

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
            await message.reply_text(menu.text, reply_markup=picker_keyboard(menu))
            return
        await message.reply_text(await self._pick(message.chat, person.id, name, context))

    async def picked(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None and query.data is not None
        shown = query.message
        if self.services.personas is None or not isinstance(shown, Message):
            await query.answer()
            return
        answer = await self._pick(
            shown.chat, query.from_user.id, query.data.removeprefix(PICK_PREFIX), context
        )
        await query.answer()
        await shown.reply_text(answer)

    async def _pick(self, chat: Chat, person: int, name: str, context: ContextTypes.DEFAULT_TYPE) -> str:
        assert self.services.personas is not None
        private = chat.type == ChatType.PRIVATE
        may_change = private or await is_chat_admin(context, chat.id, person)
        owner = user_key(person) if private else None
        return await self.services.personas.pick(chat_key(chat.id), name, owner=owner, may_change=may_change)


async def is_chat_admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    """Whether Telegram names the person an administrator or the owner of the chat."""
    member = await context.bot.get_chat_member(chat_id, user_id)
    return member.status in ADMINS
