"""Proactive messages on Telegram, from any process: python-telegram-bot's `Bot` over HTTP.

A worker has no Application and no update loop; it only sends. The person's private chat is
their own id (Telegram's private chat id is the user id). A 403 is Telegram's answer for a person
who blocked the bot (or deleted their account): `RecipientGone`, and beat marks them inactive. A
send that may have landed (delivery_rule.py) is `DeliveryUnknown`: never sent again.
"""

from __future__ import annotations

import asyncio

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import Forbidden, RetryAfter, TelegramError

from bot.adapters.telegram.delivery_rule import MaybeDelivered
from bot.adapters.telegram.ids import PLATFORM, chat_key
from bot.adapters.telegram.transport import AiohttpRequest
from bot.core.errors import DeliveryError, DeliveryUnknown, RecipientGone
from bot.core.proactive.models import DONT_SUGGEST_AGAIN

# A 429 means Telegram did not take the message, so sending again cannot repeat it: wait as told,
# a few times, as long as a beat can wait.
RETRIES_AFTER_429 = 3
MAX_WAIT_S = 30.0
# The button's data names the chat's person, so that nobody else's press can count (commands.py).
NEVER_PREFIX = "pro:never:"


def _number(key: str) -> int:
    """The Telegram id inside a platform-qualified key ("telegram:42" → 42)."""
    platform, _, number = key.partition(":")
    if platform != PLATFORM or not number.lstrip("-").isdigit():
        raise DeliveryError(f"not a Telegram chat: {key!r}")
    return int(number)


class TelegramMessenger:
    platform = PLATFORM

    def __init__(self, token: str, api_base_url: str, file_base_url: str) -> None:
        self._bot = Bot(token, base_url=api_base_url, base_file_url=file_base_url, request=AiohttpRequest(4))
        self._open = False

    async def close(self) -> None:
        if self._open:
            self._open = False
            await self._bot.shutdown()

    async def private_chat(self, user_id: str) -> str:
        return chat_key(_number(user_id))

    def reaction_chat(self, chat_id: str) -> str:
        return str(_number(chat_id))  # as feedback.py and chat.py's LinkTo name it

    async def send(self, chat_id: str, text: str, *, never_again: bool = False) -> str:
        number = _number(chat_id)
        markup = None
        if never_again:
            button = InlineKeyboardButton(DONT_SUGGEST_AGAIN, callback_data=f"{NEVER_PREFIX}{number}")
            markup = InlineKeyboardMarkup([[button]])
        try:
            if not self._open:  # opened by the first message: a beat with nothing to say calls nothing
                await self._bot.initialize()
                self._open = True
            for _ in range(RETRIES_AFTER_429):
                try:
                    message = await self._bot.send_message(number, text, reply_markup=markup)
                    break
                except RetryAfter as exc:
                    await asyncio.sleep(min(_seconds(exc), MAX_WAIT_S))
            else:
                message = await self._bot.send_message(number, text, reply_markup=markup)
        except MaybeDelivered as exc:
            raise DeliveryUnknown(f"Telegram may have delivered it: {exc.message}") from exc
        except Forbidden as exc:
            raise RecipientGone(f"Telegram refused {chat_id}: {exc.message}") from exc
        except TelegramError as exc:
            raise DeliveryError(f"Telegram did not take the message: {exc.message}") from exc
        return str(message.message_id)


def _seconds(exc: RetryAfter) -> float:
    wait = exc.retry_after
    return float(wait.total_seconds() if hasattr(wait, "total_seconds") else wait)
