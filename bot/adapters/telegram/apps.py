"""/app and /apps on Telegram: one status message edited as the build's steps pass, then the link.

In a private chat the link is a web-app button (the app opens inside Telegram, in its theme); in a
group it is a URL button, since Telegram allows web-app buttons in inline keyboards only in private
chats. Telegram takes only https links in buttons, so an http link (a local try-out) is text alone.
"""

from __future__ import annotations

import logging

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, WebAppInfo
from telegram.constants import ChatType
from telegram.error import TelegramError

from bot.adapters.telegram.ids import chat_key, user_key
from bot.core.app_commands import AppAnswer, AppCommands

log = logging.getLogger(__name__)
OPEN = "Open the app"


def link_buttons(answer: AppAnswer, *, private: bool) -> InlineKeyboardMarkup | None:
    if answer.url is None or not answer.url.startswith("https://"):
        return None
    if private:
        return InlineKeyboardMarkup([[InlineKeyboardButton(OPEN, web_app=WebAppInfo(answer.url))]])
    return InlineKeyboardMarkup([[InlineKeyboardButton(OPEN, url=answer.url)]])


async def build_app(apps: AppCommands, message: Message, user_id: int, request: str) -> None:
    status: Message | None = None

    async def show(step: str) -> None:
        nonlocal status
        try:
            if status is None:
                status = await message.reply_text(step)
            else:
                await status.edit_text(step)
        except TelegramError as exc:  # progress is a courtesy; the answer still comes
            log.info("app progress not shown: %s", exc)

    answer = await apps.build(user_key(user_id), chat_key(message.chat.id), request, show)
    markup = link_buttons(answer, private=message.chat.type == ChatType.PRIVATE)
    if status is not None:
        try:
            await status.edit_text(answer.text, reply_markup=markup)
            return
        except TelegramError as exc:
            log.info("app status not edited, sending the answer instead: %s", exc)
    await message.reply_text(answer.text, reply_markup=markup)
