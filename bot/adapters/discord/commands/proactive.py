"""/proactive and /reminders on Discord: the core's ProactiveCommands, answered ephemerally; and the
"don't suggest this again" button under a proactive message (messenger.py sends it)."""

from __future__ import annotations

import re
from typing import Any, Literal

import discord
from discord import app_commands

from bot.adapters.discord.commands.interaction import Feature, Interaction, described, reply_text
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.messenger import NEVER_AGAIN_ID, PLATFORM
from bot.adapters.discord.policy import chat_key, user_key
from bot.adapters.gates import proactive_of
from bot.core.proactive.commands import PROACTIVE_NOT_WIRED


@app_commands.describe(
    setting="on, off, timezone Europe/Berlin, quiet 22-7, never habits, allow habits (empty: your settings)"
)
async def proactive(interaction: Interaction, setting: str = "") -> None:
    commands = proactive_of(kindred_of(interaction.client).services)
    if isinstance(commands, str):
        await reply_text(interaction, commands)
        return
    await reply_text(interaction, await commands.proactive(user_key(interaction.user.id), setting))


@app_commands.describe(action="cancel: cancel the reminder numbered", number="the reminder's number")
async def reminders(
    interaction: Interaction, action: Literal["list", "cancel"] = "list", number: int | None = None
) -> None:
    commands = proactive_of(kindred_of(interaction.client).services)
    if isinstance(commands, str):
        await reply_text(interaction, commands)
        return
    argument = "" if action == "list" else f"cancel {'' if number is None else number}"
    await reply_text(interaction, await commands.reminders(user_key(interaction.user.id), argument))


class NeverAgainButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=NEVER_AGAIN_ID):
    """Its message finds its ledger row (through the message's link to its turn), so the button
    needs no state of its own and works after a restart, whichever process sent it."""

    def __init__(self) -> None:
        super().__init__(discord.ui.Button(custom_id=NEVER_AGAIN_ID))

    @classmethod
    async def from_custom_id(
        cls, interaction: Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> NeverAgainButton:
        return cls()

    async def callback(self, interaction: Interaction) -> None:
        replies = kindred_of(interaction.client).services.conversation.proactive
        message, channel = interaction.message, interaction.channel_id
        if replies is None or message is None or channel is None:
            await reply_text(interaction, PROACTIVE_NOT_WIRED)
            return
        person = user_key(interaction.user.id)
        await reply_text(
            interaction, await replies.never_again_on(PLATFORM, chat_key(channel), str(message.id), person)
        )


PROACTIVE = Feature(
    commands=(described("proactive", proactive), described("reminders", reminders)),
    buttons=(NeverAgainButton,),
)
