"""/settings on Discord: a person's choices in an ephemeral message, a select menu for each
setting (five to a message, as Discord allows; more follow). A choice applies through the command
that sets it and the message shows the settings anew. `/settings link:web` gives the signed link
to the same page in a DM. In a server the persona is the channel's, changed only by members
Discord lets manage the server, as /persona checks."""

from __future__ import annotations

import re
from typing import Any, Literal

import discord
from discord import app_commands

from bot.adapters.discord.commands.interaction import Feature, Interaction, chat_of, described
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.options import MESSAGE_LIMIT
from bot.adapters.discord.policy import user_key
from bot.core.settings import RowView, Who

Select = discord.ui.Select[discord.ui.View]
# Discord shows at most five action rows in a message, and a select menu fills one.
PER_MESSAGE = 5
MORE = "More settings:"


def who_of(interaction: Interaction) -> Who:
    private = bool(interaction.context.dm_channel)
    may_change = private or interaction.guild_id is None or interaction.permissions.manage_guild
    # An ephemeral answer is read by the person alone, wherever it is used.
    return Who(user_key(interaction.user.id), chat_of(interaction), private, True, may_change)


class SettingSelect(discord.ui.DynamicItem[Select], template=r"kindred:settings:(?P<key>[a-z_]{1,20})"):
    def __init__(self, key: str, row: RowView | None = None) -> None:
        options = [discord.SelectOption(label="-")]
        if row is not None and row.choices:
            options = [
                discord.SelectOption(label=c.label[:100], value=c.value, default=c.value == row.current)
                for c in row.choices
            ]
        placeholder = f"{row.name}: {row.value}"[:150] if row else None
        menu: Select = discord.ui.Select(
            custom_id=f"kindred:settings:{key}", placeholder=placeholder, options=options
        )
        super().__init__(menu)
        self.key = key

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> SettingSelect:
        return cls(match["key"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        values = self.item.values  # what the person picked, read from the interaction
        screen = kindred_of(interaction.client).services.settings()
        who = who_of(interaction)
        answer = await screen.choose(who, self.key, str(values[0]) if values else "")
        parts = chunks(await screen.views(who))
        part = next((i for i, chunk in enumerate(parts) if any(v.key == self.key for v in chunk)), 0)
        content = await screen.text(who, answer) if part == 0 else f"{answer}\n\n{MORE}"
        shown = parts[part] if parts else []
        await interaction.response.edit_message(content=content[:MESSAGE_LIMIT], view=menus(shown))


def chunks(views: list[RowView]) -> list[list[RowView]]:
    """The rows that have choices, five to a message."""
    chosen = [view for view in views if view.choices]
    return [chosen[i : i + PER_MESSAGE] for i in range(0, len(chosen), PER_MESSAGE)]


def menus(views: list[RowView]) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for row in views:
        view.add_item(SettingSelect(row.key, row))
    return view


@app_commands.describe(link="web: a link to the same settings as a web page, for you alone")
async def settings(interaction: Interaction, link: Literal["web"] | None = None) -> None:
    screen = kindred_of(interaction.client).services.settings()
    who = who_of(interaction)
    if link == "web":
        # No embed: Discord's servers would fetch the person's page to draw one.
        await interaction.response.send_message(screen.web_link(who), ephemeral=True, suppress_embeds=True)
        return
    parts = chunks(await screen.views(who))
    text = (await screen.text(who))[:MESSAGE_LIMIT]
    await interaction.response.send_message(text, view=menus(parts[0] if parts else []), ephemeral=True)
    for part in parts[1:]:
        await interaction.followup.send(MORE, view=menus(part), ephemeral=True)


SETTINGS = Feature(commands=(described("settings", settings),), buttons=(SettingSelect,))
