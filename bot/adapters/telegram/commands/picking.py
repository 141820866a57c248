"""What /persona and /model share: a command that lists names as buttons (the current one
marked), and switches the chat's choice with a name or a button pressed. In a group only its
admins switch, as Telegram says (getChatMember)."""

from __future__ import annotations

from typing import Protocol

from telegram import Chat, InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.telegram.commands.feature import Feature, Handler
from bot.adapters.telegram.ids import chat_key, user_key

ADMINS = (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


class Menu(Protocol):
    @property
    def names(self) -> tuple[str, ...]: ...

    @property
    def current(self) -> str | None: ...


def picker_keyboard(menu: Menu, prefix: str) -> InlineKeyboardMarkup:
    """One button per name, two a row; the current one marked."""
    buttons = [
        InlineKeyboardButton(f"✓ {name}" if name == menu.current else name, callback_data=prefix + name)
        for name in menu.names
    ]
    return InlineKeyboardMarkup([buttons[i : i + 2] for i in range(0, len(buttons), 2)])


async def is_chat_admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, user_id: int) -> bool:
    """Whether Telegram names the person an administrator or the owner of the chat."""
    member = await context.bot.get_chat_member(chat_id, user_id)
    return member.status in ADMINS


class Picking(Feature):
    """A feature whose buttons carry `prefix` + a name; `wired` and `choose` say what it picks."""

    prefix = ""

    def button_handler(self) -> Handler:
        return CallbackQueryHandler(self.guarded(self.picked), pattern=f"^{self.prefix}")

    def wired(self) -> bool:
        raise NotImplementedError

    async def choose(self, chat: str, person: str, name: str, *, owner: str | None, may_change: bool) -> str:
        """The core's answer to picking `name` in `chat`."""
        raise NotImplementedError

    async def picked(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None and query.data is not None
        shown = query.message
        if not self.wired() or not isinstance(shown, Message):
            await query.answer()
            return
        answer = await self.pick(
            shown.chat, query.from_user.id, query.data.removeprefix(self.prefix), context
        )
        await query.answer()
        await shown.reply_text(answer)

    async def pick(self, chat: Chat, person: int, name: str, context: ContextTypes.DEFAULT_TYPE) -> str:
        private = chat.type == ChatType.PRIVATE
        may_change = private or await is_chat_admin(context, chat.id, person)
        owner = user_key(person) if private else None
        return await self.choose(
            chat_key(chat.id), user_key(person), name, owner=owner, may_change=may_change
        )
