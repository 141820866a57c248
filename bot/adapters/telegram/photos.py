"""Photos and image files in, a streamed reply out: the same chat path as text and voice notes.

A photo comes in several sizes; the largest that fits the limit is fetched. A file sent as a
document is taken here only when Telegram says it is an image (`image/*`, from its name on the
sender's side); its content is checked after the download (bot/media/images.py), so a PDF named
`holiday.jpg` is answered that it is not an image. Every other document is left to the documents'
handler. Which photos to see is decided as for voice notes (a private chat, or in a group a reply
to the bot or a caption that mentions it); the caption is the person's words.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

from telegram import Bot, Document, Message, PhotoSize, Update
from telegram.constants import ChatType
from telegram.error import BadRequest, TelegramError
from telegram.ext import ContextTypes, filters

from bot.adapters.telegram.chat import ChatHandler
from bot.adapters.telegram.ids import chat_key, place_key, user_key
from bot.adapters.telegram.voice import addressed, caption_of, from_a_person
from bot.core.chat.images import Images
from bot.core.events import ImageNote, Refusal, ReplyEvent
from bot.core.media.models import MediaFile

log = logging.getLogger(__name__)

PHOTOS = filters.PHOTO | filters.Document.IMAGE
NOT_FETCHED = (
    "I couldn't fetch that image from Telegram just now, so I haven't kept anything. Please send it again."
)
TOO_BIG_TO_FETCH = (
    "Telegram won't hand me files that large (20 MB at most), so I couldn't see that. Nothing was kept."
)


@dataclass(frozen=True, slots=True)
class Picture:
    """The file to fetch, as the message describes it (its size may be missing)."""

    file_id: str
    size: int | None
    name: str
    mime: str


def picture(message: Message, max_bytes: int) -> Picture | None:
    """The photo size to fetch (the largest within `max_bytes`, else the smallest, to be refused
    by its size), or the image document; None for anything else, or fields of the wrong types."""
    if message.photo:
        sizes = [s for s in message.photo if isinstance(s, PhotoSize) and _valid(s.file_id, s.file_size)]
        if not sizes:
            return None
        fitting = [s for s in sizes if s.file_size is None or s.file_size <= max_bytes]
        chosen = max(fitting, key=_pixels) if fitting else min(sizes, key=_pixels)
        return Picture(chosen.file_id, chosen.file_size, "photo.jpg", "image/jpeg")
    document = message.document
    if not isinstance(document, Document) or not _valid(document.file_id, document.file_size):
        return None
    name = document.file_name if isinstance(document.file_name, str) else ""
    mime = document.mime_type if isinstance(document.mime_type, str) else ""
    return Picture(document.file_id, document.file_size, name, mime) if mime.startswith("image/") else None


def _valid(file_id: object, size: object) -> bool:
    return isinstance(file_id, str) and bool(file_id) and (size is None or type(size) is int)


def _pixels(size: PhotoSize) -> int:
    width, height = size.width, size.height
    return width * height if type(width) is int and type(height) is int else 0


class PhotoHandler:
    """Sees a photo and answers it through the chat's own delivery (ChatHandler.answer)."""

    def __init__(self, chat: ChatHandler, images: Images) -> None:
        self.chat = chat
        self.images = images

    async def __call__(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        bot = context.bot
        sent = from_a_person(update)
        if sent is None:
            return
        message, person_id = sent
        found = picture(message, self.images.policy.max_bytes)
        if found is None:
            return
        if not addressed(message, bot.id, bot.username, self.chat):
            return
        user_id = user_key(person_id)
        if not await self.chat.admitted(message, user_id):
            return
        await self.chat.answer(message, user_id, self._seen(bot, message, user_id, found))

    async def _seen(
        self, bot: Bot, message: Message, user_id: str, found: Picture
    ) -> AsyncIterator[ReplyEvent]:
        private = message.chat.type == ChatType.PRIVATE
        note = ImageNote(
            user_id=user_id,
            chat_id=chat_key(message.chat.id),
            image=MediaFile("image", b"", found.name, found.mime),
            sent_at=message.date,
            # A redelivered update (webhook retry, restart mid-poll) stores nothing twice.
            idempotency_key=f"telegram:{message.chat.id}:{message.message_id}",
            private=private,
            caption=caption_of(message, private, bot.username),
            places=(place_key(message.chat.id),),
        )
        why = self.images.refusal(found.size)
        data = await _download(bot, found) if why is None else Refusal(why)
        if isinstance(data, Refusal):
            events = self.images.refused(note, data.text)
        else:
            events = self.images.handle(replace(note, image=replace(note.image, data=data)))
        async for event in events:
            yield event


async def _download(bot: Bot, found: Picture) -> bytes | Refusal:
    """The image's bytes through the Bot API, or why not in words for the person."""
    try:
        file = await bot.get_file(found.file_id)
        return bytes(await file.download_as_bytearray())
    except BadRequest as exc:
        log.info("telegram: an image's file was not handed over: %s", exc)
        return Refusal(TOO_BIG_TO_FETCH if "too big" in str(exc).lower() else NOT_FETCHED)
    except TelegramError as exc:
        log.warning("telegram: an image's file could not be fetched: %s", type(exc).__name__)
        return Refusal(NOT_FETCHED)
