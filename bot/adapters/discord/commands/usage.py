"""/usage: what the person used today and this month (the numbers `kindred usage` prints)."""

from __future__ import annotations

from bot.adapters.discord.commands.interaction import Feature, Interaction, described, reply_text
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.policy import user_key


async def usage(interaction: Interaction) -> None:
    report = kindred_of(interaction.client).services.conversation.usage_report
    await reply_text(interaction, await report.command(user_key(interaction.user.id)))


USAGE = Feature(commands=(described("usage", usage),))
