"""Reactions on Kindred's replies, and the 👍/👎 buttons where reactions cannot reach it, become
feedback on the stored reply turn. The core keeps one record per (turn, person, source)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Literal

import discord

from bot.adapters.discord.context import Kindred, kindred_of
from bot.adapters.discord.policy import PLATFORM, chat_key, places, user_key
from bot.core.events import MessageReaction, ReactionResult

VOTES = {"up": "👍", "down": "👎"}
THANKS = "Thanks, noted {emoji}. It helps me learn what helps you."
# A reaction on a reply still being written waits at most this long for the reply to be stored.
LINK_WAIT_S = 300.0
NOT_A_REPLY = "I can't match that button to a reply I keep anymore."

Button = discord.ui.Button[discord.ui.View]


async def record(
    kindred: Kindred,
    *,
    channel_id: int,
    message_id: int,
    user_id: int,
    guild_id: int | None,
    emoji: str | None,
    source: Literal["reaction", "button"],
    removed_emoji: str | None = None,
) -> ReactionResult:
    """Hand one reaction (emoji None: taken away) to the core, if the person may talk to Kindred."""
    person = user_key(user_id)
    if not kindred.services.access.may_talk(person, *places(guild_id)):
        return ReactionResult("ignored")
    event = MessageReaction(
        platform=PLATFORM,
        chat_id=chat_key(channel_id),
        message_id=str(message_id),
        user_id=person,
        emoji=emoji,
        sent_at=datetime.now(UTC),
        source=source,
        # Discord adds and removes one emoji at a time; a button vote replaces the last one.
        additive=source == "reaction",
        removed_emoji=removed_emoji,
    )
    return await kindred.services.conversation.handle_message_reaction(event)


async def reaction_event(
    kindred: Kindred, me_id: int, payload: discord.RawReactionActionEvent
) -> ReactionResult | None:
    """A raw reaction add/remove. Kindred's own reactions are not feedback; messages that are not
    its replies come back `unknown` from the core and change nothing."""
    if payload.user_id == me_id:
        return None
    await kindred.unlinked.wait(str(payload.message_id), LINK_WAIT_S)
    added = payload.event_type == "REACTION_ADD"
    return await record(
        kindred,
        channel_id=payload.channel_id,
        message_id=payload.message_id,
        user_id=payload.user_id,
        guild_id=payload.guild_id,
        # Custom server emoji read as <:name:id>; the core ignores what it has no value for.
        emoji=str(payload.emoji) if added else None,
        source="reaction",
        removed_emoji=None if added else str(payload.emoji),
    )


class FeedbackButton(discord.ui.DynamicItem[Button], template=r"kindred:feedback:(?P<vote>up|down)"):
    """👍 or 👎 under a reply. Its state lives in the custom id, so it works after a restart."""

    def __init__(self, vote: str) -> None:
        super().__init__(
            discord.ui.Button(
                style=discord.ButtonStyle.secondary, emoji=VOTES[vote], custom_id=f"kindred:feedback:{vote}"
            )
        )
        self.vote = vote

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> FeedbackButton:
        return cls(match["vote"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        message = interaction.message
        result = ReactionResult("unknown")
        if message is not None and interaction.channel_id is not None:
            result = await record(
                kindred_of(interaction.client),
                channel_id=interaction.channel_id,
                message_id=message.id,
                user_id=interaction.user.id,
                guild_id=interaction.guild_id,
                emoji=VOTES[self.vote],
                source="button",
            )
        text = THANKS.format(emoji=VOTES[self.vote]) if result.status == "recorded" else NOT_A_REPLY
        await interaction.response.send_message(text, ephemeral=True)


def feedback_view() -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for vote in VOTES:
        view.add_item(FeedbackButton(vote))
    return view
