"""Document attachments in, kept as the person's document memories, and a short answer out, on
Discord: the same path as text and voice messages.

An attachment that is neither audio (heard: voice.py), an image nor a video (left to the image
path) is read as a document: its size as Discord gives it may refuse it before the download; then
it comes from Discord's CDN and the core keeps it by its content (bot/core/chat/documents.py),
with the message's text, if any, as its caption. A long file's steps show in one message, edited
as they pass. In servers Discord sends attachments only of messages that mention the bot or reply
to it, unless the message-content intent is on.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import aiohttp
import discord

from bot.adapters.discord.voice import status_message
from bot.core.chat.documents import ChatDocuments
from bot.core.events import DocumentNote, Refusal, ReplyEvent, UserMessage
from bot.core.media.models import MediaFile

log = logging.getLogger(__name__)

NOT_FETCHED = (
    "I couldn't fetch that file from Discord just now, so I haven't kept anything. Please send it again."
)
# Read by other parts: audio is heard, images and videos are not documents.
NOT_DOCUMENTS = ("audio/", "image/", "video/")


def document_attachment(message: discord.Message) -> discord.Attachment | None:
    """The message's first attachment that is not audio, an image or a video; None without one."""
    for attachment in message.attachments:
        kind = attachment.content_type if isinstance(attachment.content_type, str) else ""
        if not attachment.is_voice_message() and not kind.startswith(NOT_DOCUMENTS):
            return attachment
    return None


async def kept(
    documents: ChatDocuments,
    attachment: discord.Attachment,
    text: UserMessage,
    channel: discord.abc.Messageable,
) -> AsyncIterator[ReplyEvent]:
    """The answer to a document, or one Refusal; `text` is the message as it would be read."""
    size = attachment.size if type(attachment.size) is int else None
    name = str(attachment.filename)
    refused = documents.refusal(size, name)
    if refused is not None:
        yield refused
        return
    try:
        data = await attachment.read()
    except (discord.HTTPException, aiohttp.ClientError, TimeoutError) as exc:
        log.warning("discord: an attachment could not be fetched: %s", type(exc).__name__)
        yield Refusal(NOT_FETCHED)
        return
    mime = attachment.content_type if isinstance(attachment.content_type, str) else ""
    note = DocumentNote(
        text.user_id, text.chat_id, MediaFile("document", data, name, mime), text.sent_at,
        text.idempotency_key, text.private, caption=text.text, places=text.places,
    )  # fmt: skip
    async for event in documents.handle(note, status_message(channel)):
        yield event
