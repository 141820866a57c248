"""Image attachments in, a reply out, on Discord: the same path as text and voice messages.

A message that carries an image (`image/*`, as Discord names it from the file's name) is seen
instead of only read: its size as Discord reports it may refuse it before the download; then the
file comes from Discord's CDN and the core sees it (bot/core/chat/images.py), its content checked
(a PDF named `.jpg` is answered that it is not an image), with the message's text as its caption.
In servers Discord sends attachments only of messages that mention the bot or reply to it, unless
the message-content intent is on.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import replace

import aiohttp
import discord

from bot.core.chat.images import Images
from bot.core.events import ImageNote, ReplyEvent, UserMessage
from bot.core.media.models import MediaFile

log = logging.getLogger(__name__)

NOT_FETCHED = (
    "I couldn't fetch that image from Discord just now, so I haven't kept anything. Please send it again."
)


def image_attachment(message: discord.Message) -> discord.Attachment | None:
    """The message's first image attachment; None for a message without one."""
    for attachment in message.attachments:
        if (attachment.content_type or "").startswith("image/"):
            return attachment
    return None


async def seen(
    images: Images, attachment: discord.Attachment, text: UserMessage
) -> AsyncIterator[ReplyEvent]:
    """The reply to an image, or one line; `text` is the message as it would be read."""
    mime = attachment.content_type if isinstance(attachment.content_type, str) else ""
    note = ImageNote(
        text.user_id, text.chat_id, MediaFile("image", b"", str(attachment.filename), mime), text.sent_at,
        text.idempotency_key, text.private, caption=text.text, places=text.places,
    )  # fmt: skip
    # discord.py checks no types: what is not a number is measured from the file instead.
    why = images.refusal(attachment.size if type(attachment.size) is int else None)
    if why is None:
        try:
            data = await attachment.read()
        except (discord.HTTPException, aiohttp.ClientError, TimeoutError) as exc:
            log.warning("discord: an image could not be fetched: %s", type(exc).__name__)
            why = NOT_FETCHED
        else:
            note = replace(note, image=replace(note.image, data=data))
    events = images.refused(note, why) if why is not None else images.handle(note)
    async for event in events:
        yield event
