"""/privacy: what is kept and why, with its `training` switch for whether rated replies train."""

from __future__ import annotations

from typing import Literal

from discord import app_commands

from bot.adapters.discord.commands.interaction import Feature, Interaction, described, reply_text
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.policy import user_key


@app_commands.describe(training="on: your rated replies help me improve at night; off: they never do")
async def privacy(interaction: Interaction, training: Literal["on", "off"] | None = None) -> None:
    controls = kindred_of(interaction.client).services.controls
    argument = f"training {training}" if training else ""
    await reply_text(interaction, await controls.privacy(user_key(interaction.user.id), argument))


PRIVACY = Feature(commands=(described("privacy", privacy),))
