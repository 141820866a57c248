"""Voice notes, audio files and video notes in, a streamed reply out: the same chat path as text.

Which notes to hear is decided as for text (a private chat, or in a group a reply to the bot or a
caption that mentions it); what the platform says of a note (size, duration) may refuse it before
anything is downloaded; then the file comes through the Bot API (`getFile`, then the file server)
and the core hears it (bot/core/chat/voice.py). A file that cannot be fetched gets one line, and
nothing is stored.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta

from telegram import Audio, Bot, Chat, Message, Update, Voice
from telegram import VideoNote as TelegramVideoNote
from telegram.constants import ChatType
from telegram.error import BadRequest, TelegramError
from telegram.ext import ContextTypes, filters
from telegram.warnings import PTBDeprecationWarning

from bot.adapters.telegram.chat import ChatHandler, is_addressed, without_mention
from bot.adapters.telegram.ids import chat_key, place_key, user_key
from bot.core.chat.voice import VoiceNotes
from bot.core.events import Refusal, ReplyEvent, VoiceNote
from bot.core.media.models import MediaFile, MediaKind
from bot.core.media.ports import Show

log = logging.getLogger(__name__)

NOTES = filters.VOICE | filters.AUDIO | filters.VIDEO_NOTE
NOT_FETCHED = (
    "I couldn't fetch that recording from Telegram just now, so I haven't kept anything. "
    "Please send it again."
)
TOO_BIG_TO_FETCH = (
    "Telegram won't hand me files that large (20 MB at most), so I couldn't listen to that. Nothing was kept."
)


@dataclass(frozen=True, slots=True)
class Attachment:
    """The file a note carries, as the message describes it (its size and duration may be missing)."""

    file_id: str
    kind: MediaKind
    size: int | None
    duration_s: float | None
    name: str
    mime: str


def attachment(message: Message) -> Attachment | None:
    """The voice note, audio file or video note of `message`; None for anything else, or one whose
    fields are not the types the Bot API promises (a webhook post may carry anything)."""
    found: Voice | Audio | TelegramVideoNote | None = message.voice or message.audio or message.video_note
    if found is None or not isinstance(found.file_id, str) or not found.file_id:
        return None
    size = found.file_size
    if size is not None and type(size) is not int:
        return None
    kind: MediaKind = "audio" if isinstance(found, Audio) else "voice"
    name = found.file_name if isinstance(found, Audio) and isinstance(found.file_name, str) else ""
    mime = found.mime_type if isinstance(found, Voice | Audio) and isinstance(found.mime_type, str) else ""
    return Attachment(found.file_id, kind, size, _seconds(found), name, mime)


def _seconds(found: Voice | Audio | TelegramVideoNote) -> float | None:
    """The duration the message gives; None when it is not a number (checked again on decoding)."""
    with warnings.catch_warnings():
        # PTB 22 warns that durations become timedelta in its next major version: either is read.
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        try:
            value: object = found.duration
        except (AttributeError, TypeError, ValueError, OverflowError):
            return None
    if isinstance(value, timedelta):
        return value.total_seconds()
    return float(value) if type(value) in (int, float) else None  # type: ignore[arg-type]


def caption_of(message: Message, private: bool, bot_username: str) -> str:
    caption = message.caption if isinstance(message.caption, str) else ""
    return caption if private else without_mention(caption, bot_username)


def addressed(message: Message, bot_id: int, bot_username: str, handler: ChatHandler) -> bool:
    if message.caption is not None and not isinstance(message.caption, str):
        return False
    if message.caption is None and message.caption_entities:
        return False  # entities without a caption: nothing they could mention
    return is_addressed(message, bot_id, bot_username, handler.policy.group_mode)


def from_a_person(update: Update) -> tuple[Message, int] | None:
    """The message and its sender's id, when a person sent it in a chat: not a bot, a channel or
    an automatic forward (no person to remember it for; see chat.py's incoming)."""
    message, person = update.effective_message, update.effective_user
    if message is None or person is None or person.is_bot or type(person.id) is not int:
        return None
    if message.sender_chat is not None or message.is_automatic_forward:
        return None
    if not isinstance(message.chat, Chat) or type(message.chat.id) is not int:
        return None
    return message, person.id


class VoiceHandler:
    """Hears a note and answers it through the chat's own delivery (ChatHandler.answer)."""

    def __init__(self, chat: ChatHandler, voice: VoiceNotes) -> None:
        self.chat = chat
        self.voice = voice

    async def __call__(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        bot = context.bot
        sent = from_a_person(update)
        if sent is None:
            return
        message, person_id = sent
        found = attachment(message)
        if found is None:
            return
        if not addressed(message, bot.id, bot.username, self.chat):
            return
        user_id = user_key(person_id)
        if not await self.chat.admitted(message, user_id):
            return
        await self.chat.answer(message, user_id, self._heard(bot, message, user_id, found))

    async def _heard(
        self, bot: Bot, message: Message, user_id: str, found: Attachment
    ) -> AsyncIterator[ReplyEvent]:
        refused = self.voice.refusal(found.size, found.duration_s)
        if refused is not None:
            yield refused
            return
        data = await download(bot, found)
        if isinstance(data, Refusal):
            yield data
            return
        private = message.chat.type == ChatType.PRIVATE
        note = VoiceNote(
            user_id=user_id,
            chat_id=chat_key(message.chat.id),
            audio=MediaFile(found.kind, data, found.name, found.mime, found.duration_s),
            sent_at=message.date,
            # A redelivered update (webhook retry, restart mid-poll) stores nothing twice.
            idempotency_key=f"telegram:{message.chat.id}:{message.message_id}",
            private=private,
            caption=caption_of(message, private, bot.username),
            places=(place_key(message.chat.id),),
        )
        async for event in self.voice.handle(note, status_message(message)):
            yield event


def status_message(message: Message) -> Show:
    """Shows slow work's steps (a long recording heard, a long document read) in one status
    message, a reply to `message`, edited as they pass, as /app builds show theirs."""
    status: Message | None = None

    async def show(step: str) -> None:
        nonlocal status
        try:
            if status is None:
                status = await message.reply_text(step)
            else:
                await status.edit_text(step)
        except TelegramError as exc:  # progress is a courtesy; the answer still comes
            log.info("progress not shown: %s", exc)

    return show


async def download(bot: Bot, found: Attachment) -> bytes | Refusal:
    """The note's bytes through the Bot API, or why not in words for the person."""
    try:
        file = await bot.get_file(found.file_id)
        return bytes(await file.download_as_bytearray())
    except BadRequest as exc:
        log.info("telegram: a note's file was not handed over: %s", exc)
        return Refusal(TOO_BIG_TO_FETCH if "too big" in str(exc).lower() else NOT_FETCHED)
    except TelegramError as exc:
        log.warning("telegram: a note's file could not be fetched: %s", type(exc).__name__)
        return Refusal(NOT_FETCHED)
