"""Messages in DMs and servers: decide whether Kindred is addressed, then answer through the core."""

from __future__ import annotations

import discord

from bot.adapters.discord.context import Kindred
from bot.adapters.discord.failures import nonce_for
from bot.adapters.discord.policy import chat_key, is_addressed, places, user_key, without_mention
from bot.adapters.discord.reply import deliver
from bot.adapters.discord.surfaces import ChannelSurface, shown
from bot.core.chat.access import NOT_ALLOWED
from bot.core.chat.ratelimit import slow_down
from bot.core.events import UserMessage


class ChannelMessages:
    def __init__(self, kindred: Kindred) -> None:
        self.kindred = kindred

    async def handle(self, me: discord.ClientUser, message: discord.Message) -> None:
        """Answer `message` if it is meant for Kindred; everything else is left alone."""
        if not self._addressed(me, message):
            return
        services = self.kindred.services
        surface = ChannelSurface(message, timeout_s=self.kindred.options.request_timeout_s)
        # Discord may deliver a message twice across a RESUME; its id stores it once.
        key = f"discord:{message.id}"
        user_id = user_key(message.author.id)
        where = places(message.guild.id if message.guild is not None else None)
        if not services.access.may_talk(user_id, *where):
            await shown(surface.send(NOT_ALLOWED, nonce=nonce_for(key, 0)))
            return
        wait_s = await services.limiter.take(user_id)
        if wait_s > 0:
            await shown(surface.send(slow_down(wait_s), nonce=nonce_for(key, 0)))
            return
        await shown(message.channel.typing())
        user_message = UserMessage(
            user_id=user_id,
            chat_id=chat_key(message.channel.id),
            text=without_mention(message.content, me.id),
            sent_at=message.created_at,
            idempotency_key=key,
            private=message.guild is None,
        )
        async with self.kindred.in_flight.track():
            await deliver(
                services.conversation,
                user_message,
                surface,
                interval_s=self.kindred.options.edit_interval_s,
                unlinked=self.kindred.unlinked,
            )

    @staticmethod
    def _addressed(me: discord.ClientUser, message: discord.Message) -> bool:
        reference = message.reference.resolved if message.reference is not None else None
        return is_addressed(
            from_a_bot=message.author.bot,
            in_dm=message.guild is None,
            mentions_me=any(user.id == me.id for user in message.mentions),
            replies_to_me=isinstance(reference, discord.Message) and reference.author.id == me.id,
        )
