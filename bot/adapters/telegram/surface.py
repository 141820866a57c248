"""Messages in one Telegram chat, as the delivery's surface. Telegram errors map here."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from telegram import Bot, InlineKeyboardMarkup, InputFile
from telegram.error import BadRequest, Forbidden, TelegramError

from bot.adapters.delivery import Gone, MaybeShown, NotShown
from bot.adapters.telegram.delivery_rule import MaybeDelivered
from bot.core.media.models import Speech

log = logging.getLogger(__name__)

# Telegram's limit per text message, counted in UTF-16 code units (an emoji can take two).
MESSAGE_LIMIT = 4096


class Unreachable(Gone):
    """The person blocked the bot or left the chat: sending again cannot succeed."""


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class TelegramSurface:
    """Plain text only: no parse mode, so nothing the model writes can break a send."""

    def __init__(
        self,
        bot: Bot,
        chat_id: int,
        *,
        reply_to: int | None = None,
        thread_id: int | None = None,
        buttons: InlineKeyboardMarkup | None = None,
    ):
        self.bot = bot
        self.chat_id = chat_id
        self.reply_to = reply_to
        self.thread_id = thread_id
        self.buttons = buttons
        self._draft_id = abs(hash((chat_id, reply_to))) % 2_000_000_000 + 1
        # Buttons for the message(s) of a finished reply; set by `ending`, before the final send or edit.
        self.final_markup: InlineKeyboardMarkup | None = None
        self.marked: set[str] = set()

    def ending(self, stored: bool) -> None:
        """The reply has ended: the buttons (for a stored reply) ride on the send or edit that shows
        it finished, so that a quick reply costs one Bot API call; `finish` adds them otherwise."""
        self.final_markup = self.buttons if stored else None

    async def send(self, text: str) -> str:
        with _refusals_mapped():
            message = await self.bot.send_message(
                self.chat_id,
                text,
                reply_to_message_id=self.reply_to,
                allow_sending_without_reply=True,
                message_thread_id=self.thread_id,
                reply_markup=self.final_markup,
            )
        # Only the first piece answers the person's message; the rest follow it.
        self.reply_to = None
        if self.final_markup:
            self.marked.add(str(message.message_id))
        return str(message.message_id)

    async def edit(self, message_id: str, text: str) -> None:
        with _refusals_mapped(unchanged_is_fine=True):
            await self.bot.edit_message_text(
                text, chat_id=self.chat_id, message_id=int(message_id), reply_markup=self.final_markup
            )
            if self.final_markup:
                self.marked.add(message_id)

    async def delete(self, message_id: str) -> None:
        with _refusals_mapped():
            await self.bot.delete_message(self.chat_id, int(message_id))
        self.marked.discard(message_id)

    async def draft(self, text: str) -> None:
        with _refusals_mapped():
            try:
                await self.bot.send_message_draft(
                    self.chat_id, self._draft_id, text, message_thread_id=self.thread_id
                )
            except BadRequest as exc:
                # A draft is only a preview: losing one costs nothing, the final message still comes.
                log.info("draft not shown: %s", exc)

    async def send_voice(self, speech: Speech) -> str:
        """A voice note (sendVoice: OGG/Opus), after the reply it says, in the reply's thread."""
        with _refusals_mapped():
            message = await self.bot.send_voice(
                self.chat_id,
                InputFile(speech.data, filename=speech.filename),
                duration=max(1, round(speech.duration_s)),
                message_thread_id=self.thread_id,
            )
        return str(message.message_id)

    async def say(self, text: str) -> None:
        with _refusals_mapped():
            await self.bot.send_message(self.chat_id, text, message_thread_id=self.thread_id)

    async def finish(self, message_ids: Sequence[str], stored: bool) -> None:
        if self.buttons is None or not stored or not message_ids or message_ids[-1] in self.marked:
            return
        with _refusals_mapped(unchanged_is_fine=True):
            await self.bot.edit_message_reply_markup(
                self.chat_id, int(message_ids[-1]), reply_markup=self.buttons
            )


@contextmanager
def _refusals_mapped(*, unchanged_is_fine: bool = False) -> Iterator[None]:
    """Forbidden (blocked, removed from the chat) becomes Unreachable, any other Telegram error
    NotShown, a send that may have landed MaybeShown; with `unchanged_is_fine`, Telegram's
    "message is not modified" means the text already shows, which is success."""
    try:
        yield
    except MaybeDelivered as exc:
        raise MaybeShown(str(exc)) from None
    except BadRequest as exc:
        if not (unchanged_is_fine and "not modified" in str(exc).lower()):
            raise NotShown(f"{type(exc).__name__}: {exc}") from None
    except Forbidden as exc:
        raise Unreachable(str(exc)) from None
    except TelegramError as exc:
        raise NotShown(f"{type(exc).__name__}: {exc}") from None
