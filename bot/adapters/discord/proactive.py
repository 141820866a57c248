"""/proactive and /reminders on Discord: the core's ProactiveCommands, answered ephemerally."""

from __future__ import annotations

from typing import Any, Literal

import discord
from discord import app_commands

from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.options import MESSAGE_LIMIT
from bot.adapters.discord.policy import user_key
from bot.adapters.streaming import split_text
from bot.core.proactive.commands import PROACTIVE_NOT_WIRED

Interaction = discord.Interaction[Any]


async def _answer(interaction: Interaction, text: str) -> None:
    first, *rest = split_text(text, MESSAGE_LIMIT)
    await interaction.response.send_message(first, ephemeral=True)
    for piece in rest:
        await interaction.followup.send(piece, ephemeral=True)


@app_commands.describe(
    setting="on, off, timezone Europe/Berlin, quiet 22-7, never habits, allow habits (empty: your settings)"
)
async def proactive(interaction: Interaction, setting: str = "") -> None:
    commands = kindred_of(interaction.client).services.proactive
    if commands is None:
        await _answer(interaction, PROACTIVE_NOT_WIRED)
        return
    await _answer(interaction, await commands.proactive(user_key(interaction.user.id), setting))


@app_commands.describe(action="cancel: cancel the reminder numbered", number="the reminder's number")
async def reminders(
    interaction: Interaction, action: Literal["list", "cancel"] = "list", number: int | None = None
) -> None:
    commands = kindred_of(interaction.client).services.proactive
    if commands is None:
        await _answer(interaction, PROACTIVE_NOT_WIRED)
        return
    argument = "" if action == "list" else f"cancel {'' if number is None else number}"
    await _answer(interaction, await commands.reminders(user_key(interaction.user.id), argument))
