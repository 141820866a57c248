"""The slash commands, as one command tree, and the buttons their answers carry: one module per
feature, each declaring its own. /chat (chat.py); /persona (persona.py); /model (model.py);
/memories, /forget, /confirm, /correct and /export (memory.py); /privacy with its `training`
switch; /voice; /usage; /settings with its select menus; /app and /apps (miniapps.py); /proactive
and /reminders; /help; and the
admins' /train_now, /rollback and /canary (learning.py). Each is a thin translation to the core."""

from __future__ import annotations

import logging

import discord
from discord import app_commands

from bot.adapters.delivery import SORRY
from bot.adapters.discord.commands.chat import CHAT
from bot.adapters.discord.commands.interaction import (
    Button,
    Feature,
    Interaction,
    SlashCommand,
    described,
    reply_text,
)
from bot.adapters.discord.commands.learning import LEARNING
from bot.adapters.discord.commands.memory import MEMORY
from bot.adapters.discord.commands.miniapps import MINIAPPS
from bot.adapters.discord.commands.model import MODEL
from bot.adapters.discord.commands.persona import PERSONA
from bot.adapters.discord.commands.privacy import PRIVACY
from bot.adapters.discord.commands.proactive import PROACTIVE
from bot.adapters.discord.commands.settings import SETTINGS
from bot.adapters.discord.commands.usage import USAGE
from bot.adapters.discord.commands.voice import VOICE

log = logging.getLogger(__name__)


async def help_(interaction: Interaction) -> None:
    lines = [f"/{name} — {description}" for name, description, _ in command_table()]
    intro = "I'm a companion that remembers what you tell me. DM me, mention me, or use /chat."
    reactions = "React to my replies (👍 👎 ❤️) to tell me what helped."
    await reply_text(interaction, "\n".join([intro, reactions, "", *lines]))


HELP = Feature(commands=(described("help", help_),))
# In the order /help lists them.
FEATURES = (
    CHAT, MEMORY, PERSONA, MODEL, PRIVACY, VOICE, USAGE, SETTINGS, MINIAPPS, PROACTIVE, HELP, LEARNING,
)  # fmt: skip
# What client.py registers as persistent buttons, so that a press works after a restart.
BUTTONS: tuple[Button, ...] = tuple(button for feature in FEATURES for button in feature.buttons)


def command_table() -> list[SlashCommand]:
    return [command for feature in FEATURES for command in feature.commands]


async def on_command_error(interaction: Interaction, error: app_commands.AppCommandError) -> None:
    log.error("/%s failed", interaction.command.name if interaction.command else "?", exc_info=error)
    if interaction.response.is_done():
        await interaction.followup.send(SORRY, ephemeral=True)
    else:
        await interaction.response.send_message(SORRY, ephemeral=True)


def command_tree(client: discord.Client) -> app_commands.CommandTree[discord.Client]:
    """Every command, usable in servers, in DMs with Kindred and, when a person installs the app to
    their account, in any other chat."""
    tree = app_commands.CommandTree(
        client,
        allowed_contexts=app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=True),
        allowed_installs=app_commands.AppInstallationType(guild=True, user=True),
    )
    for name, description, callback in command_table():
        tree.add_command(app_commands.Command(name=name, description=description, callback=callback))
    tree.error(on_command_error)
    return tree
