"""/proactive and /reminders, answered privately by the core's ProactiveCommands, and the "don't
suggest this again" button under a proactive message (messenger.py sends it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from telegram import Message, Update
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.gates import proactive_of
from bot.adapters.telegram.commands.feature import Feature, Handler, told_unless_private, words
from bot.adapters.telegram.ids import PLATFORM, user_key
from bot.adapters.telegram.messenger import NEVER_PREFIX
from bot.core.proactive.commands import PROACTIVE_NOT_WIRED, ProactiveCommands

Ask = Callable[[ProactiveCommands, str, str], Awaitable[str]]


class Proactive(Feature):
    def handlers(self) -> list[Handler]:
        return [
            self.command("proactive", self.proactive),
            self.command("reminders", self.reminders),
            CallbackQueryHandler(self.never_again, pattern=f"^{NEVER_PREFIX}"),
        ]

    async def proactive(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/proactive [on|off|timezone NAME|quiet H-H|never KIND|allow KIND]: check-ins, privately."""
        await self._answer(update, context, lambda commands, who, said: commands.proactive(who, said))

    async def reminders(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """/reminders [cancel N]."""
        await self._answer(update, context, lambda commands, who, said: commands.reminders(who, said))

    async def _answer(self, update: Update, context: ContextTypes.DEFAULT_TYPE, ask: Ask) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        commands = proactive_of(self.services)
        if isinstance(commands, str):
            await message.reply_text(commands)
        elif not await told_unless_private(message):  # a person's reminders are not a group's business
            await message.reply_text(await ask(commands, user_key(person.id), words(context)))

    async def never_again(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The "don't suggest this again" button under a proactive message."""
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
        # The chat as Telegram's links name it (feedback.py, messenger.reaction_chat): the bare id.
        chat, message_id = str(shown.chat.id), str(shown.message_id)
        answer = await replies.never_again_on(PLATFORM, chat, message_id, user_key(query.from_user.id))
        await query.answer()
        await query.edit_message_reply_markup(None)
        await shown.reply_text(answer)
