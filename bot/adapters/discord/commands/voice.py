"""/voice: whether a person's replies also come as audio attachments (on, off, or which it is)."""

from __future__ import annotations

from typing import Literal

from discord import app_commands

from bot.adapters.discord.commands.interaction import Feature, Interaction, described, reply_text
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.policy import user_key
from bot.core.chat.spoken import NO_BACKEND


@app_commands.describe(spoken="on: each reply comes as text, then as audio; off: text only")
async def voice(interaction: Interaction, spoken: Literal["on", "off"] | None = None) -> None:
    replies = kindred_of(interaction.client).services.spoken
    if replies is None:
        await reply_text(interaction, NO_BACKEND)
        return
    await reply_text(interaction, await replies.command(user_key(interaction.user.id), spoken or ""))


VOICE = Feature(commands=(described("voice", voice),))
