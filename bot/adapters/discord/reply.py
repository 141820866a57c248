"""One message in, one reply out: run the core's conversation and deliver it on a Discord surface.

Shared by channel messages and /chat, so both stream, split, link and store alike.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

import discord

from bot.adapters.delivery import Layout, LinkTo, MaybeShown
from bot.adapters.delivery import deliver as deliver_reply
from bot.adapters.discord.context import Unlinked
from bot.adapters.discord.failures import nonce_for
from bot.adapters.discord.options import MESSAGE_LIMIT
from bot.adapters.discord.policy import PLATFORM
from bot.adapters.discord.surfaces import ReplySurface
from bot.adapters.spoken import SpeakTo
from bot.core.chat.conversation import Conversation
from bot.core.chat.spoken import SpokenReplies
from bot.core.events import ReplyEvent, UserMessage


class DiscordReply:
    """The delivery's surface: notes each message it posts as not yet linked to a stored reply,
    and puts the feedback buttons, if any, on the last message of a stored one.

    Each create carries the nonce of its place in the reply (`key`: the reply's idempotency key).
    After a create that may have been delivered, it creates nothing more: sending the piece again
    could show it twice, and sending the next would show the reply out of order.
    """

    def __init__(
        self, surface: ReplySurface, unlinked: Unlinked, buttons: discord.ui.View | None, *, key: str
    ) -> None:
        self.surface = surface
        self.unlinked = unlinked
        self.buttons = buttons
        self.key = key
        self.posted: list[str] = []
        self.created = 0
        self.maybe_shown: MaybeShown | None = None

    async def send(self, text: str) -> str:
        if self.maybe_shown is not None:
            raise MaybeShown(f"not created again after a create that may have arrived ({self.maybe_shown})")
        try:
            message_id = await self.surface.send(text, nonce=nonce_for(self.key, self.created))
        except MaybeShown as exc:
            self.maybe_shown = exc
            raise
        self.created += 1
        self.unlinked.shown(message_id)
        self.posted.append(message_id)
        return message_id

    async def edit(self, message_id: str, text: str) -> None:
        await self.surface.edit(message_id, text)

    async def delete(self, message_id: str) -> None:
        await self.surface.delete(message_id)
        # Nothing will link a deleted message: a reaction waiting on it goes ahead (and finds none).
        self.posted.remove(message_id)
        self.unlinked.done([message_id])

    async def finish(self, message_ids: Sequence[str], stored: bool) -> None:
        if self.buttons is not None and stored and message_ids:
            await self.surface.attach(message_ids[-1], self.buttons)


async def deliver(
    conversation: Conversation,
    message: UserMessage,
    surface: ReplySurface,
    *,
    interval_s: float,
    unlinked: Unlinked,
    buttons: discord.ui.View | None = None,
    first_delay_s: float = 0.0,
    spoken: SpokenReplies | None = None,
) -> list[str]:
    """Stream the reply to `message` onto `surface`; returns the ids of the messages that show it.

    The finished reply is linked to those messages so that reactions on any of them count, even
    reactions that arrived while it was being written.
    """
    key = message.idempotency_key or f"{message.chat_id}@{message.sent_at.isoformat()}"
    return await deliver_events(
        conversation,
        conversation.handle_message(message),
        surface,
        Reply(key, message.chat_id, message.user_id),
        interval_s=interval_s,
        unlinked=unlinked,
        buttons=buttons,
        first_delay_s=first_delay_s,
        spoken=spoken,
    )


@dataclass(frozen=True, slots=True)
class Reply:
    """Whose reply it is: its idempotency key (each create's nonce), the chat and the person."""

    key: str
    chat_id: str
    user_id: str


async def deliver_events(
    conversation: Conversation,
    events: AsyncIterator[ReplyEvent],
    surface: ReplySurface,
    reply_of: Reply,
    *,
    interval_s: float,
    unlinked: Unlinked,
    buttons: discord.ui.View | None = None,
    first_delay_s: float = 0.0,
    spoken: SpokenReplies | None = None,
) -> list[str]:
    """Stream the core's `events` (a text's reply, or a voice note's) onto `surface`, linked as
    `deliver` links them, then said aloud when the person asked (`spoken`); returns the ids of the
    messages that show the reply."""
    reply = DiscordReply(surface, unlinked, buttons, key=reply_of.key)
    link = LinkTo(conversation, PLATFORM, reply_of.chat_id, reply_of.user_id)
    speak = SpeakTo(spoken, reply_of.user_id, surface) if spoken is not None else None
    try:
        delivered = await deliver_reply(
            events,
            reply,
            Layout(limit=MESSAGE_LIMIT, interval_s=interval_s, first_delay_s=first_delay_s),
            link=link,
            speak=speak,
        )
    finally:
        unlinked.done(reply.posted)
    return list(delivered.message_ids)
