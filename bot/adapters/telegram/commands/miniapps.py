"""/app and /apps on Telegram: one status message edited as the build's steps pass, then the link.

In a private chat the link is a web-app button (the app opens inside Telegram, in its theme); in a
group it is a URL button, since Telegram allows web-app buttons in inline keyboards only in private
chats. Telegram takes only https links in buttons, so an http link (a local try-out) is text alone.
A build that may work when asked again carries a "Try again" button; its press (a callback query)
re-runs the same request, for the person who made it, in the same message.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from telegram import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message, Update, WebAppInfo
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import CallbackQueryHandler, ContextTypes

from bot.adapters.gates import miniapps_of
from bot.adapters.telegram.commands.feature import Feature, Handler, told_unless_private, words
from bot.adapters.telegram.ids import chat_key, user_key
from bot.core.miniapps.commands import RETRY_GONE, RETRY_LABEL, AppAnswer, AppCommands, Show

log = logging.getLogger(__name__)
OPEN = "Open the app"
# callback_data is at most 64 bytes: this prefix and a 32-character retry id fit.
RETRY_PREFIX = "app-retry:"


def link_buttons(answer: AppAnswer, *, private: bool) -> InlineKeyboardMarkup | None:
    if answer.retry_id is not None:
        retry = InlineKeyboardButton(RETRY_LABEL, callback_data=f"{RETRY_PREFIX}{answer.retry_id}")
        return InlineKeyboardMarkup([[retry]])
    if answer.url is None or not answer.url.startswith("https://"):
        return None
    if private:
        return InlineKeyboardMarkup([[InlineKeyboardButton(OPEN, web_app=WebAppInfo(answer.url))]])
    return InlineKeyboardMarkup([[InlineKeyboardButton(OPEN, url=answer.url)]])


async def build_app(apps: AppCommands, message: Message, user_id: int, request: str) -> None:
    async def run(show: Show) -> AppAnswer:
        return await apps.build(user_key(user_id), chat_key(message.chat.id), request, show)

    await _answered(message, None, run)


async def retry_app(apps: AppCommands, query: CallbackQuery) -> None:
    """A press of "Try again": the same request again, shown in the message that offered it."""
    message, retry_id = query.message, (query.data or "").removeprefix(RETRY_PREFIX)
    if not isinstance(message, Message) or not apps.may_retry(user_key(query.from_user.id), retry_id):
        await query.answer(RETRY_GONE)  # the message stays as it is, for the person who asked
        return
    await query.answer()

    async def run(show: Show) -> AppAnswer:
        return await apps.retry(user_key(query.from_user.id), retry_id, show)

    await _answered(message, message, run)


async def _answered(
    message: Message, status: Message | None, run: Callable[[Show], Awaitable[AppAnswer]]
) -> None:
    """Run the build, one status message edited as it goes (`status`, or a reply to `message`)."""

    async def show(step: str) -> None:
        nonlocal status
        try:
            if status is None:
                status = await message.reply_text(step)
            else:
                await status.edit_text(step)
        except TelegramError as exc:  # progress is a courtesy; the answer still comes
            log.info("app progress not shown: %s", exc)

    answer = await run(show)
    markup = link_buttons(answer, private=message.chat.type == ChatType.PRIVATE)
    if status is not None:
        try:
            await status.edit_text(answer.text, reply_markup=markup)
            return
        except TelegramError as exc:
            log.info("app status not edited, sending the answer instead: %s", exc)
    await message.reply_text(answer.text, reply_markup=markup)


class Miniapps(Feature):
    def handlers(self) -> list[Handler]:
        return [
            self.command("app", self.app),
            self.command("apps", self.apps),
            CallbackQueryHandler(self.guarded(self.retry), pattern=f"^{RETRY_PREFIX}"),
        ]

    async def app(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        apps = await self._wired(message)
        if apps is not None:
            await build_app(apps, message, person.id, words(context))

    async def retry(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        assert query is not None
        apps = miniapps_of(self.services)
        if isinstance(apps, str):
            await query.answer()
            return
        await retry_app(apps, query)

    async def apps(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message, person = update.effective_message, update.effective_user
        assert message and person
        apps = await self._wired(message)
        if apps is None:
            return
        if await told_unless_private(message):  # each link is its app's key: not for a group to see
            return
        await message.reply_text(await apps.manage(user_key(person.id), words(context)))

    async def _wired(self, message: Message) -> AppCommands | None:
        """The mini-apps' commands; where they are not wired, None once the person is told so."""
        apps = miniapps_of(self.services)
        if isinstance(apps, str):
            await message.reply_text(apps)
            return None
        return apps
