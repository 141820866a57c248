"""Replies of unknown delivery on Discord: the core's one-line notice with a "send it again"
button, and the button's press, which sends the reply once, to its own person only
(core/chat/doubts.py; Telegram's twin is bot/adapters/telegram/resend.py).

The button is a `DynamicItem` whose custom id is the core's resend data (the turn id): its state
lives in the id, so a press works after a restart, whichever process showed the notice.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import discord

from bot.adapters.delivery import NotShown
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.failures import REQUEST_TIMEOUT_S, discord_call, nonce_for
from bot.adapters.discord.options import MESSAGE_LIMIT
from bot.adapters.discord.policy import PLATFORM, chat_key, places, user_key
from bot.adapters.discord.surfaces import shown
from bot.adapters.streaming import split_text
from bot.core.chat.access import NOT_ALLOWED
from bot.core.chat.doubts import NOTHING_TO_SEND, RESEND_PREFIX, SENT_AGAIN, Doubtful

log = logging.getLogger(__name__)

Button = discord.ui.Button[discord.ui.View]


class ResendButton(discord.ui.DynamicItem[Button], template=rf"{RESEND_PREFIX}(?P<turn>[0-9]{{1,19}})"):
    """The "send it again" button under the notice: pressed, it sends its reply once, to its person."""

    def __init__(self, doubt: Doubtful) -> None:
        super().__init__(
            discord.ui.Button(
                style=discord.ButtonStyle.primary, label=doubt.button, custom_id=doubt.resend_data
            )
        )
        self.doubt = doubt

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ResendButton:
        return cls(Doubtful(int(match["turn"])))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        kindred = kindred_of(interaction.client)
        person, channel_id = user_key(interaction.user.id), interaction.channel_id
        if channel_id is None:
            return
        if not kindred.services.access.may_talk(person, *places(interaction.guild_id)):
            await interaction.response.send_message(NOT_ALLOWED, ephemeral=True)
            return
        doubts, chat_id = kindred.services.conversation.doubts, chat_key(channel_id)
        turn_id = self.doubt.turn_id
        text = await doubts.resend(PLATFORM, chat_id, turn_id, person)
        if text is None:
            await interaction.response.send_message(NOTHING_TO_SEND, ephemeral=True)
            return
        await shown(interaction.response.send_message(SENT_AGAIN, ephemeral=True))
        channel = interaction.client.get_partial_messageable(channel_id, guild_id=interaction.guild_id)
        timeout_s = kindred.options.request_timeout_s
        key = f"{chat_id}:{self.doubt.resend_data}"  # the nonces of its copy's messages
        sent: list[str] = []
        try:
            for number, piece in enumerate(split_text(text, MESSAGE_LIMIT)):
                async with discord_call(timeout_s):
                    message = await channel.send(piece, nonce=nonce_for(key, number))
                sent.append(str(message.id))
        except NotShown as exc:
            # Settled as sent again all the same: a second press must never show it twice.
            log.warning("discord: a reply asked for again did not show: %s", exc)
        await doubts.resent(PLATFORM, chat_id, sent, turn_id, person)


async def tell_doubt(
    channel: discord.abc.Messageable, doubt: Doubtful, *, key: str, timeout_s: float = REQUEST_TIMEOUT_S
) -> None:
    """The notice, once, before the answer to the person's message `key`. A notice that does not
    show costs the answer nothing."""
    view = discord.ui.View(timeout=None)
    view.add_item(ResendButton(doubt))
    await shown(channel.send(doubt.text, view=view, nonce=nonce_for(f"{key}:doubt", 0)), timeout_s=timeout_s)
