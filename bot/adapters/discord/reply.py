"""One message in, one reply out: run the core's conversation and show it on a surface.

Shared by channel messages and /chat, so both stream, split, link and store alike.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable

import aiohttp
import discord

from bot.adapters.discord.context import Unlinked
from bot.adapters.discord.options import MESSAGE_LIMIT
from bot.adapters.discord.policy import PLATFORM
from bot.adapters.discord.surfaces import ReplySurface
from bot.adapters.streaming import StreamedReply
from bot.core.conversation import Conversation
from bot.core.errors import KindredError
from bot.core.events import Refusal, ReplyChunk, ReplyDone, UserMessage

log = logging.getLogger(__name__)

SORRY = "Sorry, something went wrong on my side and I couldn't answer that. Please try again."


async def shown(step: Awaitable[object]) -> bool:
    """Run one display step. A failed one (no permission, message deleted) is logged, not raised:
    the conversation must run to its end so that the reply is stored all the same."""
    try:
        await step
    except discord.HTTPException as exc:
        log.warning("could not show a reply on Discord: %s %s", exc.status, exc.text)
        return False
    except (aiohttp.ClientError, TimeoutError) as exc:
        log.warning("could not reach Discord to show a reply: %s", type(exc).__name__)
        return False
    return True


class TrackedSurface:
    """A surface that notes each message it posts as not yet linked to a stored reply."""

    def __init__(self, surface: ReplySurface, unlinked: Unlinked) -> None:
        self.surface = surface
        self.unlinked = unlinked
        self.posted: list[str] = []

    async def send(self, text: str) -> str:
        message_id = await self.surface.send(text)
        self.unlinked.shown(message_id)
        self.posted.append(message_id)
        return message_id

    async def edit(self, message_id: str, text: str) -> None:
        await self.surface.edit(message_id, text)

    async def attach(self, message_id: str, view: discord.ui.View) -> None:
        await self.surface.attach(message_id, view)


async def deliver(
    conversation: Conversation,
    message: UserMessage,
    surface: ReplySurface,
    *,
    interval_s: float,
    unlinked: Unlinked,
    buttons: discord.ui.View | None = None,
) -> list[str]:
    """Stream the reply to `message` onto `surface`; returns the ids of the messages that show it.

    The finished reply is linked to those messages so that reactions on any of them count, even
    reactions that arrived while it was being written.
    """
    tracked = TrackedSurface(surface, unlinked)
    try:
        return await _run(conversation, message, tracked, interval_s, buttons)
    finally:
        unlinked.done(tracked.posted)


async def _run(
    conversation: Conversation,
    message: UserMessage,
    surface: ReplySurface,
    interval_s: float,
    buttons: discord.ui.View | None,
) -> list[str]:
    stream = StreamedReply(surface, limit=MESSAGE_LIMIT, interval_s=interval_s)
    showing = True
    try:
        async for event in conversation.handle_message(message):
            if isinstance(event, ReplyChunk):
                showing = showing and await shown(stream.add(event.text))
            elif isinstance(event, Refusal):
                await shown(stream.finish(event.text))
            elif isinstance(event, ReplyDone):
                await _finish(conversation, message, surface, stream, event, buttons)
    except KindredError as exc:
        # The core keeps what it could not store; the person at least hears that it failed.
        log.error("a Discord reply failed: %s", exc)
        await shown(surface.send(SORRY))
    return stream.message_ids


async def _finish(
    conversation: Conversation,
    message: UserMessage,
    surface: ReplySurface,
    stream: StreamedReply,
    done: ReplyDone,
    buttons: discord.ui.View | None,
) -> None:
    await shown(stream.finish(done.text))
    ids = stream.message_ids
    await conversation.link_reply(PLATFORM, message.chat_id, ids, done, message.user_id)
    if done.notice:
        await shown(surface.send(done.notice))
    if buttons is not None and done.turn_id is not None and ids:
        await shown(surface.attach(ids[-1], buttons))
