"""What every Discord command shares: the feature it belongs to, the ephemeral answer of any
length, and the chat it was used in."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import discord

from bot.adapters.discord.options import MESSAGE_LIMIT
from bot.adapters.discord.policy import chat_key
from bot.adapters.streaming import split_text
from bot.core.memory.controls import COMMANDS

Interaction = discord.Interaction[Any]
Callback = Callable[..., Coroutine[Any, Any, None]]
# (name, description, callback): one slash command as the tree registers it.
SlashCommand = tuple[str, str, Callback]
Button = type[discord.ui.DynamicItem[Any]]
DESCRIPTIONS = {command.name: command.description for command in COMMANDS}


def described(name: str, callback: Callback) -> SlashCommand:
    """A command every platform has, described as the core describes it."""
    return name, DESCRIPTIONS[name], callback


@dataclass(frozen=True, slots=True)
class Feature:
    """One feature's slash commands and the buttons its answers carry: all it registers."""

    commands: tuple[SlashCommand, ...]
    buttons: tuple[Button, ...] = ()


async def reply_text(interaction: Interaction, text: str) -> None:
    """An ephemeral answer of any length: Discord takes 2,000 characters a message."""
    first, *rest = split_text(text, MESSAGE_LIMIT)
    await interaction.response.send_message(first, ephemeral=True)
    for piece in rest:
        await interaction.followup.send(piece, ephemeral=True)


def chat_of(interaction: Interaction) -> str:
    """The chat a slash command was used in, keyed as its messages are (a DM is the person's)."""
    return chat_key(interaction.channel_id or interaction.user.id)
