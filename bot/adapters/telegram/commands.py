"""Slash commands and their buttons. The answers come from the core's Controls; this only renders."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

from telegram import BotCommand, InlineKeyboardButton, InlineKeyboardMarkup, InputFile, Message, Update
from telegram.constants import ChatType, MessageEntityType
from telegram.ext import (
    BaseHandler,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from bot.adapters.base import Services
from bot.adapters.telegram.apps import RETRY_PREFIX, build_app, retry_app
from bot.adapters.telegram.ids import PLATFORM, chat_key, place_key, user_key
from bot.adapters.telegram.messenger import NEVER_PREFIX
from bot.core.chat.access import NOT_ALLOWED
from bot.core.errors import InvalidInput
from bot.core.learning.commands import ADMINS_ONLY, NOT_WIRED, TrainingCommands
from bot.core.memory.controls import APP_SOON, COMMANDS, FORGET_ALL_ASK, MemoryPage, help_text, page_number
from bot.core.proactive.commands import PROACTIVE_NOT_WIRED, ProactiveCommands

Callback = Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]
PRIVATE_ONLY = "For your privacy I only show that in our private chat. Write to me directly."
PAGE_PREFIX = "mem:"
FORGET_PREFIX = "forget:"
# What Telegram allows in a command's name; anything else is not echoed back.
COMMAND_NAME = re.compile(r"[A-Za-z0-9_]{1,32}")


def unknown_command_text(name: str | None) -> str:
    shown = f"/{name}" if name is not None and COMMAND_NAME.fullmatch(name) else "that command"
    return f"I don't know {shown}; try /help."


def addressed_command(message: Message) -> tuple[str, str | None] | None:
    """(name, the bot it names after @, or None) of the command that starts `message`, if any;
    a name that cannot be cut out as the entity says is "" (shown as "that command")."""
    entity = next(iter(message.entities), None)
    if message.text is None or entity is None or entity.type != MessageEntityType.BOT_COMMAND:
        return None
    if entity.offset != 0:
        return None
    try:
        command = message.parse_entity(entity)  # offsets count UTF-16 units
    except UnicodeDecodeError:  # an entity that ends inside a surrogate pair
        return "", None
    name, _, bot = command.removeprefix("/").partition("@")
    return name, bot or None


def bot_commands() -> list[BotCommand]:
    return [BotCommand(command.name, command.description) for command in COMMANDS]


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


class Commands:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.controls = services.controls

    def handlers(self) -> list[BaseHandler[Update, ContextTypes.DEFAULT_TYPE, None]]:
        simple = {
            "start": self.start,
            "help": self.help,
            "memories": self.memories,
            "forget": self.forget,
            "confirm": self.confirm,
            "correct": self.correct,
            "export": self.export,
            "persona": self.persona,
            "privacy": self.privacy,
            "app": self.app,
            "apps": self.apps,
            "proactive": self.proactive,
            "reminders": self.reminders,
            "stats": self.stats,
            "train_now": self.train_now,
            "rollback": self.rollback,
        }
        found: list[BaseHandler[Update, ContextTypes.DEFAULT_TYPE, None]] = [
            CommandHandler(name, self._guarded(callback)) for name, callback in simple.items()
        ]
        # After every known command, in the same group: only a command none of them took gets here.
        found.append(MessageHandler(filters.COMMAND, self._guarded(self.unknown)))
        found.append(CallbackQueryHandler(self.turn_page, pattern=f"^{PAGE_PREFIX}"))
        found.append(CallbackQueryHandler(self.confirm_forget, pattern=f"^{FORGET_PREFIX}"))
        found.append(CallbackQueryHandler(self.never_again, pattern=f"^{NEVER_PREFIX}"))
        found.append(CallbackQueryHandler(self._guarded(self.retry_app), pattern=f"^{RETRY_PREFIX}"))
        return found

    def _guarded(self, callback: Callback) -> Callback:
        async def guarded(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
            message, person = update.effective_message, update.effective_user
            if message is None or person is None:
                return
            if not self.services.access.may_talk(user_key(person.id), place_key(message.chat.id)):
                await message.reply_text(NOT_ALLOWED)
                return
            await callback(update, context)

        return guarded

    async def start(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message and update.effective_user
        name = update.effective_user.first_name
        await update.effective_message.reply_text(f"Hi {name}! " + help_text())

    async def help(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message
        await update.effective_message.reply_text(help_text())

    async def unknown(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A /command Kindred does not have: answered in a private chat, and in a group only when
        it names this bot (`/x@kindred_bot`); a bare one there may be another bot's."""
        message = update.effective_message
        assert message
        command = addressed_command(message)
        if command is None:
            return
        name, bot = command
        ours = context.bot.username
        if bot is not None and bot.lower() != (ours or "").lower():
            return  # another bot's command
        if bot is None and message.chat.type != ChatType.PRIVATE:
            return
        await message.reply_text(unknown_command_text(name))

    async def memories(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        if message.chat.type != ChatType.PRIVATE:
            await message.reply_text(PRIVATE_ONLY)
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
        argument = " ".join(context.args or [])
        if argument.strip().lower() in ("all", "everything"):
            await message.reply_text(FORGET_ALL_ASK, reply_markup=confirm_buttons(person.id))
            return
        chat_id = chat_key(message.chat.id)
        answer = await self.controls.forget_one(user_key(person.id), argument, chat_id=chat_id)
        await message.reply_text(answer)

    async def confirm(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        argument = " ".join(context.args or [])
        chat_id = chat_key(message.chat.id)
        answer = await self.controls.confirm(user_key(person.id), argument, chat_id=chat_id)
        await message.reply_text(answer)

    async def correct(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        argument = " ".join(context.args or [])
        chat_id = chat_key(message.chat.id)
        answer = await self.controls.correct(user_key(person.id), argument, chat_id=chat_id)
        await message.reply_text(answer)

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
        if message.chat.type != ChatType.PRIVATE:
            await message.reply_text(PRIVATE_ONLY)
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

    async def persona(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_message
        await update.effective_message.reply_text(self.controls.persona_text())

    async def privacy(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """What is kept and why; `/privacy training on|off` sets whether replies to you train."""
        message, person = update.effective_message, update.effective_user
        assert message and person
        argument = " ".join(context.args or [])
        await message.reply_text(await self.controls.privacy(user_key(person.id), argument))

    async def app(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        if self.services.apps is None:
            await message.reply_text(APP_SOON)
            return
        await build_app(self.services.apps, message, person.id, " ".join(context.args or []))

    async def retry_app(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None
        if self.services.apps is None:
            await query.answer()
            return
        await retry_app(self.services.apps, query)

    async def apps(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        if self.services.apps is None:
            await message.reply_text(APP_SOON)
            return
        if message.chat.type != ChatType.PRIVATE:  # each link is its app's key: not for a group to see
            await message.reply_text(PRIVATE_ONLY)
            return
        argument = " ".join(context.args or [])
        await message.reply_text(await self.services.apps.manage(user_key(person.id), argument))

    async def proactive(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/proactive [on|off|timezone NAME|quiet H-H|never KIND|allow KIND]: check-ins, privately."""
        await self._proactive(update, context, lambda commands, who, words: commands.proactive(who, words))

    async def reminders(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/reminders [cancel N]."""
        await self._proactive(update, context, lambda commands, who, words: commands.reminders(who, words))

    async def _proactive(
        self,
        update: Update,
        context: ContextTypes.DEFAULT_TYPE,
        ask: Callable[[ProactiveCommands, str, str], Awaitable[str]],
    ) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        commands = self.services.proactive
        if commands is None:
            await message.reply_text(PROACTIVE_NOT_WIRED)
        elif message.chat.type != ChatType.PRIVATE:  # a person's reminders are not a group's business
            await message.reply_text(PRIVATE_ONLY)
        else:
            await message.reply_text(await ask(commands, user_key(person.id), " ".join(context.args or [])))

    async def never_again(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The "don't suggest this again" button under a proactive message (messenger.py)."""
        query = update.callback_query
        assert query is not None and query.data is not None
        replies = self.services.conversation.proactive
        shown = query.message
        if query.data.removeprefix(NEVER_PREFIX) != str(query.from_user.id) or not isinstance(shown, Message):
            await query.answer("Only the person it was sent to can turn this off.", show_alert=True)
            return
        if replies is None:
            await query.answer(PROACTIVE_NOT_WIRED, show_alert=True)
            return
        chat, message_id = chat_key(shown.chat.id), str(shown.message_id)
        answer = await replies.never_again_on(PLATFORM, chat, message_id, user_key(query.from_user.id))
        await query.answer()
        await query.edit_message_reply_markup(None)
        await shown.reply_text(answer)

    async def stats(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        if not self.services.access.is_admin(user_key(person.id)):
            await message.reply_text(ADMINS_ONLY)
            return
        await message.reply_text(await self.controls.stats_text())

    async def train_now(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self._training(update, lambda training, admin: training.train_now(admin))

    async def rollback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self._training(update, lambda training, admin: training.rollback())

    async def _training(self, update: Update, ask: Callable[[TrainingCommands, str], Awaitable[str]]) -> None:
        """An admins' learning command: refused to anyone else, answered by TrainingCommands."""
        message, person = update.effective_message, update.effective_user
        assert message and person
        admin, training = user_key(person.id), self.services.training
        if not self.services.access.is_admin(admin):
            await message.reply_text(ADMINS_ONLY)
        elif training is None:
            await message.reply_text(NOT_WIRED)
        else:
            await message.reply_text(await ask(training, admin))
