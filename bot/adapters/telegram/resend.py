"""Replies of unknown delivery on Telegram: the core's one-line notice with an inline "send it
again" button, and the button's press, which sends the reply once (core/chat/doubts.py)."""

from __future__ import annotations

import logging

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.adapters.base import Services
from bot.adapters.streaming import split_text
from bot.adapters.telegram.ids import PLATFORM, place_key, user_key
from bot.adapters.telegram.surface import MESSAGE_LIMIT, utf16_len
from bot.core.chat.access import NOT_ALLOWED
from bot.core.chat.doubts import NOTHING_TO_SEND, RESEND_PREFIX, SENT_AGAIN, Doubtful, resend_turn

log = logging.getLogger(__name__)

RESEND_PATTERN = f"^{RESEND_PREFIX}[0-9]+$"


def replied_bot_message(message: Message, bot_id: int) -> str | None:
    """The id of the bot's message that `message` replies to, if it replies to one."""
    replied = message.reply_to_message
    if replied is None or replied.from_user is None or replied.from_user.id != bot_id:
        return None
    return str(replied.message_id)


async def tell_doubt(bot: Bot, chat_id: int, thread_id: int | None, doubt: Doubtful) -> None:
    """The notice, once, before the answer. A notice that does not show costs the answer nothing."""
    button = InlineKeyboardButton(doubt.button, callback_data=doubt.resend_data)
    try:
        await bot.send_message(
            chat_id, doubt.text, message_thread_id=thread_id, reply_markup=InlineKeyboardMarkup([[button]])
        )
    except TelegramError as exc:
        log.warning("telegram: the notice of a reply of unknown delivery did not show: %s", exc)


class Resend:
    def __init__(self, services: Services) -> None:
        self.services = services

    async def on_button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        turn_id = resend_turn(query.data or "") if query is not None else None
        if query is None or turn_id is None or query.message is None:
            return
        chat_id, person = query.message.chat.id, user_key(query.from_user.id)
        if not self.services.access.may_talk(person, place_key(chat_id)):
            await query.answer(NOT_ALLOWED)
            return
        doubts = self.services.conversation.doubts
        text = await doubts.resend(PLATFORM, str(chat_id), turn_id, person)
        if text is None:
            await query.answer(NOTHING_TO_SEND)
            return
        await query.answer(SENT_AGAIN)
        shown: list[str] = []
        try:
            for piece in split_text(text, MESSAGE_LIMIT, utf16_len):
                shown.append(str((await context.bot.send_message(chat_id, piece)).message_id))
        except TelegramError as exc:
            # Settled as sent again all the same: a second press must never show it twice.
            log.warning("telegram: a reply asked for again did not show: %s", exc)
        await doubts.resent(PLATFORM, str(chat_id), shown, turn_id, person)
