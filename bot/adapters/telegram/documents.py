"""Documents in, kept as the person's document memories, and a short answer out.

Which documents to read is decided as for voice notes (a private chat, or in a group a reply to
the bot or a caption that mentions it). The size Telegram gives refuses a file before it is
downloaded; the core reads it by its content, never its name (bot/core/chat/documents.py). A
document whose MIME type says image is left to the image handler (a photo sent as a file); a long
file's steps are shown in one status message, edited as they pass, as /app builds show theirs.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from telegram import Bot, Message, Update
from telegram.constants import ChatType
from telegram.ext import ContextTypes, filters

from bot.adapters.telegram.chat import ChatHandler
from bot.adapters.telegram.ids import chat_key, place_key, user_key
from bot.adapters.telegram.voice import (
    Attachment,
    addressed,
    caption_of,
    download,
    from_a_person,
    status_message,
)
from bot.core.chat.documents import ChatDocuments
from bot.core.events import DocumentNote, Refusal, ReplyEvent
from bot.core.media.models import MediaFile

log = logging.getLogger(__name__)

DOCUMENTS = filters.Document.ALL & ~filters.Document.IMAGE


def document_attachment(message: Message) -> Attachment | None:
    """The document of `message`; None for anything else, or one whose fields are not the types
    the Bot API promises."""
    found = message.document
    if found is None or not isinstance(found.file_id, str) or not found.file_id:
        return None
    size = found.file_size
    if size is not None and type(size) is not int:
        return None
    name = found.file_name if isinstance(found.file_name, str) else ""
    mime = found.mime_type if isinstance(found.mime_type, str) else ""
    return Attachment(found.file_id, "document", size, None, name, mime)


class DocumentHandler:
    """Keeps a document and answers through the chat's own delivery (ChatHandler.answer)."""

    def __init__(self, chat: ChatHandler, documents: ChatDocuments) -> None:
        self.chat = chat
        self.documents = documents

    async def __call__(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        bot = context.bot
        sent = from_a_person(update)
        if sent is None:
            return
        message, person_id = sent
        found = document_attachment(message)
        if found is None:
            return
        if not addressed(message, bot.id, bot.username, self.chat):
            return
        user_id = user_key(person_id)
        if not await self.chat.admitted(message, user_id):
            return
        await self.chat.answer(message, user_id, self._kept(bot, message, user_id, found))

    async def _kept(
        self, bot: Bot, message: Message, user_id: str, found: Attachment
    ) -> AsyncIterator[ReplyEvent]:
        refused = self.documents.refusal(found.size, found.name)
        if refused is not None:
            yield refused
            return
        data = await download(bot, found)
        if isinstance(data, Refusal):
            yield Refusal(data.text.replace("recording", "file").replace("listen to", "read"))
            return
        private = message.chat.type == ChatType.PRIVATE
        note = DocumentNote(
            user_id=user_id,
            chat_id=chat_key(message.chat.id),
            document=MediaFile("document", data, found.name, found.mime),
            sent_at=message.date,
            idempotency_key=f"telegram:{message.chat.id}:{message.message_id}",
            private=private,
            caption=caption_of(message, private, bot.username),
            places=(place_key(message.chat.id),),
        )
        async for event in self.documents.handle(note, status_message(message)):
            yield event
