"""/memories, /forget, /confirm, /correct and /export, thin translations to the core's Controls;
and their buttons, /memories' ◀ ▶ pages and /forget all's confirm. Each button carries its state in
its custom id and acts only on the data of the person who presses it."""

from __future__ import annotations

import gzip
import io
import re
from typing import Any

import discord
from discord import app_commands

from bot.adapters.discord.commands.interaction import Feature, Interaction, chat_of, described, reply_text
from bot.adapters.discord.context import kindred_of
from bot.adapters.discord.policy import user_key
from bot.core.errors import InvalidInput
from bot.core.memory.controls import FORGET_ALL_ASK, MemoryPage

Button = discord.ui.Button[discord.ui.View]
EXPORT_NAME = "kindred-memories.jsonl"
NOTHING_TO_EXPORT = "I don't keep any memories of yours yet, so there is nothing to export."
TOO_BIG = "Your export is larger than Discord lets me send here. Ask my admin for `kindred memory export`."


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


async def memories(interaction: Interaction) -> None:
    controls = kindred_of(interaction.client).services.controls
    page = await controls.memories_page(user_key(interaction.user.id), 1, chat_id=chat_of(interaction))
    await interaction.response.send_message(page.render(), view=pager(page), ephemeral=True)


@app_commands.describe(memory="the memory's number from /memories, or all")
async def forget(interaction: Interaction, memory: str) -> None:
    user_id = user_key(interaction.user.id)
    if memory.strip().lower() == "all":
        await interaction.response.send_message(FORGET_ALL_ASK, view=forget_all_view(), ephemeral=True)
        return
    controls = kindred_of(interaction.client).services.controls
    answer = await controls.forget_one(user_id, memory, chat_id=chat_of(interaction))
    await interaction.response.send_message(answer, ephemeral=True)


# Like /forget, open to everyone the allowlist keeps out: a person may always manage what is kept.
@app_commands.describe(memory="the memory's number from /memories")
async def confirm(interaction: Interaction, memory: str) -> None:
    controls = kindred_of(interaction.client).services.controls
    answer = await controls.confirm(user_key(interaction.user.id), memory, chat_id=chat_of(interaction))
    await interaction.response.send_message(answer, ephemeral=True)


@app_commands.describe(memory="the memory's number from /memories", text="what is true now")
async def correct(interaction: Interaction, memory: str, text: str) -> None:
    controls = kindred_of(interaction.client).services.controls
    # Controls reads "ID text": a memory option with a space in it ("5 6") must not lend "6" to the text.
    number = memory.strip() if len(memory.split()) == 1 else "?"
    answer = await controls.correct(
        user_key(interaction.user.id), f"{number} {text}", chat_id=chat_of(interaction)
    )
    await reply_text(interaction, answer)


async def export(interaction: Interaction) -> None:
    """The file fills the deferred answer: an edit, which discord.py may repeat without showing it
    twice (a follow-up would be a new message each time)."""
    await interaction.response.defer(ephemeral=True, thinking=True)
    controls = kindred_of(interaction.client).services.controls
    try:
        data = await controls.export_jsonl(user_key(interaction.user.id), chat_id=chat_of(interaction))
    except InvalidInput as too_big:
        await interaction.edit_original_response(content=str(too_big))
        return
    if not data:
        await interaction.edit_original_response(content=NOTHING_TO_EXPORT)
        return
    name = EXPORT_NAME
    if len(data) > interaction.filesize_limit:
        data, name = gzip.compress(data), EXPORT_NAME + ".gz"
    if len(data) > interaction.filesize_limit:
        await interaction.edit_original_response(content=TOO_BIG)
        return
    file = discord.File(io.BytesIO(data), filename=name)
    await interaction.edit_original_response(content="Everything I keep about you:", attachments=[file])


MEMORY = Feature(
    commands=(
        described("memories", memories),
        described("forget", forget),
        described("confirm", confirm),
        described("correct", correct),
        described("export", export),
    ),
    buttons=(MemoryPageButton, ForgetAllButton),
)
