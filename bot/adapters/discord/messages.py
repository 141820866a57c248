"""Messages in DMs and servers: decide whether Kindred is addressed, then answer through the core."""

from __future__ import annotations

import discord

from bot.adapters.discord.context import Kindred
from bot.adapters.discord.documents import document_attachment, kept
from bot.adapters.discord.failures import nonce_for
from bot.adapters.discord.images import image_attachment, seen
from bot.adapters.discord.policy import PLATFORM, chat_key, is_addressed, places, user_key, without_mention
from bot.adapters.discord.reply import Reply, deliver_events
from bot.adapters.discord.resend import tell_doubt
from bot.adapters.discord.surfaces import ChannelSurface, shown
from bot.adapters.discord.voice import audio_attachment, heard
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
        chat_id, timeout_s = chat_key(message.channel.id), self.kindred.options.request_timeout_s
        doubts = services.conversation.doubts
        doubt = await doubts.at_next_message(PLATFORM, chat_id, replied_to_me(me, message))
        if doubt is not None:
            await tell_doubt(message.channel, doubt, key=key, timeout_s=timeout_s)
        await shown(message.channel.typing())
        user_message = UserMessage(
            user_id=user_id,
            chat_id=chat_id,
            text=without_mention(message.content, me.id),
            sent_at=message.created_at,
            idempotency_key=key,
            private=message.guild is None,
            places=where,
        )
        attachment = audio_attachment(message) if services.voice is not None else None
        picture = image_attachment(message) if services.images is not None else None
        document = document_attachment(message) if services.documents is not None else None
        if attachment is not None and services.voice is not None:
            events = heard(services.voice, attachment, user_message, message.channel)
        elif picture is not None and services.images is not None:
            events = seen(services.images, picture, user_message)
        elif document is not None and services.documents is not None:
            events = kept(services.documents, document, user_message, message.channel)
        else:
            events = services.conversation.handle_message(user_message)
        async with self.kindred.in_flight.track():
            await deliver_events(
                services.conversation,
                events,
                surface,
                Reply(key, chat_id, user_id),
                interval_s=self.kindred.options.edit_interval_s,
                first_delay_s=self.kindred.options.first_show_delay_s,
                unlinked=self.kindred.unlinked,
                spoken=services.spoken,
            )

    @staticmethod
    def _addressed(me: discord.ClientUser, message: discord.Message) -> bool:
        return is_addressed(
            from_a_bot=message.author.bot,
            in_dm=message.guild is None,
            mentions_me=any(user.id == me.id for user in message.mentions),
            replies_to_me=replied_to_me(me, message) is not None,
        )


def replied_to_me(me: discord.ClientUser, message: discord.Message) -> str | None:
    """The id of Kindred's message that `message` replies to, if it replies to one (Discord sends
    the message it references, so even one whose id Kindred never learned is known as its own)."""
    reference = message.reference.resolved if message.reference is not None else None
    if not isinstance(reference, discord.Message) or reference.author.id != me.id:
        return None
    return str(reference.id)
