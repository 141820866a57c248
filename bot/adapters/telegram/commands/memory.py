"""/memories (with its page buttons), /forget (with its confirm buttons), /confirm, /correct and
/export. The answers come from the core's Controls; this only renders."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, InputFile, Update
from telegram.constants import ChatType
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.telegram.commands.feature import Feature, Handler, told_unless_private, words
from bot.adapters.telegram.ids import chat_key, user_key
from bot.core.errors import InvalidInput
from bot.core.memory.controls import FORGET_ALL_ASK, MemoryPage, page_number

PAGE_PREFIX = "mem:"
FORGET_PREFIX = "forget:"


class Ask(Protocol):
    """Controls' forget_one, confirm and correct: a person's words about one of their memories."""

    async def __call__(self, user_id: str, argument: str, *, chat_id: str | None = None) -> str: ...


def page_buttons(page: MemoryPage) -> InlineKeyboardMarkup | None:
    row = []
    if page.has_previous:
        row.append(InlineKeyboardButton("‹ Newer", callback_data=f"{PAGE_PREFIX}{page.page - 1}"))
    if page.has_next:
        row.append(InlineKeyboardButton("Older ›", callback_data=f"{PAGE_PREFIX}{page.page + 1}"))
    return InlineKeyboardMarkup([row]) if row else None


def confirm_buttons(owner: int) -> InlineKeyboardMarkup:
    # The owner's id travels in the button: in a group, nobody else's press can confirm it.
    return InlineKeyboardMarkup(
        [
            [
                InlineKeyboardButton("Yes, forget everything", callback_data=f"{FORGET_PREFIX}yes:{owner}"),
                InlineKeyboardButton("No, keep it", callback_data=f"{FORGET_PREFIX}no:{owner}"),
            ]
        ]
    )


class Memory(Feature):
    def handlers(self) -> list[Handler]:
        return [
            self.command("memories", self.memories),
            self.command("forget", self.forget),
            self.command("confirm", self.confirm),
            self.command("correct", self.correct),
            self.command("export", self.export),
            CallbackQueryHandler(self.turn_page, pattern=f"^{PAGE_PREFIX}"),
            CallbackQueryHandler(self.confirm_forget, pattern=f"^{FORGET_PREFIX}"),
        ]

    async def memories(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        if await told_unless_private(message):
            return
        page = await self.controls.memories_page(
            user_key(person.id), page_number((context.args or ["1"])[0]), chat_id=chat_key(message.chat.id)
        )
        await message.reply_text(page.render(), reply_markup=page_buttons(page))

    async def turn_page(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None and query.data is not None
        number = query.data.removeprefix(PAGE_PREFIX)
        if query.message is None or query.message.chat.type != ChatType.PRIVATE:
            await query.answer()
            return
        page = await self.controls.memories_page(user_key(query.from_user.id), page_number(number))
        await query.answer()
        await query.edit_message_text(page.render(), reply_markup=page_buttons(page))

    async def forget(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        if words(context).strip().lower() in ("all", "everything"):
            await message.reply_text(FORGET_ALL_ASK, reply_markup=confirm_buttons(person.id))
            return
        await self._answer(update, context, self.controls.forget_one)

    async def confirm(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self._answer(update, context, self.controls.confirm)

    async def correct(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self._answer(update, context, self.controls.correct)

    async def _answer(self, update: Update, context: ContextTypes.DEFAULT_TYPE, ask: Ask) -> None:
        """A command about one memory, named in its words, answered in a line."""
        message, person = update.effective_message, update.effective_user
        assert message and person
        await message.reply_text(
            await ask(user_key(person.id), words(context), chat_id=chat_key(message.chat.id))
        )

    async def confirm_forget(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None and query.data is not None
        answer, _, owner = query.data.removeprefix(FORGET_PREFIX).partition(":")
        if owner != str(query.from_user.id):
            await query.answer("Only the person who asked can confirm this.", show_alert=True)
            return
        await query.answer()
        if answer == "yes":
            await query.edit_message_text(await self.controls.forget_all(user_key(query.from_user.id)))
        else:
            await query.edit_message_text("Kept. Nothing was forgotten.")

    async def export(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        if await told_unless_private(message):
            return
        try:
            data = await self.controls.export_jsonl(user_key(person.id), chat_id=chat_key(message.chat.id))
        except InvalidInput as too_big:
            await message.reply_text(str(too_big))
            return
        if not data:
            await message.reply_text("I don't keep anything about you yet, so there is nothing to export.")
            return
        name = f"kindred-memories-{datetime.now(UTC):%Y-%m-%d}.jsonl"
        await message.reply_document(
            InputFile(data, filename=name),
            caption="Everything I remember about you, one JSON object per line.",
        )
