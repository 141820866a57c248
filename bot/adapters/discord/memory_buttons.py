"""The buttons of /memories (◀ ▶ pages) and /forget all (confirm). Each carries its state in its
custom id and acts only on the data of the person who presses it."""

from __future__ import annotations

import re
from typing import Any

import discord

from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.policy import user_key
from bot.core.memory.controls import MemoryPage

Button = discord.ui.Button[discord.ui.View]


class MemoryPageButton(discord.ui.DynamicItem[Button], template=r"kindred:memories:(?P<page>[0-9]{1,6})"):
    def __init__(self, page: int, label: str) -> None:
        super().__init__(
            discord.ui.Button(
                style=discord.ButtonStyle.secondary, label=label, custom_id=f"kindred:memories:{page}"
            )
        )
        self.page = page

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> MemoryPageButton:
        return cls(int(match["page"]), "")

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        controls = kindred_of(interaction.client).services.controls
        page = await controls.memories_page(user_key(interaction.user.id), self.page)
        await interaction.response.edit_message(content=page.render(), view=pager(page))


def pager(page: MemoryPage) -> discord.ui.View:
    """◀ and ▶ for the pages that exist; an empty view when there is only one page."""
    view = discord.ui.View(timeout=None)
    if page.has_previous:
        view.add_item(MemoryPageButton(page.page - 1, "◀ Newer"))
    if page.has_next:
        view.add_item(MemoryPageButton(page.page + 1, "Older ▶"))
    return view


class ForgetAllButton(discord.ui.DynamicItem[Button], template=r"kindred:forget-all"):
    def __init__(self) -> None:
        super().__init__(
            discord.ui.Button(
                style=discord.ButtonStyle.danger, label="Forget everything", custom_id="kindred:forget-all"
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ForgetAllButton:
        return cls()

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        controls = kindred_of(interaction.client).services.controls
        text = await controls.forget_all(user_key(interaction.user.id))
        await interaction.response.edit_message(content=text, view=None)


def forget_all_view() -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(ForgetAllButton())
    return view
