"""Voice messages and audio attachments in, a reply out, on Discord: the same path as text.

A message that carries a voice message (or any `audio/*` attachment) is heard instead of read:
what Discord says of the file (size, a voice message's duration) may refuse it before the
download; then the file comes from Discord's CDN and the core hears it (bot/core/chat/voice.py),
with the message's text, if any, as its caption. In servers Discord sends attachments only of
messages that mention the bot or reply to it, unless the message-content intent is on.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import aiohttp
import discord

from bot.core.chat.voice import VoiceNotes
from bot.core.events import Refusal, ReplyEvent, UserMessage, VoiceNote
from bot.core.media.models import MediaFile, MediaKind
from bot.core.media.ports import Show

log = logging.getLogger(__name__)

NOT_FETCHED = (
    "I couldn't fetch that recording from Discord just now, so I haven't kept anything. Please send it again."
)


def audio_attachment(message: discord.Message) -> discord.Attachment | None:
    """The message's voice message or first audio attachment; None for a message without one."""
    for attachment in message.attachments:
        if attachment.is_voice_message() or (attachment.content_type or "").startswith("audio/"):
            return attachment
    return None


async def heard(
    voice: VoiceNotes,
    attachment: discord.Attachment,
    text: UserMessage,
    channel: discord.abc.Messageable | None = None,
) -> AsyncIterator[ReplyEvent]:
    """The reply to a voice message, or one Refusal; `text` is the message as it would be read."""
    # discord.py checks no types: what is not a number is measured from the file instead.
    size = attachment.size if type(attachment.size) is int else None
    raw: object = attachment.duration
    duration = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None
    refused = voice.refusal(size, duration)
    if refused is not None:
        yield refused
        return
    try:
        data = await attachment.read()
    except (discord.HTTPException, aiohttp.ClientError, TimeoutError) as exc:
        log.warning("discord: an attachment could not be fetched: %s", type(exc).__name__)
        yield Refusal(NOT_FETCHED)
        return
    kind: MediaKind = "voice" if attachment.is_voice_message() else "audio"
    mime = attachment.content_type if isinstance(attachment.content_type, str) else ""
    audio = MediaFile(kind, data, str(attachment.filename), mime, duration)
    note = VoiceNote(
        text.user_id, text.chat_id, audio, text.sent_at, text.idempotency_key, text.private,
        caption=text.text, places=text.places,
    )  # fmt: skip
    async for event in voice.handle(note, status_message(channel) if channel is not None else None):
        yield event


def status_message(channel: discord.abc.Messageable) -> Show:
    """Shows slow work's steps (a long recording heard, a long document read) in one message in
    `channel`, edited as they pass."""
    status: discord.Message | None = None

    async def show(step: str) -> None:
        nonlocal status
        try:
            if status is None:
                status = await channel.send(step)
            else:
                await status.edit(content=step)
        except discord.HTTPException as exc:  # progress is a courtesy; the answer still comes
            log.info("progress not shown: %s", exc)

    return show
